from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gacc_hf.scoring import scores
from gacc_hf.scoring.scores import goal_table, macro, micro, paired_difference, score, score_many

verdict_rows = st.lists(st.tuples(st.sampled_from("abcdefgh"), st.booleans()), min_size=1, max_size=80)


def _plain(rows):
    by_goal = defaultdict(list)
    for goal, ok in rows:
        by_goal[goal].append(ok)
    micro_ = sum(ok for _, ok in rows) / len(rows)
    macro_ = sum(all(v) for v in by_goal.values()) / len(by_goal)
    mean_acc = sum(sum(v) / len(v) for v in by_goal.values()) / len(by_goal)
    return micro_, macro_, mean_acc


@given(verdict_rows)
def test_micro_and_all_correct_macro_match_plain_python(rows):
    goals, verdicts = zip(*rows, strict=True)
    m, M, mean_acc = _plain(rows)
    assert micro(verdicts) == pytest.approx(m)
    assert macro(goals, verdicts) == pytest.approx(M)
    # all-correct can never exceed the mean per-goal accuracy
    assert macro(goals, verdicts) <= mean_acc + 1e-12


def test_macro_is_all_correct_not_mean_accuracy():
    goals = ["g1", "g1", "g1", "g2", "g2", "g2"]
    verdicts = [True, True, False, True, True, True]
    # mean per-goal accuracy would be (2/3 + 1) / 2 = 0.8333; all-correct gives 1/2
    assert macro(goals, verdicts) == 0.5
    assert micro(verdicts) == pytest.approx(5 / 6)


@settings(deadline=None, max_examples=40)
@given(verdict_rows, st.integers(0, 2**32 - 1))
def test_bootstrap_is_seeded_and_brackets_degenerate_cases(rows, seed):
    goals, verdicts = zip(*rows, strict=True)
    a = score(goals, verdicts, n_boot=200, seed=seed)
    b = score(goals, verdicts, n_boot=200, seed=seed)
    assert a == b
    assert 0 <= a.micro_ci[0] <= a.micro_ci[1] <= 1
    assert 0 <= a.macro_ci[0] <= a.macro_ci[1] <= 1
    if all(verdicts):
        assert a.micro_ci == (1.0, 1.0) and a.macro_ci == (1.0, 1.0)


def test_ci_narrows_with_more_goals():
    few = score([f"g{i}" for i in range(20)], [i % 2 == 0 for i in range(20)], n_boot=500, seed=1)
    many = score([f"g{i}" for i in range(2000)], [i % 2 == 0 for i in range(2000)], n_boot=500, seed=1)
    width = lambda s: s.macro_ci[1] - s.macro_ci[0]  # noqa: E731
    assert width(many) < width(few) / 4
    assert few.macro_ci[0] < 0.5 < few.macro_ci[1]


def test_goal_table_first_seen_order():
    t = goal_table(["b", "a", "b"], [True, True, False])
    assert t.goal_ids == ["b", "a"]
    assert t.n_questions.tolist() == [2, 1] and t.n_correct.tolist() == [1, 1]
    assert t.all_correct.tolist() == [False, True]


def test_paired_difference():
    goals = ["g1", "g1", "g2", "g2", "g3", "g3"]
    a = [True, False, True, True, False, False]
    b = [True, True, True, True, False, True]
    d = paired_difference(goals, a, b, n_boot=300, seed=0)
    assert d.micro_diff == pytest.approx(2 / 6)
    assert d.macro_diff == pytest.approx(1 / 3)  # g1 becomes all-correct; g3 stays wrong
    assert d.micro_diff_ci[0] >= 0  # B is never worse on any goal, so no resample can favour A
    same = paired_difference(goals, a, a, n_boot=100, seed=0)
    assert same.micro_diff == 0 and same.micro_diff_ci == (0.0, 0.0)


@pytest.mark.parametrize(("goals", "verdicts", "msg"), [([], [], "zero questions"), (["a"], [True, False], "entries")])
def test_bad_inputs(goals, verdicts, msg):
    with pytest.raises(ValueError, match=msg):
        score(goals, verdicts)


# Recorded from the gather-and-sum bootstrap (`num[idx].sum(axis=1) / den[idx].sum(axis=1)` per cell) before
# the draws were tallied and multiplied in one pass: the intervals must not move by a single bit.
_GOALS = ["g1"] * 3 + ["g2"] * 2 + ["g3"] * 4 + ["g4"] + ["g5"] * 2
_A = [True, False, True, True, True, False, False, True, True, True, False, True]
_B = [True, True, True, True, False, True, False, True, True, False, True, True]


