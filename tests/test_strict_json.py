"""JSON out holds finite numbers only, and a NaN or an infinity is named by its key path."""

from __future__ import annotations

import json
import re

import pytest

from gacc_hf.strict_json import NonFiniteError, check_finite, dumps, non_finite


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ({"scores": [{"micro": 0.5}, {"micro": float("nan")}]}, "scores[1].micro"),
        ({"usage": {"cost": {"读者": float("inf")}}}, "usage.cost.读者"),
        ([1, [2, [3, -float("inf")]]], "[1][1][1]"),
        (float("nan"), "the value"),
    ],
)
def test_the_first_non_finite_number_is_found_by_its_key_path(value, found):
    path, number = non_finite(value)
    assert path == found and isinstance(number, float)
    with pytest.raises(NonFiniteError, match=rf"^f\.json: {re.escape(found)} is -?(nan|inf), not a finite"):
        dumps(value, "f.json")


def test_finite_numbers_and_texts_that_look_like_numbers_pass():
    value = {"a": [0.0, -1e308, 1e308, 3], "b": "NaN", "c": None, "答": True}
    assert non_finite(value) is None
    check_finite(value, "f.json")  # quiet
    assert dumps(value, "f.json", ensure_ascii=False) == json.dumps(value, ensure_ascii=False)


def test_deep_nesting_is_walked_without_recursion():
    value: list = [float("nan")]
    for _ in range(100_000):
        value = [value]
    assert non_finite(value)[0] == "[0]" * 100_000 + "[0]"


def test_a_non_finite_number_deeper_than_json_can_write_is_still_named():
    value: list = [float("inf")]
    for _ in range(5_000):
        value = [value]
    with pytest.raises(NonFiniteError, match=r"^f\.json: (\[0\]){5001} is inf, not a finite"):
        dumps(value, "f.json")
