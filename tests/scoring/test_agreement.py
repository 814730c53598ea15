"""Judge agreement against hand counts, English and Chinese answers, and the cases where a figure does not exist."""

from __future__ import annotations

import json

import pytest

from gacc_hf.scoring.agreement import format_agreement, judge_agreement, verdict_table

R, W = True, False
# answer: goal, language, judges A, B, C
TABLE = [
    ("g1", "en", R, R, R),
    ("g1", "en", R, W, R),
    ("g2", "en", W, W, W),
    ("g2", "en", W, W, R),
    ("g3", "zh", R, R, W),
    ("g3", "zh", W, W, W),
]


def _measure(rows, n_boot=0, **kw):
    goals = [r[0] for r in rows]
    languages = [r[1] for r in rows]
    verdicts = {j: [r[2 + k] for r in rows] for k, j in enumerate("ABC"[: len(rows[0]) - 2])}
    return judge_agreement(goals, verdicts, languages, n_boot=n_boot, **kw)


def _pairs(part):
    return {(p["judge_a"], p["judge_b"]): pytest.approx((p["agreement"], p["kappa"])) for p in part["pairs"]}


def test_pairs_and_alpha_over_every_answer_are_the_hand_counts():
    t = _measure(TABLE)
    assert t["judges"] == ["A", "B", "C"] and t["n_answers"] == 6
    pairs = _pairs(t)
    # A,B agree on 1,3,4,5,6: p_o = 5/6; A right 3/6, B right 2/6: p_e = 1/2·1/3 + 1/2·2/3 = 1/2;
    # κ = (5/6 − 1/2) / (1 − 1/2) = 2/3
    assert pairs["A", "B"] == (5 / 6, 2 / 3)
    # A,C agree on 1,2,3,6: p_o = 4/6; both right 3/6: p_e = 1/2; κ = (2/3 − 1/2) / (1/2) = 1/3
    assert pairs["A", "C"] == (4 / 6, 1 / 3)
    # B,C agree on 1,3,6: p_o = 1/2 = p_e: κ = 0
    assert pairs["B", "C"] == (1 / 2, 0)
    # α: right verdicts per answer r = 3,2,0,1,2,0 of m = 3; D = Σ r(3 − r)/2 = 0+1+0+1+1+0 = 3;
    # n = 18 values, R = 8 right, W = 10 wrong; α = 1 − (n − 1)·D/(R·W) = 1 − 17·3/80 = 29/80
    assert t["all"]["alpha"] == pytest.approx(29 / 80)
    assert t["all"]["n_judges"] == 3 and t["all"]["alpha_undefined"] is None


def test_two_judges_alpha_is_the_hand_count():
    # A: R R W W, B: R W W W (one goal each pair); r = 2,1,0,0, D = 0+1+0+0 = 1; n = 8, R = 3, W = 5:
    # α = 1 − 7·1/15 = 8/15; κ: p_o = 3/4, p_e = 1/2·1/4 + 1/2·3/4 = 1/2, κ = 1/2
    t = judge_agreement(["g", "g", "h", "h"], {"A": [R, R, W, W], "B": [R, W, W, W]}, n_boot=0)
    assert t["all"]["alpha"] == pytest.approx(8 / 15) and t["pairs"][0]["kappa"] == pytest.approx(0.5)


