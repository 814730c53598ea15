import re

from gacc_hf.data.schema import find_problems
from gacc_hf.data.synthetic import KINDS, synthetic, synthetic_rows


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
