"""The usage of one served call: the server's `usage` where it is sound, else counted here (cl100k).

OpenAI-compatible servers report `usage: {prompt_tokens, completion_tokens, total_tokens}`. A report that is
absent, not made of non-negative integers, or inconsistent (total ≠ prompt + completion, more completion
tokens than `max_tokens` allowed) is not believed: that call is counted locally, and the method warns once.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Sequence
from typing import Any

from gacc_hf.cost.usage import CL100K, Metered, usage
from gacc_hf.tokenizer import get_codec

log = logging.getLogger(__name__)


def _whole(value: Any) -> bool:
    return type(value) is int and value >= 0


def usage_report_problem(reported: Any, max_tokens: int) -> str | None:
    """Why a server's `usage` cannot be believed (None: it can).

    >>> usage_report_problem({"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}, 4) is None
    True
    >>> usage_report_problem({"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 13}, 4)
    'total_tokens 13 is not prompt_tokens + completion_tokens (12)'
    """
    if reported is None:
        return "the answer has no usage"
    if not isinstance(reported, dict):
        return f"usage is {type(reported).__name__}, not an object"
    prompt, completion = reported.get("prompt_tokens"), reported.get("completion_tokens")
    if not (_whole(prompt) and _whole(completion)):
        return f"usage prompt_tokens={prompt!r:.20} completion_tokens={completion!r:.20} are not whole numbers >= 0"
    total = reported.get("total_tokens", prompt + completion)
    if total != prompt + completion:
        return f"total_tokens {total!r:.20} is not prompt_tokens + completion_tokens ({prompt + completion})"
    if completion > max_tokens:
        return f"completion_tokens {completion} exceeds the max_tokens {max_tokens} asked for"
    return None


_QUESTION = "\n\nQuestion: "


@functools.lru_cache(maxsize=1024)
def _head_tokens(head: str) -> int:
    return get_codec().count(head)


def message_tokens(content: str) -> int:
    """cl100k tokens of one message's text.

    The reader's and the judge's prompts put one long text (a memory, a source) before a blank line and
    `Question: `, and a dry run counts hundreds of thousands of them: the part up to that blank line is counted
    once per distinct text (the last 1,024 are remembered), the rest per call. The two counts add up to the
    whole's: a line break followed by a character that is not white space always ends a cl100k pre-token (no
    pattern of its split expression runs from a line break into such a character), and byte-pair merges never
    cross pre-tokens.
    """
    cut = content.rfind(_QUESTION)
    if cut < 0:
        return get_codec().count(content)
    return _head_tokens(content[: cut + 2]) + get_codec().count(content[cut + 2 :])


class ServedUsage:
    """One served method's usage counter: believes sound server reports, warns once about the others."""

    def __init__(self, method: str) -> None:
        self.method = method
        self._warned = False
        self._lock = threading.Lock()

    @staticmethod
    def count(text: str) -> int:
        return len(get_codec().encode(text))

    @staticmethod
    def prompt_tokens(messages: Sequence[dict[str, str]]) -> int:
        """cl100k tokens of the messages' text (the server's template and tokenizer are unknown); one message
        at a time (`message_tokens`), since a dry run counts hundreds of thousands of prompts (a thread pool
        per call, as `count_batch` makes, would cost more than the encoding)."""
        return sum(message_tokens(m["content"]) for m in messages)

    def usage(self, reported: Any, messages: Sequence[dict[str, str]], reply: str, max_tokens: int) -> dict[str, Any]:
        """The call's usage record: `server` when the report is sound, else `local`."""
        problem = usage_report_problem(reported, max_tokens)
        if problem is None:
            return usage(reported["prompt_tokens"], reported["completion_tokens"], "server")
        with self._lock:
            warn, self._warned = not self._warned, True
        if warn:
            log.warning("%s: %s; such calls are counted locally (cl100k)", self.method, problem)
        return usage(self.prompt_tokens(messages), self.count(reply), "local")


class MeteredCalls:
    """The usage side of a served method (`gacc_hf.methods.openai_server`), which gives it `messages(item)`,
    `max_tokens(item)`, `parse(reply)`, its `client` and its `_meter` (a `ServedUsage`)."""

    token_counter = CL100K  # the server's tokenizer is unknown: prompts are counted in cl100k
    client: Any
    _meter: ServedUsage

    def messages(self, item: Any) -> list[dict[str, str]]:
        raise NotImplementedError

    def max_tokens(self, item: Any) -> int:
        raise NotImplementedError

    @staticmethod
    def parse(reply: str) -> Any:
        return reply

    def prompt_tokens(self, item: Any) -> int:
        """cl100k tokens of the messages one call on `item` sends (their text, not the chat template)."""
        return ServedUsage.prompt_tokens(self.messages(item))

    @staticmethod
    def count_tokens(text: str) -> int:
        return ServedUsage.count(text)

    def metered(self, item: Any) -> Metered:
        """The parsed output with the call's usage: the server's where it is sound, else counted here."""
        messages, limit = self.messages(item), self.max_tokens(item)
        reply, reported = self.client.complete(messages, limit)
        return Metered(self.parse(reply), self._meter.usage(reported, messages, reply, limit))
