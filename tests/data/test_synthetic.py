import hashlib
import json
import re

import pytest

from gacc_hf.data.schema import find_problems, validate
from gacc_hf.data.synthetic import KINDS, ZH_KINDS, synthetic, synthetic_rows
from gacc_hf.tokenizer import get_codec


def test_same_seed_same_rows_and_other_seed_differs():
    assert synthetic_rows(seed=3, contexts=5) == synthetic_rows(seed=3, contexts=5)
    assert synthetic_rows(seed=3, contexts=5) != synthetic_rows(seed=4, contexts=5)


def test_rows_are_valid_and_gold_is_the_field_value():
    rows = synthetic_rows(seed=1, contexts=40, goals_per_context=3, questions_per_goal=4)
    assert find_problems(rows) == []
    assert {r["source"] for r in rows} == {k.name for k in KINDS}
    for row in rows:
        assert len(row["questions"]) == 4
        for q, g in zip(row["questions"], row["gold"], strict=True):
            key = re.fullmatch(r"What is the (.+)\?", q["question"]).group(1)
            lines = [ln for ln in row["context"].splitlines() if ln.lower().startswith(key + ":")]
            assert lines == [f"{lines[0].split(':')[0]}: {g['references'][0]}"]


def test_goals_cover_different_fields():
    rows = synthetic_rows(seed=2, contexts=3, goals_per_context=3, questions_per_goal=3)
    by_context = {}
    for r in rows:
        by_context.setdefault(r["context_id"], []).append({q["question"] for q in r["questions"]})
    for sets in by_context.values():
        assert len(sets) == 3 and not (sets[0] & sets[1])


def test_scales_to_100k_questions():
    ds = synthetic(seed=0, contexts=8334, goals_per_context=3, questions_per_goal=4)
    assert sum(len(q) for q in ds["questions"]) >= 100_000
    assert len(set(ds["goal_id"])) == len(ds)


def _digest(rows):
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def test_rows_without_chinese_or_padding_are_those_generated_before_either_existed():
    # digests of the generator's output recorded before Chinese contexts and padding were added
    assert _digest(synthetic_rows(seed=0, contexts=50)) == (
        "7dcc7d0fa252a8e3fc6a5b4704eb3864d5b38ebeccf54643ff72266e61ad4ddc"
    )
    rows = synthetic_rows(seed=3, contexts=20, goals_per_context=2, questions_per_goal=5)
    assert _digest(rows) == "7146833a92cad2df98cd356513b28678ef3c5a9e3f7a0c15d042e44a38145535"


def _field_value(context, key):
    """The value of the one `key: value` (or `键：值`) line of a context."""
    lines = [ln for ln in context.splitlines() if re.match(rf"{re.escape(key)}\s*[:：]", ln, re.IGNORECASE)]
    assert len(lines) == 1, (key, lines)
    return re.split(r"[:：]", lines[0], maxsplit=1)[1].strip()


def test_chinese_contexts_are_chinese_documents_with_exact_gold():
    rows = synthetic_rows(seed=5, contexts=10, goals_per_context=2, questions_per_goal=4, chinese=4)
    assert find_problems(rows) == []
    by_language = {}
    for row in validate(rows):
        by_language.setdefault(row.language_tag, set()).add(row.context_id)
    assert {k: len(v) for k, v in by_language.items()} == {"en": 6, "zh": 4}
    zh = [r for r in rows if r["context_id"] in by_language["zh"]]
    assert {r["source"] for r in zh} <= {k.name for k in ZH_KINDS}
    for row in zh:
        assert "：" in row["goal"] and row["goal"].startswith("我需要")
        for q, g in zip(row["questions"], row["gold"], strict=True):
            key = re.fullmatch(r"(.+)是什么？", q["question"]).group(1)
            assert _field_value(row["context"], key) == g["references"][0]


def test_chinese_count_is_checked():
    with pytest.raises(ValueError, match="chinese must be between 0 and contexts \\(3\\), got 4"):
        synthetic_rows(contexts=3, chinese=4)
    assert len({r["context_id"] for r in synthetic_rows(contexts=3, goals_per_context=1, chinese=3)}) == 3


@pytest.mark.parametrize("chinese", [0, 2])
def test_padding_reaches_the_length_within_one_percent_and_keeps_gold_exact(chinese):
    targets = [2000, 5000, 12000]
    shape = {"seed": 2, "contexts": 3, "goals_per_context": 1, "questions_per_goal": 3, "chinese": chinese}
    rows = synthetic_rows(**shape, tokens=targets)
    codec = get_codec()
    for row, target in zip(rows, targets, strict=True):
        assert abs(len(codec.encode(row["context"])) - target) <= target // 100
        for q, g in zip(row["questions"], row["gold"], strict=True):
            key = re.fullmatch(r"What is the (.+)\?|(.+)是什么？", q["question"])
            assert _field_value(row["context"], key.group(1) or key.group(2)) == g["references"][0]
        unpadded = synthetic_rows(**shape)
        filler = set(row["context"].splitlines()) - set(unpadded[rows.index(row)]["context"].splitlines())
        assert filler and not any(re.search(r"[\d:：]", line) for line in filler)


def test_a_document_longer_than_the_length_is_not_padded():
    assert synthetic_rows(seed=1, contexts=2, chinese=1, tokens=10) == synthetic_rows(seed=1, contexts=2, chinese=1)


def test_counts_per_context_and_per_goal():
    rows = synthetic_rows(seed=0, contexts=3, goals_per_context=[1, 3, 2], questions_per_goal=[3, 8, 4, 5, 6, 7])
    assert [r["goal_id"].split("/")[0][-1] for r in rows] == ["0", "1", "1", "1", "2", "2"]
    assert [len(r["questions"]) for r in rows] == [3, 8, 4, 5, 6, 7]
    assert find_problems(rows) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"goals_per_context": [1, 2]}, "goals_per_context must give one value per context \\(3\\), got 2"),
        ({"goals_per_context": [1, 0, 1]}, "goals_per_context must be >= 1, got 0"),
        ({"questions_per_goal": [3, 4]}, "questions_per_goal must give one value per goal \\(9\\), got 2"),
        ({"tokens": [100]}, "tokens must give one value per context \\(3\\), got 1"),
    ],
)
def test_per_item_counts_are_checked(kwargs, message):
    with pytest.raises(ValueError, match=message):
        synthetic_rows(contexts=3, **kwargs)
