"""An OpenAI-compatible peer on 127.0.0.1 that reports `usage` as told, and counts the chat requests it gets.

It is the stand-in server (`gacc_hf.methods.stand_in`) with `echo` replies: the reader gets its question back
with a digest of its memory (so that answers from different memories differ), the judge "yes", the
compressor the first `compressor_words` words of the document. `usage` is
one of: `sound` (prompt = the request's message characters // 10, completion 1 and a matching total),
`absent`, `negative`, `inconsistent` (total ≠ prompt + completion) or `over` (more completion tokens than
max_tokens allowed). With `multiplier` k, the prompt reported is instead k times the cl100k tokens of the
messages' text (the count made on the client's side): a server whose tokenizer counts k times as many.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from gacc_hf.methods.stand_in import StandIn, running
from gacc_hf.tokenizer import get_codec


def sound_usage(messages: list[dict[str, str]]) -> tuple[int, int]:
    """The prompt and completion tokens the peer reports in `sound` mode (an independent, simple rule)."""
    return sum(len(m["content"]) for m in messages) // 10, 1


def scaled_usage(messages: list[dict[str, str]], multiplier: int) -> tuple[int, int]:
    """The prompt and completion tokens a server counting `multiplier` times the cl100k tokens reports."""
    return multiplier * sum(get_codec().count(m["content"]) for m in messages), 1


class UsageServer(StandIn):
    def __init__(self, usage: str = "sound", compressor_words: int = 5, multiplier: int | None = None) -> None:
        super().__init__("echo", models=("echo",), compressor_words=compressor_words)
        self.usage, self.multiplier = usage, multiplier
        self.lock = threading.Lock()
        self.log: list[tuple[str, dict[str, int] | None]] = []  # per chat request: role, usage reported

    def reported_usage(self, body: dict[str, Any], content: str) -> dict[str, Any]:
        return self._usage(body["messages"], body)

    def record(self, role: str, answer: dict[str, Any]) -> None:
        with self.lock:
            self.log.append((role, answer.get("usage")))

    def _usage(self, messages: list[dict[str, str]], body: dict[str, Any]) -> dict[str, Any]:
        mode, multiplier = self.usage, self.multiplier
        prompt, completion = sound_usage(messages) if multiplier is None else scaled_usage(messages, multiplier)
        if mode == "absent":
            return {}
        if mode == "negative":
            prompt = -prompt
        if mode == "over":
            completion = body["max_tokens"] + 1
        total = prompt + completion + (1 if mode == "inconsistent" else 0)
        return {"usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}}

    def reported(self, role: str) -> tuple[int, int, int]:
        """Requests of a role and the prompt and completion tokens reported for them (0 where none was)."""
        mine = [u or {"prompt_tokens": 0, "completion_tokens": 0} for r, u in self.log if r == role]
        return len(mine), sum(u["prompt_tokens"] for u in mine), sum(u["completion_tokens"] for u in mine)


@contextmanager
def usage_server(
    usage: str = "sound", compressor_words: int = 5, multiplier: int | None = None
) -> Iterator[UsageServer]:
    """A running `UsageServer`, shut down on exit."""
    with running(UsageServer(usage, compressor_words, multiplier)) as server:
        yield server
