import pytest

from gacc_hf.methods.registry import known, resolve
from gacc_hf.methods.rules import FieldsReader, GoalLinesCompressor, TruncateCompressor
from gacc_hf.protocol import CompressorInput, ReaderInput
from gacc_hf.tokenizer import get_codec
from tests.helpers.counting_codec import CountingCodec

DOC = "Title line\nOwner team: payments\nReplica count: 12\nDeploy region: eu-west-1\nClosing remark."


def test_truncate():
    out = TruncateCompressor()(CompressorInput(DOC, "", 5))
    assert DOC.startswith(out) and len(get_codec().encode(out)) == 5


def test_goal_lines_keeps_matching_lines_in_source_order_within_budget():
    out = GoalLinesCompressor()(CompressorInput(DOC, "which region and how many replica pods?", 100))
    assert out == "Replica count: 12\nDeploy region: eu-west-1"
    tight = GoalLinesCompressor()(CompressorInput(DOC, "replica region", 7))
    assert tight == "Replica count: 12" and len(get_codec().encode(tight)) <= 7


ONE_LINE = "The office moves on Monday. Movers pack four boxes per person. Old badges stop working on 4 October."
ONE_LINE_ZH = "办公室周一搬迁。搬家公司为每人打包最多四个箱子。旧工牌十月四日停用。"


@pytest.mark.parametrize(
    ("text", "goal", "kept"),
    [
        (ONE_LINE, "how many boxes can I pack?", "Movers pack four boxes per person."),
        (ONE_LINE_ZH, "打包几个箱子", "搬家公司为每人打包最多四个箱子。"),
    ],
)
def test_goal_lines_packs_text_without_line_breaks_by_sentence(text, goal, kept):
    codec = get_codec()
    budget = len(codec.encode(kept + "\n")) + 2  # room for the matching sentence, not for the whole line
    assert len(codec.encode(text)) > budget
    assert GoalLinesCompressor()(CompressorInput(text, goal, budget)) == kept


def test_goal_lines_keeps_the_head_of_a_sentence_longer_than_the_budget():
    sentence = "Movers pack four boxes per person and label every box with its owner's name and desk number"
    out = GoalLinesCompressor()(CompressorInput(sentence, "label the boxes", 6))
    assert out and sentence.startswith(out) and len(get_codec().encode(out)) == 6


def test_goal_lines_without_goal_falls_back_to_head():
    out = GoalLinesCompressor()(CompressorInput(DOC, "", 8))
    assert DOC.startswith(out) and out.startswith("Title line")


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What is the replica count?", "12"),
        ("Which deploy region is used?", "eu-west-1"),
        ("What is the owner team?", "payments"),
        ("What is the budget?", "unknown"),
    ],
)
def test_fields_reader(question, answer):
    assert FieldsReader()(ReaderInput(DOC, question)) == answer


def test_registry_resolves_names_and_passes_callables():
    assert isinstance(resolve("compressor", "goal-lines"), GoalLinesCompressor)
    fn = lambda item: ""  # noqa: E731
    assert resolve("reader", fn) is fn
    assert {"exact", "contains", "f1"} <= set(known("judge"))
    with pytest.raises(ValueError, match=r"known readers: .*fields"):
        resolve("reader", "oracle")
    with pytest.raises(ValueError, match="unknown role"):
        resolve("critic", "exact")  # type: ignore[arg-type]


EN_SOURCE = "Owner: Mei Tanaka\nRegion: eu-west-1\nThe pager fired twice.\nTimeout: 300 ms\nNo data was lost."
ZH_SOURCE = "负责人：张伟\n地区：华东\n告警触发了两次。没有数据丢失。\n超时：300毫秒"


@pytest.mark.parametrize(
    ("source", "goals", "parts"),
    [(EN_SOURCE, ["the owner and region", "timeout", ""], 5), (ZH_SOURCE, ["负责人和地区", "超时", ""], 5)],
    ids=["en", "zh"],
)
def test_a_source_is_encoded_and_split_once_for_all_its_goals_and_budgets(source, goals, parts, monkeypatch):
    from gacc_hf.methods import rules

    counting = CountingCodec()
    monkeypatch.setattr(rules, "get_codec", lambda: counting)
    rules._lines.cache_clear()
    rules._tokens.cache_clear()
    outputs = [GoalLinesCompressor()(CompressorInput(source, goal, budget)) for goal in goals for budget in (20, 40)]
    # 5 parts: the English lines; the Chinese lines with the third cut at its two sentence ends
    assert len(counting.encoded) == parts
    assert outputs[2] == ("Timeout: 300 ms" if source == EN_SOURCE else "超时：300毫秒")
    for goal in goals:
        for budget in (3, 20):
            TruncateCompressor()(CompressorInput(source, goal, budget))
    assert counting.encoded[parts:] == [source]


def test_a_line_longer_than_the_budget_is_cut_into_sentences_once():
    from gacc_hf.methods import rules

    rules._sentences.cache_clear()
    long_line = "The disk filled at noon. The pager fired twice. Nobody answered it."
    for goal in ("disk", "pager", "nobody"):
        GoalLinesCompressor()(CompressorInput(long_line, goal, 8))
    assert rules._sentences.cache_info().misses == 1
    kept = [GoalLinesCompressor()(CompressorInput(long_line, goal, 8)) for goal in ("disk", "pager")]
    assert kept == ["The disk filled at noon.", "The pager fired twice."]