def test_each_language_is_measured_on_its_own_answers():
    en, zh = _measure(TABLE)["by_language"]
    assert (en["language"], en["n_answers"], zh["language"], zh["n_answers"]) == ("en", 4, "zh", 2)
    # en: A R R W W, B R W W W, C R R W R
    # A,B: p_o 3/4, p_e = 1/2·1/4 + 1/2·3/4 = 1/2, κ = 1/2; A,C: p_o 3/4, p_e = 1/2·3/4 + 1/2·1/4 = 1/2, κ = 1/2;
    # B,C: p_o 2/4, p_e = 1/4·3/4 + 3/4·1/4 = 3/8, κ = (1/2 − 3/8)/(5/8) = 1/5
    assert _pairs(en) == {("A", "B"): (0.75, 0.5), ("A", "C"): (0.75, 0.5), ("B", "C"): (0.5, 0.2)}
    # α: r = 3,2,0,1; D = 0+1+0+1 = 2; n = 12, R = 6, W = 6: α = 1 − 11·2/36 = 7/18
    assert en["all"]["alpha"] == pytest.approx(7 / 18)
    # zh (目标 g3): A R W, B R W, C W W. A,B agree fully with both verdicts present: κ = 1;
    # A,C: p_o 1/2, p_e = 1/2·0 + 1/2·1 = 1/2: κ = 0 (C said wrong to both, which is a verdict, not a gap)
    assert _pairs(zh) == {("A", "B"): (1.0, 1.0), ("A", "C"): (0.5, 0.0), ("B", "C"): (0.5, 0.0)}
    # α: r = 2,0; D = 2·1/2 = 1; n = 6, R = 2, W = 4: α = 1 − 5/8 = 3/8
    assert zh["all"]["alpha"] == pytest.approx(3 / 8)


def test_one_language_gives_no_language_rows():
    assert _measure(TABLE[:4])["by_language"] == []


def test_one_class_only_is_said_not_a_number():
    t = judge_agreement(["g", "目标"], {"A": [R, R], "B": [R, R]}, ["en", "zh"], n_boot=50)
    pair = t["pairs"][0]
    assert pair["agreement"] == 1.0 and (pair["agreement_ci_low"], pair["agreement_ci_high"]) == (1.0, 1.0)
    assert pair["kappa"] is None and pair["kappa_ci_low"] is None
    assert pair["kappa_undefined"] == "both judges said right to every answer: chance agreement is 1"
    assert t["all"]["alpha"] is None
    assert t["all"]["alpha_undefined"] == "every judge said right to every answer: no variation to agree on"
    wrong = judge_agreement(["g"], {"A": [W], "B": [W]}, n_boot=0)
    assert "said wrong" in wrong["pairs"][0]["kappa_undefined"] and "said wrong" in wrong["all"]["alpha_undefined"]
    json.dumps(t, allow_nan=False)  # nothing undefined is written as NaN


def test_one_judge_constant_and_the_other_not_gives_kappa_zero():
    # A right to all: p_e = 1·p_B + 0 = p_B = 1/2 = p_o, κ = 0, defined
    t = judge_agreement(["g", "h"], {"A": [R, R], "B": [R, W]}, n_boot=0)
    assert t["pairs"][0]["kappa"] == 0.0 and t["pairs"][0]["kappa_undefined"] is None


def test_fewer_than_two_judges_has_no_pair_and_no_alpha():
    t = judge_agreement(["g"], {"A": [R]}, n_boot=0)
    assert t["pairs"] == [] and t["all"]["alpha"] is None and t["all"]["alpha_undefined"] == "fewer than two judges"


def test_goals_alike_give_a_point_interval():
    # three goals, each (R,R),(W,R): every resample has agreement 1/2 and κ = 0 (p_A = 1/2, p_B = 1, p_e = 1/2)
    goals = ["a", "a", "b", "b", "c", "c"]
    t = judge_agreement(goals, {"A": [R, W] * 3, "B": [R, R] * 3}, n_boot=200)
    pair = t["pairs"][0]
    assert (pair["agreement_ci_low"], pair["agreement_ci_high"]) == (0.5, 0.5)
    assert (pair["kappa"], pair["kappa_ci_low"], pair["kappa_ci_high"]) == (0.0, 0.0, 0.0)
    # α: each goal has r = 2 (D = 0) and r = 1 (D = 1·1/1 = 1); a resample draws 3 goals, so always n = 12 values,
    # R = 9, W = 3, D = 3: α = 1 − 11·3/27 = −2/9 in every resample
    alpha = t["all"]
    assert (alpha["alpha"], alpha["alpha_ci_low"], alpha["alpha_ci_high"]) == pytest.approx((-2 / 9,) * 3)


