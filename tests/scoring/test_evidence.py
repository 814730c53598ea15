"""Evidence recall against hand counts, and the oracle ceiling built on the judge side only."""

from __future__ import annotations

from gacc_hf import run_benchmark
from gacc_hf.budget import token_budget
from gacc_hf.data.jsonl import read_rows
from gacc_hf.data.schema import Question, validate
from gacc_hf.protocol import CompressorInput, JudgeInput, ReaderInput
from gacc_hf.scoring.evidence import evidence_flags, oracle_memory, oracle_text
from gacc_hf.text.sentences import split_sentences
from gacc_hf.tokenizer import get_codec
from tests.helpers.paths import FIXTURES
from tests.helpers.runs import rules_run

CONTEXT = "The pool held 25 workers. The disk filled at 09:41.\nNothing else happened. A blue-green deploy followed."
FIRST = "The pool held 25 workers."


def _row(goal_id, goal, questions):
    return {
        "context_id": "c1",
        "source": "test",
        "context": CONTEXT,
        "goal_id": goal_id,
        "goal": goal,
        "questions": [{"question_id": f"{goal_id}/{i}", "question": q} for i, (q, _) in enumerate(questions)],
        "gold": [{"question_id": f"{goal_id}/{i}", "references": refs} for i, (_, refs) in enumerate(questions)],
    }


ROWS = [
    _row(
        "a",
        "capacity and timing",
        [
            ("How many workers?", ["25 workers", "twenty-five workers"]),
            ("When did the disk fill?", ["09:41"]),
            ("What colour was the car?", ["red"]),  # not in the source: evidence can never survive
        ],
    ),
    _row("b", "storage", [("What filled?", ["the disk"])]),
]


def test_evidence_flags_hand_count():
    qs = [Question("1", "?", ("25 workers",)), Question("2", "?", ("09:41",)), Question("3", "?", ("5 workers",))]
    assert evidence_flags(FIRST, qs) == [True, False, False]  # "5 workers" is not word-bounded in "25 workers"
    assert evidence_flags("THE POOL HELD 25 WORKERS", qs) == [True, False, False]  # normalised as the judges do
    assert evidence_flags(CONTEXT, qs) == [True, True, False]


def test_evidence_recall_per_cell_equals_a_hand_count():
    def first_sentence(item: CompressorInput) -> str:
        return FIRST

    result = rules_run(ROWS, compressor=first_sentence, ratios=[1.0], conditions=["own", "full"], n_bootstrap=0)
    cells = {s["condition"]: s for s in result.scores}
    # own: goal a keeps q0 only (1 of 3), goal b keeps nothing (0 of 1): 1/4 questions, no goal complete
    assert cells["own"]["evidence_micro"] == 1 / 4 and cells["own"]["evidence_macro"] == 0
    # full: goal a has q0, q1 (q2's "red" is nowhere), goal b has q0: 3/4 questions, goal b complete
    assert cells["full"]["evidence_micro"] == 3 / 4 and cells["full"]["evidence_macro"] == 1 / 2
    hits = {(m["condition"], m["goal_id"]): m["evidence_hits"] for m in result.memories}
    assert hits == {("own", "a"): 1, ("own", "b"): 0, ("full", "a"): 2, ("full", "b"): 1}
    assert [a["evidence"] for a in result.answers if a["condition"] == "own"] == [True, False, False, False]


def test_oracle_memory_is_the_evidence_sentences_in_source_order_cut_to_l():
    qs = [Question("2", "?", ("09:41",)), Question("1", "?", ("25 workers",))]
    assert oracle_text(CONTEXT, qs) == "The pool held 25 workers.\nThe disk filled at 09:41."
    cut = oracle_memory(CONTEXT, qs, 3)
    assert cut.text == "The pool held" and cut.reencoded_tokens <= 3 and cut.truncated