def test_bootstrap_intervals_are_the_recorded_ones(monkeypatch):
    s = score(_GOALS, _A, n_boot=200, seed=7)
    assert (s.micro_ci, s.macro_ci) == ((0.5286764705882354, 0.8891666666666667), (0.0, 0.8))
    s = score(_GOALS, _B, n_boot=50, seed=0)
    assert (s.micro_ci, s.macro_ci) == ((0.4569444444444445, 1.0), (0.0, 1.0))
    d = paired_difference(_GOALS, _A, _B, n_boot=300, seed=3)
    assert (d.micro_diff_ci, d.macro_diff_ci) == ((-0.5291666666666663, 0.35714285714285715), (-1.0, 0.8))
    monkeypatch.setattr(scores, "_CHUNK_CELLS", 25)  # draws made in chunks of 5 resamples
    s = score(_GOALS, _A, n_boot=37, seed=11)
    assert (s.micro_ci, s.macro_ci) == ((0.5264705882352941, 0.8220779220779222), (0.0, 0.8))


def _gathered_intervals(goal_ids, correct, n_boot, seed):
    """The per-cell formula written out: draw goals, gather and sum their counts, take the percentiles."""
    order = list(dict.fromkeys(goal_ids))
    n_q = np.array([goal_ids.count(g) for g in order], dtype=float)
    n_c = np.array([sum(c for g2, c in zip(goal_ids, correct, strict=True) if g2 == g) for g in order], dtype=float)
    idx = np.random.default_rng(seed).integers(0, len(order), size=(n_boot, len(order)))
    micro_draws = n_c[idx].sum(axis=1) / n_q[idx].sum(axis=1)
    macro_draws = (n_c == n_q).astype(float)[idx].sum(axis=1) / len(order)
    alpha = (1 - 0.95) / 2  # as written, 0.025000000000000022
    return [tuple(float(x) for x in np.quantile(d, [alpha, 1 - alpha])) for d in (micro_draws, macro_draws)]


def test_cells_scored_together_equal_each_scored_alone():
    cells = [(_GOALS, _A), (_GOALS, _B), (_GOALS[:5], _A[:5]), (_GOALS[3:], _B[3:]), (_GOALS[:5], _B[:5])]
    together = score_many(cells, n_boot=120, seed=4)
    assert together == [score(g, c, n_boot=120, seed=4) for g, c in cells]
    assert [[s.micro_ci, s.macro_ci] for s in together] == [_gathered_intervals(g, c, 120, 4) for g, c in cells]
    assert together[0].micro_ci != together[1].micro_ci  # the cells are told apart, not given one interval
    assert all(s.micro_ci is None for s in score_many(cells, n_boot=0))


def test_kept_draws_are_read_only_and_give_what_fresh_draws_give():
    first = score(_GOALS, _A, n_boot=200, seed=7)
    kept = scores._tally(7, 200, len(set(_GOALS)))
    with pytest.raises(ValueError, match="read-only"):
        kept[0, 0] = 99  # every later cell on these draws would be scored on the edit
    scores._tally.cache_clear()
    assert score(_GOALS, _A, n_boot=200, seed=7) == first


def test_columns_that_pairs_share_enter_the_product_once_with_each_pair_s_draws():
    # whole counts: cells share their counts of questions, and every Macro pair has a column of ones
    n_q, ones = np.array([2.0, 3.0, 1.0, 4.0]), np.ones(4)
    pairs = [
        (np.array([1.0, 3.0, 0.0, 2.0]), n_q),
        (np.array([0.0, 1.0, 0.0, 0.0]), ones),
        (np.array([2, 0, 1, 4]), n_q),
    ]
    unique, at = scores._distinct([np.asarray(v, dtype=float) for pair in pairs for v in pair])
    assert len(unique) == 5 and at == [0, 1, 2, 3, 4, 1]  # six columns given, the counts of questions once
    together = scores.resampled_ratios(pairs, 60, 5)
    alone = [scores.resampled_ratios([pair], 60, 5)[0] for pair in pairs]  # a pair alone shares nothing
    assert all(np.array_equal(a, b) for a, b in zip(together, alone, strict=True))


def test_weighted_values_keep_every_column(monkeypatch):
    weighted = np.array([0.25, 1.5, 0.75, 2.0])  # an AUC's weighted sums: not whole
    assert scores._whole(np.array([2.0, 0.0, 3.0])) and not scores._whole(weighted)
    made_distinct = []
    distinct = scores._distinct
    monkeypatch.setattr(scores, "_distinct", lambda columns: made_distinct.append(len(columns)) or distinct(columns))
    scores.resampled_ratios([(weighted, np.ones(4)), (weighted, np.ones(4))], 10, 0)
    assert made_distinct == []
    scores.resampled_ratios([(np.array([1.0, 2.0, 0.0, 1.0]), np.ones(4))] * 2, 10, 0)
    assert made_distinct == [4]  # whole counts: made distinct
