import math
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gacc_hf.budget import exact_ratio, fit_to_budget, token_budget
from gacc_hf.tokenizer import get_codec


@pytest.mark.parametrize(
    ("n", "r", "expected"),
    [
        (100, 0.29, 29),
        (100, 0.57, 57),
        (100, 0.58, 58),
        (1000, 0.001, 1),
        (7, 0.5, 3),
        (10, 1, 10),
        (10, 0, 0),
        (3, "0.34", 1),
        (100, Fraction(1, 3), 33),
        (100, Decimal("0.29"), 29),
    ],
)
def test_exact_floor(n, r, expected):
    # 0.29 * 100, 0.57 * 100 and 0.58 * 100 all fall just below the integer in binary floating point
    assert token_budget(n, r) == expected


@pytest.mark.parametrize("bad", [1.5, -0.1, float("nan"), float("inf"), True, None, "abc", "nan", [0.1]])
def test_bad_ratios_are_value_errors(bad):
    with pytest.raises(ValueError):
        token_budget(100, bad)


@pytest.mark.parametrize("bad_n", [-1, 1.5, True, "10"])
def test_bad_token_counts(bad_n):
    with pytest.raises(ValueError):
        token_budget(bad_n, 0.5)


@given(st.integers(0, 10**7), st.integers(0, 10**4))
def test_floor_matches_integer_arithmetic(n, basis_points):
    r = basis_points / 10**4
    assert token_budget(n, r) == n * basis_points // 10**4
    assert exact_ratio(r) == Fraction(basis_points, 10**4)


SPECIAL = [
    "👩\u200d👩\u200d👧",
    "🇺🇦",
    "e\u0301\u0302",
    "漢字仮名交じり文",
    "  \t\n\n   ",
    "1234567890" * 5,
    "\u200b",
    "ﷺ",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "<|endoftext|>",
    "\ufffd",
]
texts = st.lists(st.one_of(st.text(max_size=40), st.sampled_from(SPECIAL)), max_size=12).map("".join)


@settings(max_examples=400, deadline=None)
@given(texts, st.integers(0, 80))
def test_memory_is_a_prefix_within_budget(text, budget):
    codec = get_codec()
    memory = fit_to_budget(text, budget)
    ids = codec.encode(text)
    assert text.startswith(memory.text)
    assert len(codec.encode(memory.text)) == memory.reencoded_tokens <= budget
    assert memory.retained_tokens <= budget
    assert memory.unused_budget == budget - memory.retained_tokens
    assert memory.padding_tokens == 0
    assert memory.proposed_tokens == len(ids)
    if "\ufffd" not in text:
        assert "\ufffd" not in memory.text
    if len(ids) <= budget:
        assert memory.text == text and not memory.truncated
    else:
        assert memory.truncated
        # the memory is the decoded token prefix it claims to retain (incomplete UTF-8 tail dropped)
        assert memory.text == codec.decode_bytes(ids[: memory.retained_tokens]).decode("utf-8", "ignore")


@settings(max_examples=200, deadline=None)
@given(texts)
def test_zero_budget_is_empty(text):
    memory = fit_to_budget(text, 0)
    assert memory.text == "" and memory.retained_tokens == 0 and memory.reencoded_tokens == 0


@given(st.integers(1, 60))
def test_split_emoji_is_dropped_not_replaced(budget):
    text = "🙂" * 40  # several tokens per emoji: most prefixes end inside a character
    codec = get_codec()
    assume(len(codec.encode(text)) > budget)
    memory = fit_to_budget(text, budget)
    assert set(memory.text) <= {"🙂"}
    assert len(codec.encode(memory.text)) <= budget


def test_short_output_is_not_padded():
    memory = fit_to_budget("tiny", 50)
    assert memory.text == "tiny" and memory.unused_budget == 50 - memory.retained_tokens
    assert memory.padding_tokens == 0 and not memory.truncated


def test_non_string_output_is_rejected():
    with pytest.raises(TypeError, match="str"):
        fit_to_budget(b"bytes", 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        fit_to_budget("x", -1)


def test_floor_is_not_float_multiplication():
    assert math.floor(0.29 * 100) == 28  # the trap the exact path avoids
    assert token_budget(100, 0.29) == 29
