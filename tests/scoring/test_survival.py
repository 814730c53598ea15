"""Whether conclusions survive another setting: rankings, τ-b and k-of-m wins against hand counts."""

from __future__ import annotations

import json
import math

import pytest

from gacc_hf.scoring.survival import SurvivalError, format_survival, survival, tau_b

QUESTIONS = [("g1", "g1/q1"), ("g1", "g1/q2"), ("目标", "目标/q1"), ("目标", "目标/q2")]


def _rows(verdicts, ratio=0.2, questions=QUESTIONS):
    """Answer rows of compressors given as {name: "1100"} (one digit per question, 1: right)."""
    rows = []
    for c, bits in verdicts.items():
        for (g, q), bit in zip(questions, bits, strict=True):
            cell = {"compressor": c, "condition": "own", "ratio": ratio, "ceiling": False}
            rows.append({**cell, "goal_id": g, "question_id": q, "correct": bit == "1"})
    full = [{**r, "compressor": "full-context", "condition": "full", "ceiling": True, "ratio": 1.0} for r in rows[:4]]
    return rows + full  # a ceiling is a bound, not ranked


SETTINGS = {
    "S1": _rows({"X": "1100", "Y": "1110", "Z": "1111"}),  # Micro 2/4, 3/4, 4/4
    "S2": _rows({"X": "1100", "Y": "1000", "Z": "1110"}),  # 2/4, 1/4, 3/4
    "S3": _rows({"X": "1000", "Y": "1000", "Z": "0000"}),  # 1/4, 1/4, 0: X and Y tied
}


def test_rankings_are_by_micro_with_ties_sharing_a_rank():
    (sec,) = survival(SETTINGS, n_boot=0)
    assert sec["compressors"] == ["X", "Y", "Z"] and sec["settings"] == ["S1", "S2", "S3"]
    assert (sec["n_questions"], sec["n_goals"]) == (4, 2)
    ranked = {r["setting"]: [(x["compressor"], x["rank"], x["micro"]) for x in r["ranking"]] for r in sec["rankings"]}
    assert ranked["S1"] == [("Z", 1, 1.0), ("Y", 2, 0.75), ("X", 3, 0.5)]
    assert ranked["S2"] == [("Z", 1, 0.75), ("X", 2, 0.5), ("Y", 3, 0.25)]
    assert ranked["S3"] == [("X", 1, 0.25), ("Y", 1, 0.25), ("Z", 3, 0.0)]


def test_tau_b_is_the_hand_count_with_ties():
    (sec,) = survival(SETTINGS, n_boot=0)
    tau = {(t["setting_a"], t["setting_b"]): t["tau"] for t in sec["tau"]}
    # S1 (2,3,4) vs S2 (2,1,3): pairs XY discordant, XZ and YZ concordant: (2 − 1)/3 = 1/3
    assert tau["S1", "S2"] == pytest.approx(1 / 3)
    # S1 vs S3 (1,1,0): XY tied in S3 (0), XZ and YZ discordant (−2); τ-b = −2/√((3 − 0)(3 − 1)) = −2/√6
    assert tau["S1", "S3"] == pytest.approx(-2 / math.sqrt(6))
    # S2 (2,1,3) vs S3: XY tied in S3, XZ discordant, YZ discordant: −2/√6
    assert tau["S2", "S3"] == pytest.approx(-2 / math.sqrt(6))
    assert tau_b([1, 2, 3], [1, 2, 3]) == 1.0 and tau_b([1, 2, 3], [3, 2, 1]) == -1.0


def test_k_of_m_counts_the_settings_where_b_beats_a():
    (sec,) = survival(SETTINGS, n_boot=0)
    wins = {(p["a"], p["b"]): (p["k"], p["m"], [d["micro_diff"] for d in p["settings"]]) for p in sec["pairs"]}
    # Y − X: S1 +1/4, S2 −1/4, S3 0 (a tie is not a win): 1 of 3
    assert wins["X", "Y"] == (1, 3, [0.25, -0.25, 0.0])
    # Z − X: +2/4, +1/4, −1/4: 2 of 3; Z − Y: +1/4, +2/4, −1/4: 2 of 3
    assert wins["X", "Z"] == (2, 3, [0.5, 0.25, -0.25])
    assert wins["Y", "Z"] == (2, 3, [0.25, 0.5, -0.25])
    assert all(d["ci_low"] is None for p in sec["pairs"] for d in p["settings"])


def test_a_win_on_every_goal_has_its_interval_above_zero():
    # S1: B right where A is wrong in both goals (every resample +1/2); S2: tied
    settings = {"S1": _rows({"A": "0101", "B": "1111"}), "S2": _rows({"A": "1010", "B": "1010"})}
    (sec,) = survival(settings, n_boot=200)
    (pair,) = sec["pairs"]
    assert (pair["k"], pair["k_ci_above_zero"], pair["m"]) == (1, 1, 2)
    first = pair["settings"][0]
    assert (first["micro_diff"], first["ci_low"], first["ci_high"]) == (0.5, 0.5, 0.5)
    (tau,) = sec["tau"]
    # S2 ranks A and B alike: τ-b does not exist, said, not a number
    assert tau["tau"] is None and tau["tau_undefined"] == "a setting ranks every compressor alike"
    json.dumps(sec, allow_nan=False)


def test_tau_interval_is_paired_and_bounded():
    (sec,) = survival(SETTINGS, n_boot=300)
    for t in sec["tau"]:
        assert -1 <= t["tau_ci_low"] <= t["tau"] + 1e-12 and t["tau"] - 1e-12 <= t["tau_ci_high"] <= 1
    json.dumps(sec, allow_nan=False)


def test_each_ratio_is_its_own_section():
    settings = {
        name: rows + _rows({"X": "1111", "Y": "0000", "Z": "0000"}, ratio=0.5) for name, rows in SETTINGS.items()
    }
    low, high = survival(settings, n_boot=0)
    assert (low["ratio"], high["ratio"]) == (0.2, 0.5)
    assert [x["compressor"] for x in high["rankings"][0]["ranking"]] == ["X", "Y", "Z"]


def test_settings_that_do_not_match_are_refused():
    with pytest.raises(SurvivalError, match="two or more settings, got 1"):
        survival({"S1": SETTINGS["S1"]})
    other = {"S1": SETTINGS["S1"], "S2": _rows({"X": "1100", "Y": "1000"})}
    with pytest.raises(
        SurvivalError, match=r"S1 and S2 do not hold the same compressors' cells .*1 only in one .*Z r=0\.2"
    ):
        survival(other)
    moved = [("g1", "g1/q1"), ("g1", "g1/q2"), ("目标", "目标/q1"), ("g1", "目标/q2")]
    other = {"S1": SETTINGS["S1"], "S2": _rows({"X": "1100", "Y": "1000", "Z": "1110"}, questions=moved)}
    with pytest.raises(SurvivalError, match=r"did not answer the same questions \(or goals\) in X r=0\.2"):
        survival(other)
    with pytest.raises(SurvivalError, match="S1 has no compressor answering at condition cross"):
        survival(SETTINGS, condition="cross")


def test_the_section_reads_as_markdown():
    text = format_survival(survival(SETTINGS, n_boot=0), {"S1": "reader fields, judge exact"})
    assert text.startswith("## Do conclusions survive?\n\n- `S1`: reader fields, judge exact\n")
    assert "| S3 | 1. X (0.250), 1. Y (0.250), 3. Z (0.000) |" in text
    assert "| S1 | S2 | +0.333 |" in text
    assert "| X | Z | 2 of 3 | 0 | +50.0 | +25.0 | -25.0 |" in text
