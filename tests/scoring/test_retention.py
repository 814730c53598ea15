"""Retention = (cell − closed) / (full − closed): hand-computed values, and every way it is undefined."""

from __future__ import annotations

from gacc_hf.scoring.retention import missing_bound, retention, retention_rows


def _rows(compressor: str, condition: str, verdicts: str, goals: str = "aabbc", ratio: float = 0.2) -> list[dict]:
    """One row per question q1..qn: `verdicts` 1/0 per question, `goals` each question's goal."""
    return [
        {
            "compressor": compressor,
            "condition": condition,
            "ratio": ratio,
            "ceiling": condition in ("full", "closed"),
            "goal_id": f"goal {g}",
            "question_id": f"q{i}",
            "correct": v == "1",
        }
        for i, (v, g) in enumerate(zip(verdicts, goals, strict=True))
    ]


CLOSED, FULL = _rows("closed-book", "closed", "10000", ratio=0.0), _rows("full-context", "full", "11101", ratio=1.0)


def test_retention_is_the_hand_computed_ratio_of_gains():
    # cell 3/5, closed 1/5, full 4/5: (3 - 1) / (4 - 1)
    row = retention(_rows("embed", "own", "11100"), CLOSED, FULL, 0, 0)
    assert row["retention"] == 2 / 3 and row["undefined"] is None
    assert (row["closed_micro"], row["full_micro"]) == (0.2, 0.8)


def test_the_paired_interval_holds_the_point_and_is_exact_when_every_goal_agrees():
    row = retention(_rows("embed", "own", "11100"), CLOSED, FULL, 300, 0)
    assert row["retention_ci_low"] <= row["retention"] <= row["retention_ci_high"]
    same = retention(FULL, CLOSED, FULL, 300, 0)  # the cell is full itself: 1 in every draw
    assert same["retention"] == same["retention_ci_low"] == same["retention_ci_high"] == 1.0


def test_full_equal_to_closed_is_undefined_not_a_number():
    row = retention(_rows("embed", "own", "11100"), CLOSED, _rows("full-context", "full", "10000"), 300, 0)
    assert row["retention"] is None and row["retention_ci_low"] is None
    assert row["undefined"] == "full is not above closed"


def test_an_interval_is_undefined_when_some_draw_has_full_not_above_closed():
    # only goal a has full above closed: a draw without goal a has nothing to normalise by
    row = retention(_rows("embed", "own", "11000"), CLOSED, _rows("full-context", "full", "11000"), 300, 0)
    assert row["retention"] == 1.0 and row["retention_ci_low"] is None


def test_bounds_of_other_questions_are_undefined():
    row = retention(_rows("embed", "own", "11100"), CLOSED[:2], FULL, 0, 0)
    assert row["retention"] is None and "same questions" in row["undefined"]


def test_a_run_without_closed_or_full_says_so_for_every_cell():
    cell = _rows("embed", "own", "11100")
    assert missing_bound([*cell, *CLOSED, *FULL]) is None
    (row,) = retention_rows([*cell, *FULL], 0, 0)
    assert row["retention"] is None and row["undefined"] == "the run has no closed condition to normalise by"
    (row,) = retention_rows(cell, 0, 0)
    assert row["undefined"] == "the run has no closed and no full condition to normalise by"
    assert retention_rows(CLOSED, 0, 0) == []  # closed alone: no method cell to normalise


def test_rows_cover_each_method_cell_in_order_with_chinese_ids():
    own = [
        {**r, "goal_id": "目标" + r["goal_id"], "question_id": "问题" + r["question_id"]}
        for r in _rows("embed", "own", "11100")
    ]
    none = [{**r, "condition": "none", "correct": r["question_id"] == "问题q0"} for r in own]
    bounds = [{**r, "goal_id": "目标" + r["goal_id"], "question_id": "问题" + r["question_id"]} for r in CLOSED + FULL]
    rows = retention_rows([*own, *none, *bounds], 0, 0)
    assert [(r["condition"], r["retention"]) for r in rows] == [("own", 2 / 3), ("none", 0.0)]
