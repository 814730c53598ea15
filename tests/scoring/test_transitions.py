"""Outcome transitions between two sides of a comparison: hand-counted grids."""

from __future__ import annotations

from gacc_hf.scoring.transitions import format_transitions, transitions


def _side(outcomes: list[str | None], language: str = "en") -> list[dict]:
    return [
        {
            "condition": "own",
            "ratio": 0.2,
            "question_id": f"{language}{i}",
            "goal_id": "目标" if language == "zh" else "g",
            "outcome": o,
        }
        for i, o in enumerate(outcomes)
    ]


def test_counts_of_each_move_in_english_and_chinese():
    a = _side(["lost", "lost", "right", "missed"]) + _side(["lost"], "zh")
    b = _side(["right", "lost", "right", "lost"]) + _side(["guessed"], "zh")
    counts = transitions(a, b)[("own", 0.2)]
    assert counts == {
        ("lost", "right"): 1,
        ("lost", "lost"): 1,
        ("right", "right"): 1,
        ("missed", "lost"): 1,
        ("lost", "guessed"): 1,
    }


def test_the_grid_reads_a_row_per_outcome_of_a_and_adds_none_only_when_needed():
    text = format_transitions(transitions(_side(["lost", "right"]), _side(["right", "right"])))
    lines = text.splitlines()
    assert lines[0] == "outcomes A → B, own r=0.2 (questions):"
    assert lines[2].split() == ["right", "1", "0", "0", "0"]
    assert lines[5].split() == ["lost", "1", "0", "0", "0"]
    assert "none" not in text
    with_none = format_transitions(transitions(_side([None]), _side(["right"])))
    assert with_none.splitlines()[-1].split() == ["none", "1", "0", "0", "0", "0"]
