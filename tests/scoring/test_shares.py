"""Outcome shares per cell: hand-counted toys in English and Chinese, CIs from one draw of goals."""

from __future__ import annotations

import pytest

from gacc_hf.scoring.shares import outcome_shares, outcome_shares_by_language, per_goal


def _row(goal: str, q: str, outcome: str | None, language: str = "en", **kw) -> dict:
    return {
        "compressor": "embed",
        "condition": "own",
        "ratio": 0.2,
        "goal_id": goal,
        "question_id": q,
        "language": language,
        "outcome": outcome,
        **kw,
    }


# three goals, five questions: right, right | guessed, lost | missed
TOY = [
    _row("g1", "q1", "right"),
    _row("g1", "q2", "right"),
    _row("g2", "q3", "guessed"),
    _row("g2", "q4", "lost"),
    _row("g3", "q5", "missed"),
]


def test_three_goal_toy_gives_the_hand_counted_shares():
    (row,) = outcome_shares(TOY, 0, 0)
    assert (row["right"], row["guessed"], row["missed"], row["lost"]) == (2 / 5, 1 / 5, 1 / 5, 1 / 5)
    assert row["n_questions"] == 5 and row["right_ci_low"] is None
    assert row["ceiling"] is False


def test_a_failed_row_has_no_outcome_and_the_shares_sum_below_one():
    (row,) = outcome_shares([*TOY, _row("g3", "q6", None)], 0, 0)
    assert row["right"] == 2 / 6 and row["lost"] == 1 / 6
    assert sum(row[k] for k in ("right", "guessed", "missed", "lost")) == pytest.approx(5 / 6)


def test_intervals_hold_the_share_and_a_one_goal_cell_has_a_point_interval():
    (row,) = outcome_shares(TOY, 200, 0)
    for name in ("right", "guessed", "missed", "lost"):
        assert row[f"{name}_ci_low"] <= row[name] <= row[f"{name}_ci_high"]
    (single,) = outcome_shares(TOY[:2], 200, 0)  # one goal: every draw is that goal
    assert single["right_ci_low"] == single["right_ci_high"] == 1.0


def test_answers_without_an_outcome_give_no_rows():
    assert outcome_shares([{k: v for k, v in r.items() if k != "outcome"} for r in TOY], 0, 0) == []
    assert outcome_shares([], 0, 0) == []


def test_per_language_rows_score_each_language_on_its_own():
    zh = [_row("目标1", "问题1", "lost", "zh"), _row("目标1", "问题2", "guessed", "zh")]
    rows = outcome_shares_by_language([*TOY, *zh], 0, 0)
    assert [r["language"] for r in rows] == ["en", "zh"]
    assert rows[1]["lost"] == rows[1]["guessed"] == 0.5 and rows[1]["n_questions"] == 2
    assert outcome_shares_by_language(TOY, 0, 0) == []  # one language: the overall rows are its rows


def test_per_goal_counts_chinese_goal_ids_in_first_seen_order():
    n, (sums,) = per_goal(["目标乙", "目标甲", "目标乙"], [[1, 1, 0]])
    assert n.tolist() == [2, 1] and sums.tolist() == [1.0, 1.0]
