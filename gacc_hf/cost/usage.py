"""Tokens each model call sent and received, carried from the method to the runner and onto the stored value.

A model method offers `prompt_tokens(item)` (the prompt tokens one call on `item` sends, counted with its
own tokenizer), `count_tokens(text)` and `token_counter` (which tokenizer that is). A served method also
offers `metered(item) -> Metered`: its output with the usage its server reported (or counted locally where
the server's `usage` is missing or wrong). The runner calls `call_of(fn)` and finishes outputs through
`with_usage`, so every freshly computed value of a model method carries
`"usage": {"prompt_tokens", "completion_tokens", "source"}`; a value cached before usage was recorded gets
it counted locally when read (`fill_usage`), marked `local`. Rule methods send no prompt: no usage.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from gacc_hf.tokenizer import get_codec

SOURCES = ("server", "local")
CL100K = "cl100k_base"


class Metered(NamedTuple):
    """A method's output and the usage of the call that produced it."""

    output: Any
    usage: dict[str, Any]


def usage(prompt_tokens: int, completion_tokens: int, source: str) -> dict[str, Any]:
    """A usage record as values store it."""
    return {"prompt_tokens": int(prompt_tokens), "completion_tokens": int(completion_tokens), "source": source}


def usage_problem(value: Any) -> str | None:
    """What is wrong with a stored `usage` (None: nothing).

    >>> usage_problem({"prompt_tokens": 3, "completion_tokens": 1, "source": "server"}) is None
    True
    >>> usage_problem({"prompt_tokens": -1, "completion_tokens": 1, "source": "local"})[:76]
    "a value's 'usage' needs non-negative int prompt_tokens and completion_tokens"
    """
    ok = (
        type(value) is dict
        and sorted(value) == ["completion_tokens", "prompt_tokens", "source"]
        and all(type(value[f]) is int and value[f] >= 0 for f in ("prompt_tokens", "completion_tokens"))
    )
    if not ok:
        return f"a value's 'usage' needs non-negative int prompt_tokens and completion_tokens, got {value!r:.80}"
    if value["source"] not in SOURCES:
        return f"a value's 'usage' source must be server or local, got {value['source']!r:.40}"
    return None


def meters(fn: Any) -> bool:
    """Whether `fn` is a model method that counts its prompts (rule methods do not)."""
    return callable(getattr(fn, "prompt_tokens", None))


def reports_usage(fn: Any) -> bool:
    """Whether `fn` is a served method: its server reports the usage it bills, which the count made here
    (cl100k over the messages' text) only estimates."""
    return callable(getattr(fn, "metered", None))


def call_of(fn: Any) -> Callable[[Any], Any]:
    """What the runner calls: a served method's `metered` (output and server usage), else the method."""
    return fn.metered if reports_usage(fn) else fn


def token_counter(fn: Any) -> str:
    """The tokenizer a method counts with (cl100k where it names none)."""
    return str(getattr(fn, "token_counter", CL100K))


def count_tokens(fn: Any, text: str) -> int:
    """Tokens of `text` with the method's tokenizer (cl100k where it has none)."""
    counter = getattr(fn, "count_tokens", None)
    return int(counter(text)) if callable(counter) else len(get_codec().encode(text))


def output_text(output: Any) -> str:
    """The text a call generated, as far as its output tells: a verdict was a yes or a no."""
    if isinstance(output, bool):
        return "yes" if output else "no"
    return output if isinstance(output, str) else str(output)


def local_usage(fn: Any, item: Any, output: Any) -> dict[str, Any]:
    """A call's usage counted here: its prompt, and its output with the method's tokenizer."""
    return usage(fn.prompt_tokens(item), count_tokens(fn, output_text(output)), "local")


def with_usage(fn: Any, finish: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """`finish` for a method's outputs that also stores each call's usage on the value (model methods)."""
    if not meters(fn):
        return finish

    def finished(item: Any, out: Any) -> Any:
        if isinstance(out, Metered):
            return {**finish(item, out.output), "usage": out.usage}
        return {**finish(item, out), "usage": local_usage(fn, item, out)}

    return finished


_STORED_TEXT = {"memory": "memory", "answer": "answer"}


def fill_usage(fn: Any, values: Mapping[str, dict[str, Any]], task: Callable[[str], Any]) -> None:
    """Give cached values stored without usage (before it was recorded) a local count, in memory only."""
    if not meters(fn):
        return
    for key, value in values.items():
        if "usage" in value or "error" in value:
            continue
        text = next((value[f] for f in _STORED_TEXT if isinstance(value.get(f), str)), None)
        out = text if text is not None else value.get("correct")
        value["usage"] = local_usage(fn, task(key).item, out)


def completion_limit(fn: Any, item: Any) -> int:
    """The most tokens one call on `item` may generate (0 for a method that generates none)."""
    for name in ("max_tokens", "max_new_tokens"):
        limit = getattr(fn, name, None)
        if callable(limit):
            return int(limit(item))
        if isinstance(limit, int) and not isinstance(limit, bool):
            return limit
    return 0
