import pytest

from gacc_hf.methods.judges import ContainsJudge, ExactJudge, F1Judge, exact_match, normalize_answer, token_f1
from gacc_hf.protocol import JudgeInput


def judge_input(answer, refs=("45 minutes",)):
    return JudgeInput("How long?", answer, tuple(refs), "source text")


@pytest.mark.parametrize(
    ("answer", "ok"),
    [
        ("45 minutes", True),
        ("45 Minutes.", True),
        ("  the 45   minutes ", True),
        ("45", False),
        ("", False),
        ("about 45 minutes", False),
    ],
)
def test_exact(answer, ok):
    assert ExactJudge()(judge_input(answer)) is ok


@pytest.mark.parametrize(
    ("answer", "ok"),
    [("It lasted 45 minutes in total.", True), ("145 minutes", False), ("45 min", False), ("", False)],
)
def test_contains(answer, ok):
    assert ContainsJudge()(judge_input(answer)) is ok


def test_contains_ignores_empty_references():
    assert ContainsJudge()(judge_input("anything", refs=("", "  "))) is False


def test_f1_threshold():
    assert token_f1("the primary database", "primary database") == 1.0
    assert F1Judge(0.5)(judge_input("45 minutes of downtime", ("45 minutes",)))  # F1 = 0.8
    assert not F1Judge(0.9)(judge_input("45 minutes of downtime", ("45 minutes",)))
    with pytest.raises(ValueError):
        F1Judge(0)


def test_normaliser_and_alternates():
    assert normalize_answer("An Apple, a day!") == "apple day"
    assert exact_match("forty-five minutes", ["45 minutes", "forty-five minutes"])


@pytest.mark.parametrize("reference", ["🎉", "。", "★★", "\u200b45 minutes"])
def test_an_empty_answer_is_right_for_no_reference(reference):
    for judge in (ExactJudge(), ContainsJudge(), F1Judge(0.5)):
        assert not judge(judge_input("", (reference,))), (judge.name, reference)
        assert judge(judge_input(reference.replace("\u200b", ""), (reference,))), (judge.name, reference)


@pytest.mark.parametrize(("answer", "reference"), [("-1", "1"), ("C#", "C++"), ("i--", "i++"), ("x != y", "x == y")])
def test_judges_tell_signs_and_operators_apart(answer, reference):
    for judge in (ExactJudge(), ContainsJudge()):
        assert not judge(judge_input(answer, (reference,))) and judge(judge_input(reference, (reference,)))
