"""Grouping rows once for every figure: the groups, their order and the fallbacks, counted by hand on small tables,
in English and Chinese; and the shared products and quantiles give each cell what it gets alone."""

from __future__ import annotations

import numpy as np
import pytest

from gacc_hf.scoring.compare import condition_gaps, paired_table
from gacc_hf.scoring.groups import Cells, Rows, cells_of, every_row_has, grouped, grouped_by, kept
from gacc_hf.scoring.retention import retention, retention_rows
from gacc_hf.scoring.scores import (
    paired_difference,
    paired_differences,
    percentile_interval,
    percentile_intervals,
    score_answers,
)
from gacc_hf.scoring.settings import setting_parts
from gacc_hf.scoring.shares import cell_of


def _row(comp: str, cond: str, q: str, **extra: object) -> dict:
    return {"compressor": comp, "condition": cond, "ratio": 0.2, "question_id": q, "goal_id": q[:2], **extra}


def test_grouped_keeps_first_seen_keys_and_row_order_across_stretches():
    # stretches a, b, a: the second stretch of a joins the first, after it
    assert grouped_by("aab" + "a", [1, 2, 3, 4]) == {"a": [1, 2, 4], "b": [3]}
    assert grouped(["记忆", "压缩", "记忆"], len) == {2: ["记忆", "压缩", "记忆"]}
    assert grouped([], len) == {}


def test_cells_merge_groups_under_one_key_in_row_order():
    # own rows flagged False and unflagged (both no ceiling) interleave: two groups, one key, rows in their order
    rows = [
        _row("embed", "own", "q1", ceiling=False),
        _row("embed", "own", "q2"),
        _row("embed", "own", "q3", ceiling=False),
        _row("embed", "own", "q4"),
    ]
    cells = Cells(rows)
    assert len(cells.groups) == 2 and len(cells.firsts()) == 2
    assert [r["question_id"] for r in cells.by(cell_of)["embed", "own", 0.2]] == ["q1", "q2", "q3", "q4"]


def test_rows_keep_what_is_computed_and_plain_lists_do_not():
    calls = []

    def count(rows):
        calls.append(1)
        return len(rows)

    rows = Rows([_row("embed", "own", "q1")])
    assert kept(rows, "n", count) == kept(rows, "n", count) == 1 and len(calls) == 1
    assert cells_of(rows) is cells_of(rows)
    plain = list(rows)
    assert kept(plain, "n", count) == kept(plain, "n", count) == 1 and len(calls) == 3
    assert cells_of(plain) is not cells_of(plain)


def test_rows_that_keep_their_cells_are_freed_without_the_cyclic_collector():
    # a `Rows` holding `Cells` that held it back would be a cycle: its rows freed only when the collector walks
    # them all (a third of the CPU of checking a release-size run)
    import gc
    import weakref

    class Row(dict):  # a dict that a weak reference can watch
        pass

    gc.disable()
    try:
        rows = Rows([Row(_row("embed", "own", "q1")), Row(_row("嵌入", "none", "q2"))])
        watched = weakref.ref(rows[0])
        assert len(cells_of(rows).groups) == 2
        del rows
        assert watched() is None
    finally:
        gc.enable()


def test_rows_keep_their_split_by_setting_and_plain_lists_do_not():
    rows = Rows([_row("embed", "own", "q1"), _row("嵌入", "none", "q2")])
    assert setting_parts(rows) is setting_parts(rows)
    plain = list(rows)
    assert setting_parts(plain) is not setting_parts(plain) and setting_parts(plain) == setting_parts(rows)


def test_every_row_has_a_field_or_not():
    rows = [_row("embed", "own", "q1", evidence=True), _row("嵌入", "own", "q2", evidence=False)]
    assert every_row_has(rows, "evidence") is True
    assert every_row_has([*rows, _row("embed", "own", "q3")], "evidence") is False


