"""Human labels: the file's format and faults, and judges against labels by hand counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gacc_hf.keys import answer_key
from gacc_hf.scoring.labels import LabelsError, human_scores, judge_accuracy, labelled_answers, read_labels

MAIN_LABELS = Path(__file__).parents[2] / "docs" / "results" / "main" / "labels.jsonl"
KEY = answer_key("q1", "Paris")
ZH_KEY = answer_key("目标/q1", "巴黎")


def _write(tmp_path, *lines):
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_the_recorded_labels_are_read():
    labels = read_labels(MAIN_LABELS)
    text = MAIN_LABELS.read_text()
    # the file holds 154 lines; grep counts 21 `"label": "right"` and 19 notes
    assert len(labels) == 154 and len(text.splitlines()) == 154
    assert sum(label.right for label in labels.values()) == text.count('"label": "right"') == 21
    assert sum(label.note is not None for label in labels.values()) == 19
    first = json.loads(text.splitlines()[0])
    assert labels[first["key"]].question_id == first["question_id"]


def test_english_and_chinese_labels_with_notes(tmp_path):
    path = _write(
        tmp_path,
        json.dumps({"key": KEY, "label": "right"}),
        "",
        json.dumps({"key": ZH_KEY, "question_id": "目标/q1", "label": "wrong", "note": "应为北京"}, ensure_ascii=False),
    )
    labels = read_labels(path)
    assert labels[KEY].right and labels[KEY].note is None
    assert not labels[ZH_KEY].right and labels[ZH_KEY].note == "应为北京" and labels[ZH_KEY].question_id == "目标/q1"


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"key": "' + KEY + '", "label": "right"', ":2: not JSON (Expecting ',' delimiter at column"),
        ("[1, 2]", ":2: a label is a JSON object, got list"),
        ('{"key": "' + KEY[:-1] + 'x", "label": "right"}', ":2: field 'key': '" + KEY[:-1] + "x' is not an answer key"),
        ('{"key": "' + ZH_KEY + '", "label": "maybe"}', ":2: field 'label': 'maybe' is not right or wrong"),
        ('{"key": "' + ZH_KEY + '", "label": "right", "score": 1}', ":2: unknown field 'score' (a label has key,"),
        ('{"key": "' + ZH_KEY + '"}', ":2: field 'label' missing"),
        ('{"key": "' + ZH_KEY + '", "label": "right", "note": 3}', ":2: field 'note': 3 is not a string"),
        ('{"key": "' + KEY + '", "label": "wrong"}', ":2: field 'key': " + KEY + " is labelled already on line 1"),
    ],
)
def test_faults_are_named_by_file_line_and_field(tmp_path, line, says):
    path = _write(tmp_path, json.dumps({"key": KEY, "label": "right"}), line)
    with pytest.raises(LabelsError) as caught:
        read_labels(path)
    message = str(caught.value)
    assert message.startswith(f"{path}{says}") and "\n" not in message


def test_a_missing_or_undecodable_file_is_named(tmp_path):
    with pytest.raises(LabelsError, match="no such labels file"):
        read_labels(tmp_path / "none.jsonl")
    (tmp_path / "latin.jsonl").write_bytes(b'{"key": "\xe9"}\n')
    with pytest.raises(LabelsError, match=r"latin\.jsonl: not UTF-8 text"):
        read_labels(tmp_path / "latin.jsonl")


def test_labels_find_their_answers_by_key_in_english_and_chinese(tmp_path):
    path = _write(
        tmp_path,
        json.dumps({"key": KEY, "label": "right"}),
        json.dumps({"key": ZH_KEY, "label": "wrong"}),
        json.dumps({"key": answer_key("q9", "gone"), "label": "wrong"}),
    )
    answers = [
        {"question_id": "q1", "answer": "Paris", "goal_id": "g"},
        {"question_id": "q1", "answer": "Paris.", "goal_id": "g"},  # edited: no longer the labelled answer
        {"question_id": "目标/q1", "answer": "巴黎", "goal_id": "目标"},
        {"question_id": "q2", "answer": None, "goal_id": "g"},  # a failed call has no answer to label
    ]
    matched, unmatched = labelled_answers(answers, read_labels(path))
    assert [(r["question_id"], r["label"]) for r in matched] == [("q1", True), ("目标/q1", False)]
    assert unmatched == [answer_key("q9", "gone")]


def test_judges_against_labels_are_the_hand_counts():
    goals = ["a", "a", "b", "b", "目标", "目标"]
    human = [True, True, False, False, False, True]
    judge = [True, False, True, False, False, True]
    (row,) = judge_accuracy(goals, human, {"contains": judge}, n_boot=0)
    # agrees on answers 1, 4, 5, 6: 4/6; labelled wrong: 3, 4, 5, called right: 3 → 1/3;
    # labelled right: 1, 2, 6, called wrong: 2 → 1/3
    assert (row["judge"], row["n_labelled"], row["n_right"]) == ("contains", 6, 3)
    assert (row["accuracy"], row["false_right"], row["false_wrong"]) == pytest.approx((4 / 6, 1 / 3, 1 / 3))
    assert row["accuracy_ci_low"] is None


def test_a_rate_without_answers_to_count_is_said():
    # every answer labelled right: the false-right rate counts over no answer
    (row,) = judge_accuracy(["g", "h"], [True, True], {"exact": [True, False]}, n_boot=100)
    assert row["false_right"] is None and row["false_right_undefined"] == "no answer is labelled wrong"
    assert row["false_wrong"] == 0.5 and row["false_right_ci_low"] is None
    json.dumps(row, allow_nan=False)


def test_goals_alike_give_point_intervals_and_lopsided_draws_are_counted():
    goals = ["a", "a", "b", "b", "c", "c"]
    (row,) = judge_accuracy(goals, [True, False] * 3, {"f1": [True, True] * 3}, n_boot=200)
    # every goal: one right labelled right, one wrong called right: accuracy 1/2, false-right 1, false-wrong 0
    assert (row["accuracy_ci_low"], row["accuracy_ci_high"]) == (0.5, 0.5)
    assert (row["false_right_ci_low"], row["false_right_ci_high"], row["false_wrong_ci_high"]) == (1.0, 1.0, 0.0)
    # goal a labelled right, b wrong: a resample drawing a twice (chance 1/4) has no answer labelled wrong
    (row,) = judge_accuracy(["a", "b"], [True, False], {"f1": [True, True]}, n_boot=1000)
    kept = int(row["false_right_ci_note"].split("CI over ")[1].split(" of ")[0])
    assert 650 < kept < 850 and row["false_right_ci_note"].endswith("the others drew no answer labelled wrong")
    json.dumps(row, allow_nan=False)


def test_the_verdict_counts_must_match():
    with pytest.raises(ValueError, match="judge 'exact' has 1 verdicts for 2 labelled answers"):
        judge_accuracy(["g", "g"], [True, False], {"exact": [True]})


def test_scores_under_human_verdicts_are_a_reference_beside_the_judge():
    def row(goal, q, label, correct):
        return {"compressor": "truncate", "condition": "own", "ratio": 0.2, "goal_id": goal, "question_id": q,
                "label": label, "correct": correct, "error": None}  # fmt: skip

    rows = [row("g1", "q1", True, True), row("g1", "q2", False, True), row("目标", "q3", True, True)]
    (ref,) = human_scores(rows, n_boot=0, seed=0)
    # labels R, W, R: Micro 2/3; goal g1 has a wrong, 目标 has none: Macro 1/2; the judge said right to all: 1
    assert (ref["compressor"], ref["n_questions"], ref["n_goals"]) == ("truncate", 3, 2)
    assert (ref["human_micro"], ref["human_macro"], ref["judge_micro"]) == pytest.approx((2 / 3, 0.5, 1.0))


def test_a_label_naming_another_question_than_its_answer_is_refused(tmp_path):
    path = _write(tmp_path, json.dumps({"key": ZH_KEY, "question_id": "目标/q2", "label": "right"}, ensure_ascii=False))
    answers = [{"question_id": "目标/q1", "answer": "巴黎", "goal_id": "目标"}]
    with pytest.raises(LabelsError, match=f"label {ZH_KEY} names question '目标/q2', but the answer with that key"):
        labelled_answers(answers, read_labels(path))
