"""Usage records: their shape, the finish that stores them, the local count of values cached before them."""

from __future__ import annotations

from typing import Any

import pytest

from gacc_hf.cost.usage import Metered, fill_usage, local_usage, usage, usage_problem, with_usage
from gacc_hf.run.tasks import Task
from gacc_hf.tokenizer import get_codec


class _Model:
    """A model method that counts a prompt as its characters and an output as its words."""

    token_counter = "words"

    def prompt_tokens(self, item: str) -> int:
        return len(item)

    @staticmethod
    def count_tokens(text: str) -> int:
        return len(text.split())


def _finish(_item: Any, out: Any) -> dict[str, Any]:
    return {"answer": out}


@pytest.mark.parametrize(
    "bad",
    [
        {"prompt_tokens": -1, "completion_tokens": 1, "source": "local"},
        {"prompt_tokens": 1.0, "completion_tokens": 1, "source": "local"},
        {"prompt_tokens": True, "completion_tokens": 1, "source": "local"},
        {"prompt_tokens": 1, "completion_tokens": 1},
        {"prompt_tokens": 1, "completion_tokens": 1, "source": "guess"},
        {"prompt_tokens": 1, "completion_tokens": 1, "source": "local", "cost": 2},
        [1, 1, "local"],
    ],
)
def test_a_malformed_usage_is_named(bad: Any) -> None:
    assert "usage" in usage_problem(bad)


def test_a_sound_usage_passes() -> None:
    assert usage_problem(usage(3, 0, "server")) is None
    assert usage_problem({"prompt_tokens": 0, "completion_tokens": 7, "source": "local"}) is None


def test_a_rule_method_gets_no_usage_and_a_model_method_always_one() -> None:
    assert with_usage(lambda item: item, _finish)("q", "a b") == {"answer": "a b"}  # no prompt: nothing to count
    finish = with_usage(_Model(), _finish)
    # the server's report is stored as it came
    assert finish("abcd", Metered("x", usage(9, 2, "server"))) == {"answer": "x", "usage": usage(9, 2, "server")}
    # no report: the prompt's 4 characters and the output's 3 words, counted here
    assert finish("abcd", "one two three") == {"answer": "one two three", "usage": usage(4, 3, "local")}
    assert finish("问题是什么", "答案 是 这") == {"answer": "答案 是 这", "usage": usage(5, 3, "local")}


def test_without_a_tokenizer_of_its_own_an_output_is_counted_in_cl100k() -> None:
    class Bare:
        def prompt_tokens(self, item: str) -> int:
            return 1

    codec = get_codec()
    for text in ("The deadline is March 3.", "截止日期是三月三日。"):
        assert local_usage(Bare(), "q", text) == usage(1, len(codec.encode(text)), "local")
    assert local_usage(Bare(), "q", True)["completion_tokens"] == len(codec.encode("yes"))  # a verdict said yes


def test_values_cached_before_usage_was_recorded_are_counted_locally_when_read() -> None:
    values = {
        "old": {"answer": "two words"},
        "new": {"answer": "x", "usage": usage(9, 1, "server")},
        "failed": {"error": "boom"},
    }
    fill_usage(_Model(), values, lambda key: Task(key, "prompt", key))
    assert values["old"]["usage"] == usage(6, 2, "local")  # "prompt": 6 characters; 2 words
    assert values["new"]["usage"] == usage(9, 1, "server") and "usage" not in values["failed"]
    rules = {"old": {"answer": "two words"}}
    fill_usage(lambda item: item, rules, lambda key: Task(key, "prompt", key))
    assert rules == {"old": {"answer": "two words"}}
