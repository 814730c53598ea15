"""Area under the score-against-budget curve: hand-computed areas, one ratio gives none, paired differences."""

from __future__ import annotations

import pytest

from gacc_hf.scoring.auc import auc_by_language, auc_rows, format_auc, paired_auc, trapezoid_weights
from gacc_hf.scoring.compare import CompareError


def _curve(compressor: str, by_ratio: dict[float, str], language: str = "en", goals: str = "aabb") -> list[dict]:
    """Rows of one (compressor, own) curve: per ratio, a 1/0 verdict per question (evidence = verdict)."""
    return [
        {
            "compressor": compressor,
            "condition": "own",
            "ratio": ratio,
            "ceiling": False,
            "language": language,
            "goal_id": f"{language} goal {g}",
            "question_id": f"{language} q{i}",
            "correct": v == "1",
            "evidence": v == "1",
        }
        for ratio, verdicts in by_ratio.items()
        for i, (v, g) in enumerate(zip(verdicts, goals, strict=True))
    ]


def test_trapezoid_weights_sum_to_one_and_refuse_a_single_ratio():
    assert sum(trapezoid_weights([0.1, 0.2, 0.3])) == pytest.approx(1.0)
    assert trapezoid_weights([0.1, 0.3]) == [0.5, 0.5]
    with pytest.raises(ValueError, match="two ratios"):
        trapezoid_weights([0.2])


def test_auc_of_a_hand_computable_curve():
    # Micro 0.25 at r=0.1, 0.5 at r=0.2, 1.0 at r=0.4: trapezoids 0.1*(0.25+0.5)/2 + 0.2*(0.5+1)/2 = 0.1875,
    # divided by the range 0.3
    (row,) = auc_rows(_curve("embed", {0.1: "1000", 0.2: "1100", 0.4: "1111"}), 0, 0)
    assert row["micro_auc"] == pytest.approx(0.1875 / 0.3)
    assert row["evidence_auc"] == pytest.approx(0.1875 / 0.3)
    assert row["ratios"] == [0.1, 0.2, 0.4] and row["n_questions"] == 4


def test_a_flat_curve_has_its_own_height_and_a_point_interval():
    (row,) = auc_rows(_curve("embed", {0.1: "1010", 0.3: "1010"}), 300, 0)
    assert row["micro_auc"] == 0.5 == row["micro_auc_ci_low"] == row["micro_auc_ci_high"]  # each goal 1 of 2


def test_one_ratio_gives_no_row():
    assert auc_rows(_curve("embed", {0.2: "1100"}), 0, 0) == []


def test_per_language_curves_of_english_and_chinese():
    rows = auc_by_language(
        _curve("embed", {0.1: "0000", 0.3: "1111"}) + _curve("embed", {0.1: "1111", 0.3: "1111"}, "zh"), 0, 0
    )
    assert [(r["language"], r["micro_auc"]) for r in rows] == [("en", 0.5), ("zh", 1.0)]


def test_paired_auc_difference_of_two_compressors():
    a = _curve("truncate", {0.1: "0000", 0.3: "1100"})  # AUC 0.25
    b = _curve("embed", {0.1: "1100", 0.3: "1111"})  # AUC 0.75
    (row,) = paired_auc(a, b, 300, 0)
    assert (row["auc_a"], row["auc_b"], row["auc_diff"]) == (0.25, 0.75, 0.5)
    assert row["auc_diff_ci_low"] <= 0.5 <= row["auc_diff_ci_high"]
    assert "+50.0" in format_auc([row])


def test_paired_auc_refuses_other_questions():
    with pytest.raises(CompareError, match="same questions"):
        paired_auc(_curve("a", {0.1: "0000", 0.3: "1100"}), _curve("b", {0.1: "000", 0.3: "110"}, goals="aab"), 0, 0)
