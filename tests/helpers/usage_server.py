"""An OpenAI-compatible peer on 127.0.0.1 that reports `usage` as told, and counts the chat requests it gets.

The reader gets its question back with a digest of its memory (so that answers from different memories
differ), the judge "yes", the compressor the first `compressor_words` words of the document. `usage` is
one of: `sound` (prompt = the request's message characters // 10, completion 1 and a matching total),
`absent`, `negative`, `inconsistent` (total ≠ prompt + completion) or `over` (more completion tokens than
max_tokens allowed). With `multiplier` k, the prompt reported is instead k times the cl100k tokens of the
messages' text (the count made on the client's side): a server whose tokenizer counts k times as many.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from typing import Any

from gacc_hf.tokenizer import get_codec
from tests.helpers.peer import JsonPeer


def sound_usage(messages: list[dict[str, str]]) -> tuple[int, int]:
    """The prompt and completion tokens the peer reports in `sound` mode (an independent, simple rule)."""
    return sum(len(m["content"]) for m in messages) // 10, 1


def scaled_usage(messages: list[dict[str, str]], multiplier: int) -> tuple[int, int]:
    """The prompt and completion tokens a server counting `multiplier` times the cl100k tokens reports."""
    return multiplier * sum(get_codec().count(m["content"]) for m in messages), 1


class _Handler(JsonPeer):
    server: UsageServer

    def do_GET(self) -> None:
        with self.server.lock:
            self.server.gets += 1
        self._send({"object": "list", "data": [{"id": "echo", "owned_by": "tests"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        messages = body["messages"]
        system, user = messages[0]["content"], messages[-1]["content"]
        if system.startswith("You grade"):
            role, reply = "judge", "yes"
        elif system.startswith("You compress"):
            document = user.split("Document:\n", 1)[1]
            role, reply = "compressor", " ".join(document.split()[: self.server.compressor_words])
        else:
            memory, question = user.removeprefix("Memory:\n").rsplit("\n\nQuestion: ", 1)
            role, reply = "reader", f"{question} #{hashlib.sha256(memory.encode()).hexdigest()[:6]}"
        reported = self._usage(messages, body)
        with self.server.lock:
            self.server.chats += 1
            self.server.log.append((role, reported.get("usage")))
        self._send({"choices": [{"message": {"role": "assistant", "content": reply}}], **reported})

    def _usage(self, messages: list[dict[str, str]], body: dict[str, Any]) -> dict[str, Any]:
        mode, multiplier = self.server.usage, self.server.multiplier
        prompt, completion = sound_usage(messages) if multiplier is None else scaled_usage(messages, multiplier)
        if mode == "absent":
            return {}
        if mode == "negative":
            prompt = -prompt
        if mode == "over":
            completion = body["max_tokens"] + 1
        total = prompt + completion + (1 if mode == "inconsistent" else 0)
        return {"usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}}


class UsageServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, usage: str = "sound", compressor_words: int = 5, multiplier: int | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.usage, self.compressor_words, self.multiplier = usage, compressor_words, multiplier
        self.lock = threading.Lock()
        self.chats = self.gets = 0
        self.log: list[tuple[str, dict[str, int] | None]] = []  # per chat request: role, usage reported

    def reported(self, role: str) -> tuple[int, int, int]:
        """Requests of a role and the prompt and completion tokens reported for them (0 where none was)."""
        mine = [u or {"prompt_tokens": 0, "completion_tokens": 0} for r, u in self.log if r == role]
        return len(mine), sum(u["prompt_tokens"] for u in mine), sum(u["completion_tokens"] for u in mine)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


@contextmanager
def usage_server(
    usage: str = "sound", compressor_words: int = 5, multiplier: int | None = None
) -> Iterator[UsageServer]:
    """A running `UsageServer`, shut down on exit."""
    server = UsageServer(usage, compressor_words, multiplier)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
