import hashlib

import pytest

from gacc_hf.keys import make_key
from gacc_hf.run.cache.key_template import KeyTemplate


def _sha(record: str) -> str:
    return hashlib.sha256(record.encode("utf-8")).hexdigest()


def test_answer_keys_are_the_hand_written_records():
    """The record written out by hand: parts sorted by name, `name<US>repr(value)` joined by `<RS>`."""
    answer = KeyTemplate(("memory", "question"), reader="fields", revision="fields-v1")
    record = "memory\x1f'm-hash'\x1equestion\x1f'q-hash'\x1ereader\x1f'fields'\x1erevision\x1f'fields-v1'"
    assert answer("m-hash", "q-hash") == _sha(record)
    assert make_key(memory="m-hash", question="q-hash", reader="fields", revision="fields-v1") == _sha(record)


def test_memory_keys_with_an_int_part_are_the_hand_written_records():
    memory = KeyTemplate(("context", "goal", "budget"), tokenizer="cl100k_base@r", protocol="gacc-1", compressor="x")
    record = (
        "budget\x1f37\x1ecompressor\x1f'x'\x1econtext\x1f'c'\x1egoal\x1f''\x1eprotocol\x1f'gacc-1'"
        "\x1etokenizer\x1f'cl100k_base@r'"
    )
    assert memory("c", "", 37) == _sha(record)
    assert memory("c", "", "37") != _sha(record)  # a str 37 is another part, as with make_key


@pytest.mark.parametrize(
    "fixed",
    [
        {"judge": "exact", "revision": "exact-v1"},
        {"judge": "my{0}judge}", "revision": "{!r}"},  # format braces in fixed values are written as themselves
        {"judge": "quote'd\"é中", "revision": None},
        {"judge": True, "revision": 2.5},
    ],
)
def test_verdict_keys_equal_make_key(fixed):
    verdict = KeyTemplate(("question", "answer", "references", "source"), **fixed)
    for values in [("q", "a", "r", "s"), ("{}", "}{", "'", "\x1e"), ("q", "", "r", "s")]:
        expected = make_key(**dict(zip(verdict.names, values, strict=True)), **fixed)
        assert verdict(*values) == expected


def test_a_name_given_twice_is_refused():
    with pytest.raises(ValueError, match="distinct"):
        KeyTemplate(("memory", "memory"))
    with pytest.raises(ValueError, match="distinct"):
        KeyTemplate(("memory", "reader"), reader="fields")
    assert KeyTemplate(("memory",), reader="fields")("m") == make_key(memory="m", reader="fields")


def test_a_missing_or_extra_part_is_refused():
    key = KeyTemplate(("memory", "question"), reader="fields")
    with pytest.raises(TypeError, match="needs 2 parts"):
        key("m")
    with pytest.raises(TypeError, match="needs 2 parts"):
        key("m", "q", "x")


def test_keys_given_their_first_part_are_the_hand_written_records():
    """`given(memory)(tail(question))`: the sha256 of the same record, hashed in two pieces."""
    answer = KeyTemplate(("memory", "question"), reader="fields", revision="fields-v1")
    record = "memory\x1f'm-hash'\x1equestion\x1f'q-hash'\x1ereader\x1f'fields'\x1erevision\x1f'fields-v1'"
    of_memory = answer.given("m-hash")
    assert of_memory(answer.tail("q-hash")) == _sha(record)
    assert of_memory(answer.tail("q-other")) == answer("m-hash", "q-other") != _sha(record)
    assert answer.given("m-other")(answer.tail("q-hash")) == answer("m-other", "q-hash")


def test_a_fixed_part_between_the_varying_parts_is_in_the_given_half():
    key = KeyTemplate(("a", "c", "e"), b="{x}", d=2)
    record = "a\x1f'1'\x1eb\x1f'{x}'\x1ec\x1f'3'\x1ed\x1f2\x1ee\x1f'5'"
    assert key.given("1")(key.tail("3", "5")) == key("1", "3", "5") == _sha(record)


def test_given_is_refused_when_the_first_part_is_not_written_first():
    verdict = KeyTemplate(("question", "answer"), judge="exact")  # `answer` sorts before `question`
    with pytest.raises(ValueError, match="not written before"):
        verdict.given("q")
    with pytest.raises(ValueError, match="not written before"):
        verdict.tail("a")
    with pytest.raises(ValueError, match="not written before"):
        KeyTemplate(("memory",), reader="fields").given("m")  # nothing to complete
    with pytest.raises(TypeError, match="a tail needs 1 parts"):
        KeyTemplate(("memory", "question"), reader="fields").tail("q", "x")
