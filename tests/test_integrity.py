from dataclasses import dataclass

from gacc_hf.integrity import count_exposures, independent_budget
from gacc_hf.protocol import CompressorInput, ReaderInput


def test_faithful_inputs_expose_nothing():
    item = CompressorInput("ctx: the answer is 42", "find the answer", 5)
    assert count_exposures(item, ["What is the answer?", "42"], {"context": item.context, "goal": item.goal}) == 0


def test_question_smuggled_into_goal_is_counted():
    item = CompressorInput("ctx", "find it. What is the answer?", 5)
    assert count_exposures(item, ["What is the answer?"], {"context": "ctx", "goal": "find it."}) == 1


def test_sibling_question_in_reader_input_is_counted():
    item = ReaderInput("memory", "Q1? Q2?")
    assert count_exposures(item, ["Q2?", "Q3?"], {"memory": "memory", "question": "Q1?"}) == 1


def test_subclass_with_extra_field_is_an_exposure():
    @dataclass(frozen=True)
    class Leaky(ReaderInput):
        gold: str = "42"

    assert count_exposures(Leaky("m", "q"), [], {"memory": "m", "question": "q"}) == 1


def test_independent_budget():
    assert independent_budget(100, 0.29) == 29 and independent_budget(3, 1.0) == 3
