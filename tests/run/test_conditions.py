import pytest

from gacc_hf.data.schema import validate
from gacc_hf.data.synthetic import synthetic_rows
from gacc_hf.run.conditions import GoalAssigner, check_conditions


def test_own_none_full():
    groups = validate(synthetic_rows(contexts=2, goals_per_context=2))
    a = GoalAssigner(groups, seed=0)
    g = groups[0]
    assert a.shown(g, "own").text == g.goal and a.shown(g, "own").goal_id == g.goal_id
    assert a.shown(g, "none").text == "" and a.shown(g, "full").text == "" and a.shown(g, "oracle").text == ""


def test_cross_stays_in_context_and_is_deterministic():
    groups = validate(synthetic_rows(contexts=10, goals_per_context=3))
    a, b = GoalAssigner(groups, seed=5), GoalAssigner(list(reversed(groups)), seed=5)
    for g in groups:
        other = a.cross(g)
        assert other.context_id == g.context_id and other.goal_id != g.goal_id
        assert b.cross(g).goal_id == other.goal_id  # independent of row order
    picks = {s: [GoalAssigner(groups, seed=s).cross(g).goal_id for g in groups] for s in range(6)}
    assert len({tuple(p) for p in picks.values()}) > 1  # the seed matters


def test_cross_falls_back_to_another_context_when_single_goal():
    groups = validate(synthetic_rows(contexts=5, goals_per_context=1))
    a = GoalAssigner(groups, seed=0)
    for g in groups:
        assert a.cross(g).context_id != g.context_id


def test_cross_pairing_ignores_row_order_in_the_fallback_too():
    import random

    # a mix: single-goal contexts (fallback) and multi-goal ones
    groups = validate(synthetic_rows(contexts=6, goals_per_context=1) + synthetic_rows(seed=1, contexts=3))
    pairing = {g.goal_id: GoalAssigner(groups, seed=3).cross(g).goal_id for g in groups}
    for k in range(5):
        shuffled = groups[:]
        random.Random(k).shuffle(shuffled)
        b = GoalAssigner(shuffled, seed=3)
        assert {g.goal_id: b.cross(g).goal_id for g in groups} == pairing
    assert len({GoalAssigner(groups, seed=s).cross(groups[0]).goal_id for s in range(8)}) > 1  # seeded


def test_cross_impossible_with_one_goal():
    groups = validate(synthetic_rows(contexts=1, goals_per_context=1))
    with pytest.raises(ValueError, match="second goal"):
        GoalAssigner(groups).cross(groups[0])


def test_condition_names():
    assert check_conditions("own,none,own") == ("own", "none")
    with pytest.raises(ValueError, match="unknown condition"):
        check_conditions(["own", "mine"])


def test_closed_is_a_bound_with_no_goal():
    groups = validate(synthetic_rows(contexts=1, goals_per_context=1))
    assert GoalAssigner(groups).shown(groups[0], "closed").text == ""
    assert check_conditions("own,closed") == ("own", "closed")


def test_closed_reads_the_empty_memory_with_a_budget_of_zero_and_calls_no_compressor(cache_dir):
    from gacc_hf import synthetic
    from tests.helpers.runs import rules_run

    called = []

    def spy(item):
        called.append(item)
        return item.context

    result = rules_run(synthetic(seed=0, contexts=2), compressor=spy, conditions=("closed",), cache_dir=cache_dir)
    assert called == [] and result.calls["compressor"] == 0
    n_groups = len({r["goal_id"] for r in result.answers})
    assert len(result.memories) == n_groups  # one ledger row per group, whatever the ratios
    for m in result.memories:
        assert (m["compressor"], m["condition"], m["ratio"], m["ceiling"]) == ("closed-book", "closed", 0.0, True)
        assert (m["budget"], m["retained_tokens"], m["memory"], m["compressor_called"]) == (0, 0, "", False)
    # the fields reader finds nothing in an empty memory: every answer is wrong with no reference in memory
    assert {(a["evidence"], a["correct"], a["outcome"]) for a in result.answers} == {(False, False, "lost")}