def test_resamples_without_both_verdicts_are_left_out_of_the_interval_and_counted():
    # g1 all right, g2 all wrong, perfect agreement: κ = 1. A resample drawing one goal twice (chance 1/2) has
    # one verdict only: κ does not exist there and is left out, the CI taken over the rest
    t = judge_agreement(["g1", "g1", "g2"], {"A": [R, R, W], "B": [R, R, W]}, n_boot=1000)
    pair = t["pairs"][0]
    assert (pair["kappa"], pair["kappa_ci_low"], pair["kappa_ci_high"]) == (1.0, 1.0, 1.0)
    note = pair["kappa_ci_note"]
    kept = int(note.split("CI over ")[1].split(" of ")[0])
    assert note == f"CI over {kept} of 1000 resamples: the others drew answers both judges gave one verdict"
    assert 400 < kept < 600
    assert t["all"]["alpha_ci_note"].endswith("the others drew answers with one verdict only")
    json.dumps(t, allow_nan=False)


def test_a_table_without_resamples_has_no_interval_and_no_note():
    pair = _measure(TABLE)["pairs"][0]
    assert pair["kappa_ci_low"] is None and pair["kappa_ci_note"] is None and pair["agreement_ci_low"] is None


def test_bad_tables_are_refused():
    with pytest.raises(ValueError, match="no answers"):
        judge_agreement([], {"A": []})
    with pytest.raises(ValueError, match="judge 'B' has 1 verdicts for 2 answers"):
        judge_agreement(["g", "g"], {"A": [R, W], "B": [R]})
    with pytest.raises(ValueError, match="1 languages for 2 answers"):
        judge_agreement(["g", "g"], {"A": [R, W]}, ["en"])


def _answer(q, answer, correct, goal="g", language="en", error=None):
    cell = {"compressor": "truncate", "condition": "own", "ratio": 0.2, "goal_id": goal, "language": language}
    return {**cell, "question_id": q, "answer": answer, "correct": correct, "error": error}


def test_the_same_answers_judged_twice_make_a_verdict_table():
    exact = [
        _answer("q1", "Paris", True),
        _answer("目标/q1", "北京。", False, "目标", "zh"),
        _answer("q2", None, False),
    ]
    f1 = [_answer("q1", "Paris", True), _answer("目标/q1", "北京。", True, "目标", "zh"), _answer("q2", None, False)]
    table, failed = verdict_table({"exact": exact, "f1": f1})
    # q2 failed (no answer): left out and counted; the other two kept in the order of the first side
    assert failed == 1
    assert table == {
        "goal_ids": ["g", "目标"],
        "languages": ["en", "zh"],
        "verdicts": {"exact": [True, False], "f1": [True, True]},
    }
    t = judge_agreement(table["goal_ids"], table["verdicts"], table["languages"], n_boot=0)
    assert t["pairs"][0]["agreement"] == 0.5


def test_a_verdict_table_needs_the_same_answers():
    one = [_answer("q1", "Paris", True)]
    with pytest.raises(ValueError, match=r"answer question 'q1' \(own, r=0\.2\) differently"):
        verdict_table({"a": one, "b": [_answer("q1", "Paris.", True)]})
    with pytest.raises(ValueError, match="a and b do not hold the same answer rows"):
        verdict_table({"a": one, "b": [_answer("q2", "Paris", True)]})


def test_the_agreement_reads_as_markdown_with_what_does_not_exist_said():
    text = format_agreement(_measure(TABLE), left_out=2)
    assert text.startswith("## Judge agreement\n\n6 answers judged by every judge (2 left out: a call failed)\n")
    assert "| A | B | 0.833 | 0.667 |" in text and "Krippendorff's α over all judges (en): 0.389\n" in text  # 7/18
    assert "| judge A | judge B | agreement (zh) [95% CI] |" in text and "| A | B | 1.000 | 1.000 |" in text
    one_class = judge_agreement(["g"], {"A": [R], "B": [R]}, n_boot=0)
    assert "| A | B | 1.000 | — (both judges said right to every answer: chance agreement is 1) |" in format_agreement(
        one_class
    )