def test_oracle_never_reaches_a_compressor_and_gold_only_the_judge():
    seen: dict[str, list] = {"compressor": [], "reader": [], "judge": []}

    def compressor(item):
        seen["compressor"].append(item)
        return item.context

    def reader(item):
        seen["reader"].append(item)
        return "25 workers"

    def judge(item):
        seen["judge"].append(item)
        return "25 workers" in item.references

    result = run_benchmark(
        ROWS, compressor=compressor, reader=reader, judge=judge, ratios=[0.5, 1.0],
        conditions=["own", "oracle"], progress=False, n_bootstrap=0,
    )  # fmt: skip
    oracle_texts = {m["memory"] for m in result.memories if m["condition"] == "oracle"}
    assert oracle_texts and all(m["compressor_called"] is False for m in result.memories if m["ceiling"])
    # the compressor was called for the own memories only, with the source and the goal: never an oracle text
    assert len(seen["compressor"]) == 2 * 2
    assert all(type(i) is CompressorInput and i.context == CONTEXT for i in seen["compressor"])
    assert not {i.goal for i in seen["compressor"]} & oracle_texts
    assert all(type(i) is ReaderInput for i in seen["reader"])
    assert all(type(i) is JudgeInput and i.references for i in seen["judge"])
    oracle_cells = [s for s in result.scores if s["condition"] == "oracle"]
    assert oracle_cells and all(s["ceiling"] and s["compressor"] == "oracle" for s in oracle_cells)
    assert not any(s["ceiling"] for s in result.scores if s["condition"] == "own")
    assert result.integrity == {"budget_violations": 0, "count_errors": 0, "exposures": 0}


ZH_FIXTURE = FIXTURES / "zh_fixture.jsonl"


def test_chinese_fixture_whole_source_recall_is_one_and_the_oracle_is_chinese_sentences():
    groups = validate(read_rows(ZH_FIXTURE))
    codec = get_codec()
    for g in groups:
        assert evidence_flags(g.context, g.questions) == [True] * len(g.questions)
        sentences = oracle_text(g.context, g.questions).split("\n")
        assert all(s in split_sentences(g.context) and len(s) < 120 for s in sentences)  # sentences, not paragraphs
        memory = oracle_memory(g.context, g.questions, token_budget(len(codec.encode(g.context)), 0.2)).text
        assert memory and any(evidence_flags(memory, g.questions))


def test_a_paragraph_longer_than_the_budget_still_gives_its_fitting_evidence_sentence():
    paragraph = "日志按小时切成 gzip 文件，存放在原始目录下，每个文件大约八百兆字节，由采集服务每小时上传一次。" * 4
    context = paragraph + "转换时设置 num_proc=8。" + paragraph
    q = Question("q", "并行参数是什么？", ("num_proc=8",))
    budget = 20
    assert len(get_codec().encode(paragraph)) > budget
    assert oracle_memory(context, [q], budget).text == "转换时设置 num_proc=8。"


def test_evidence_of_a_sign_operator_or_symbol_is_not_found_in_a_text_without_it():
    for memory, missing, present in [
        ("The service is written in C#.", "C++", "C#"),
        ("服务用C#写成。", "C++", "C#"),
        ("It was -40 °C at night.", "40 °C", "-40 °C"),
        ("夜里气温-40°C。", "40°C", "-40°C"),
        ("The guard is x != y.", "x == y", "x != y"),
    ]:
        qs = [Question("1", "?", (missing,)), Question("2", "?", (present,))]
        assert evidence_flags(memory, qs) == [False, True], memory


def test_format_characters_in_a_source_or_a_reference_never_hide_evidence():
    qs = [Question("1", "?", ("25 workers",)), Question("2", "?", ("数据集",)), Question("3", "?", ("09:\u200b41",))]
    assert evidence_flags("The pool held 2\u200b5 wor\u00adkers at 09:41.", qs) == [True, False, True]
    assert evidence_flags("加载数\u200d据集时，\u202e时间是 09:41\u202c。", qs) == [False, True, True]


def test_the_oracle_keeps_the_sentence_with_the_sign_and_not_the_one_without():
    context = "At noon it was 40 °C. At night it was -40 °C. Nothing else happened."
    assert oracle_text(context, [Question("1", "?", ("-40 °C",))]) == "At night it was -40 °C."
    assert oracle_text(context, [Question("1", "?", ("40 °C",))]) == "At noon it was 40 °C."