def test_setting_parts_put_rows_naming_half_a_setting_in_one_part_in_row_order():
    rows = [
        _row("embed", "own", "q1", reader="r", judge="j"),
        _row("embed", "own", "q2", reader="r"),  # no judge
        _row("embed", "own", "q3"),  # neither
        _row("embed", "own", "q4", judge="j"),  # no reader
        _row("embed", "own", "q5", reader="r", judge="j"),
    ]
    parts = setting_parts(rows)
    assert list(parts) == [("r", "j"), None]
    assert [r["question_id"] for r in parts[None]] == ["q2", "q3", "q4"]
    assert [r["question_id"] for r in parts["r", "j"]] == ["q1", "q5"]
    one = setting_parts([_row("embed", "own", "q1", reader="r", judge="j")] * 3)  # one setting: no grouping
    assert list(one) == [("r", "j")] and len(one["r", "j"]) == 3 and isinstance(one["r", "j"], Rows)


def test_scores_of_a_cell_split_by_its_flags_count_every_row():
    # q1 and q3 right, q2 and q4 wrong: 2 of 4 whatever the flags say, as one cell
    rows = [
        _row("embed", "own", "q1", correct=True, ceiling=False, error=None),
        _row("embed", "own", "q2", correct=False, error=None),
        _row("embed", "own", "q3", correct=True, ceiling=False, error=None),
        _row("embed", "own", "q4", correct=False, error=None),
    ]
    (row,) = score_answers(rows, 0, 0)
    assert (row["micro"], row["n_questions"], row["ceiling"]) == (0.5, 4, False)


def test_a_question_answered_twice_counts_its_last_answer_in_retention():
    def rows(cond: str, verdicts: str) -> list[dict]:
        ceiling = cond in ("closed", "full")
        return [_row("c", cond, f"q{i}", correct=v == "1", ceiling=ceiling) for i, v in enumerate(verdicts)]

    closed, full = rows("closed", "000"), rows("full", "111")
    once = rows("own", "110")  # 2 of 3 over a room of 3
    twice = [*rows("own", "010"), rows("own", "1")[0]]  # q0 wrong, then right: its last answer counts
    assert retention(once, closed, full, 0, 0)["retention"] == 2 / 3
    assert retention(twice, closed, full, 0, 0)["retention"] == 2 / 3
    (row,) = retention_rows([*closed, *full, *twice], 0, 0)
    assert row["retention"] == 2 / 3


def test_sides_in_another_order_pair_question_by_question():
    a = [_row("c", "*", q, correct=v) for q, v in (("q1", True), ("q2", False), ("问3", False))]
    b = [_row("c", "*", q, correct=v) for q, v in (("问3", True), ("q1", True), ("q2", True))]
    (row,) = paired_table(a, b, n_boot=0)
    assert (row["micro_a"], row["micro_b"], row["n_questions"]) == (1 / 3, 1.0, 3)
    assert paired_table(a, b[1:] + b[:1], n_boot=0) == [row]


def test_gaps_read_the_own_side_once_for_both_gaps():
    rows = [
        _row("c", cond, q, correct=cond == "own" or q == "q1")
        for cond in ("own", "none", "cross")
        for q in ("q1", "q2", "记3", "记4")
    ]
    gaps = condition_gaps(rows, n_boot=0)
    # own 4/4; none and cross 1/4 each (q1): both gaps +0.75
    assert [(g["gap"], g["micro_diff"]) for g in gaps] == [("own-none", 0.75), ("own-cross", 0.75)]


@pytest.mark.parametrize("n_boot", [0, 200])
def test_paired_differences_together_are_each_alone(n_boot):
    rng = np.random.default_rng(1)
    goals = [f"g{i // 3}" for i in range(30)]
    cells = [(goals, rng.random(30) < 0.5, rng.random(30) < 0.6) for _ in range(4)]
    cells.append(([f"h{i // 2}" for i in range(10)], rng.random(10) < 0.5, rng.random(10) < 0.5))  # other goals
    alone = [paired_difference(g, a, b, n_boot, 0) for g, a, b in cells]
    assert paired_differences(cells, n_boot, 0) == alone


def test_intervals_together_are_each_alone():
    rng = np.random.default_rng(2)
    draws = [rng.random(999), np.round(rng.random(999), 1), np.zeros(999)]
    assert percentile_intervals(draws, 0.95) == [percentile_interval(d, 0.95) for d in draws]
    assert percentile_intervals([], 0.95) == []


def test_paired_differences_refuse_verdicts_of_different_lengths():
    with pytest.raises(ValueError, match="paired verdicts differ in length: 2 vs 1"):
        paired_differences([(["g", "g"], [True, False], [True])])
