"""A stand-in OpenAI-compatible server on 127.0.0.1: served runs tried, tested and measured without a model.

`gacc serve-test` runs it in the foreground; the tests run it in a thread (`running`), the benchmarks as a
`gacc serve-test` child process. It answers, under any prefix (`/v1` by convention):

- `GET /v1/models`: the model names it was given (default `stand-in`), each listed as vLLM lists one;
- `POST /v1/chat/completions`: an answer made without a model (`echo`, `fixed` or `content`:
  `gacc_hf.methods.stand_in_replies`) after a latency drawn from a log-normal law (median `latency` seconds,
  sigma `spread`, seeded; 0: at once), with `usage` in the stand-in's own tokens: each message's UTF-8 bytes
  ÷ 4, rounded up (a real server counts with its model's tokenizer), the completion within `max_tokens`;
- `GET /v1/stats`: chat requests, busy seconds (first request in to last reply out), the time integral of
  requests in flight over them, the sum of latencies and the requests in flight now; `POST` returns them and
  starts counting afresh (what the benchmarks measure a window by).

A request it cannot read gets 400, an unknown path 404, a path asked with the wrong method 405, a body over
`MAX_BODY` 413, each with a JSON error; nothing is printed per request, and a client that goes away is not
an error. Connections are kept alive (HTTP/1.1). Where given, it stops by itself after `max_requests` chat
requests or `idle` seconds without a request.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http import HTTPStatus
from typing import Any

from gacc_hf.localhost import HOST, bind
from gacc_hf.methods.stand_in_replies import REPLIES, reply

MODEL = "stand-in"
SIGMA = 0.5
MAX_BODY = 64 * 1024 * 1024


def token_usage(body: dict[str, Any], content: str) -> dict[str, int]:
    """The `usage` of one request and its answer in the stand-in's tokens (4 UTF-8 bytes each, rounded up)."""
    prompt = sum(-(-len(m["content"].encode()) // 4) for m in body["messages"])
    completion = min(-(-len(content.encode()) // 4), body.get("max_tokens") or 2**31)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


class _Refused(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


def _messages(raw: bytes) -> dict[str, Any]:
    """The JSON body of a chat request, with a non-empty `messages` list of text messages; else a 400."""
    try:
        body = json.loads(raw)
    except ValueError:
        raise _Refused(HTTPStatus.BAD_REQUEST, "the body is not JSON") from None
    messages = body.get("messages") if isinstance(body, dict) else None
    if not messages or not isinstance(messages, list):
        raise _Refused(HTTPStatus.BAD_REQUEST, "the body has no `messages` list")
    if not all(isinstance(m, dict) and isinstance(m.get("content"), str) for m in messages):
        raise _Refused(HTTPStatus.BAD_REQUEST, "every message needs a text `content`")
    return body


class StandIn:
    """What the stand-in answers and counts. Subclasses may change `reported_usage` (what a reply reports) and `record`
    (told of every chat request's role and answer)."""

    def __init__(
        self,
        replies: str = "echo",
        *,
        answer: str = "yes",
        models: tuple[str, ...] = (MODEL,),
        latency: float = 0.0,
        spread: float = SIGMA,
        seed: int = 0,
        compressor_words: int = 50,
        report_usage: bool = True,
        max_requests: int | None = None,
        idle: float | None = None,
    ) -> None:
        problems = [
            f"--replies {replies!r}: one of {', '.join(REPLIES)}" if replies not in REPLIES else "",
            "--models: at least one name" if not [m for m in models if m] else "",
            f"--latency {latency}: seconds >= 0" if not latency >= 0 else "",
            f"--spread {spread}: >= 0" if not spread >= 0 else "",
            f"--compressor-words {compressor_words}: >= 1" if compressor_words < 1 else "",
            f"--max-requests {max_requests}: >= 1" if max_requests is not None and max_requests < 1 else "",
            f"--idle {idle}: seconds > 0" if idle is not None and not idle > 0 else "",
        ]
        if any(problems):
            raise ValueError("serve-test: " + "; ".join(p for p in problems if p))
        self.replies, self.answer, self.models = replies, answer, tuple(m for m in models if m)
        self.latency, self.spread, self.compressor_words = latency, spread, compressor_words
        self.report_usage, self.max_requests, self.idle = report_usage, max_requests, idle
        self.url: str | None = None  # set once bound
        self.chats = self.gets = 0  # chat requests answered, `/models` requests answered
        self._rng = random.Random(seed)
        self._stop: asyncio.Event | None = None
        self._drain = False
        self._last_seen = time.monotonic()
        self._open: dict[asyncio.Task[Any], asyncio.StreamWriter] = {}  # connections and their writers
        self.reset()

    def reset(self) -> None:
        """Start the `/stats` counts afresh."""
        self.in_flight, self.area, self.service, self.requests = 0, 0.0, 0.0, 0
        self.first: float | None = None
        self.last = self.changed = 0.0

    def stats(self) -> dict[str, Any]:
        busy = (self.last - self.first) if self.first is not None else 0.0
        keys = ("requests", "area", "service", "in_flight")
        return {"busy": busy, **{k: getattr(self, k) for k in keys}}

    def _change(self, delta: int) -> None:
        now = time.monotonic()
        if self.first is None:
            self.first = self.changed = now
        self.area += self.in_flight * (now - self.changed)
        self.in_flight += delta
        self.changed = self.last = now

    def reported_usage(self, body: dict[str, Any], content: str) -> dict[str, Any]:
        """The fields a reply adds: `{"usage": ...}` (`token_usage`), or nothing when usage is not reported."""
        return {"usage": token_usage(body, content)} if self.report_usage else {}

    def record(self, role: str, answer: dict[str, Any]) -> None:
        """Told of every chat request answered: its role (`compressor`, `reader`, `judge`, `other`) and reply."""

    async def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        self.chats += 1
        self.requests += 1
        if self.max_requests is not None and self.chats >= self.max_requests and self._stop is not None:
            self._drain = True
            self._stop.set()
        delay = self._rng.lognormvariate(math.log(self.latency), self.spread) if self.latency else 0.0
        self._change(+1)
        try:
            role, content = reply(body, self.replies, self.answer, self.compressor_words)
            await asyncio.sleep(delay)
        finally:
            self.service += delay
            self._change(-1)
        message = {"role": "assistant", "content": content}
        answer = {
            "object": "chat.completion",
            "model": body.get("model", self.models[0]),
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            **self.reported_usage(body, content),
        }
        self.record(role, answer)
        return answer

    async def route(self, method: str, target: str, raw: bytes) -> dict[str, Any]:
        """The JSON answer to one request; `_Refused` for one it does not take."""
        path = target.split("?", 1)[0].rstrip("/")
        for suffix, methods in (("/chat/completions", ("POST",)), ("/models", ("GET",)), ("/stats", ("GET", "POST"))):
            if path.endswith(suffix):
                if method not in methods:
                    raise _Refused(HTTPStatus.METHOD_NOT_ALLOWED, f"{path} takes {' or '.join(methods)}")
                break
        else:
            raise _Refused(HTTPStatus.NOT_FOUND, f"no {path}: the stand-in serves /v1/models, /v1/chat/completions")
        if suffix == "/chat/completions":
            return await self.chat(_messages(raw))
        if suffix == "/models":
            self.gets += 1
            return {"object": "list", "data": [{"id": m, "object": "model", "owned_by": MODEL} for m in self.models]}
        stats = self.stats()
        if method == "POST":
            self.reset()
        return stats

    async def _answer(self, reader: asyncio.StreamReader) -> tuple[HTTPStatus, dict[str, Any], bool] | None:
        """One request read and answered: status, JSON body, whether the connection stays open; None at its end."""
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        except asyncio.LimitOverrunError:
            too_long = HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE
            return too_long, {"error": {"message": "the request's head is too long", "code": too_long.value}}, False
        self._last_seen = time.monotonic()
        request = head[0].split(" ")
        headers = dict((k.strip().lower(), v.strip()) for k, _, v in (h.partition(":") for h in head[1:] if h))
        try:
            if len(request) != 3 or not request[2].startswith("HTTP/"):
                raise _Refused(HTTPStatus.BAD_REQUEST, "not an HTTP request line")
            if "transfer-encoding" in headers:
                raise _Refused(HTTPStatus.LENGTH_REQUIRED, "send the body with a Content-Length")
            length = headers.get("content-length", "0")
            if not length.isdigit():
                raise _Refused(HTTPStatus.BAD_REQUEST, f"Content-Length {length!r} is not a number")
            if int(length) > MAX_BODY:
                raise _Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"a body is at most {MAX_BODY} bytes")
            raw = await reader.readexactly(int(length))
            keep = request[2] == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
            return HTTPStatus.OK, await self.route(request[0], request[1], raw), keep
        except _Refused as exc:
            return exc.status, {"error": {"message": str(exc), "code": exc.status.value}}, False
        except (asyncio.IncompleteReadError, ConnectionError):
            return None

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._open[task] = writer
        try:
            while (answered := await self._answer(reader)) is not None:
                status, answer, keep = answered
                data = json.dumps(answer, ensure_ascii=False).encode()
                close = "" if keep else "Connection: close\r\n"
                head = f"HTTP/1.1 {status.value} {status.phrase}\r\nContent-Type: application/json\r\n"
                writer.write(f"{head}Content-Length: {len(data)}\r\n{close}\r\n".encode() + data)
                await writer.drain()
                if not keep:
                    break
        except ConnectionError:  # the client went away mid-reply
            pass
        finally:
            if task is not None:
                self._open.pop(task, None)
            writer.close()

    async def serve(self, sock: socket.socket, ready: Callable[[], None] | None = None) -> str:
        """Serve on the bound `sock` until stopped (`stop`, `max_requests`, `idle`); why it stopped."""
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._connection, sock=sock)
        if ready is not None:
            ready()
        tick = min(1.0, self.idle or 1.0)
        while not self._stop.is_set() and (self.idle is None or time.monotonic() - self._last_seen < self.idle):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), timeout=tick)
        if self._drain:
            await asyncio.sleep(0.5)  # the last replies go out
        server.close()
        for writer in list(self._open.values()):  # a kept-alive connection ends as its client sees a close
            writer.close()
        if self._open:
            await asyncio.wait(list(self._open), timeout=5)
        if self._drain:
            return f"after {self.chats} chat requests (--max-requests)"
        return "" if self._stop.is_set() else f"after {self.idle:g} s without a request (--idle)"

    def stop(self) -> None:
        """Ask `serve` to end (from any thread)."""
        if self._stop is not None:
            self._stop.set()


def listen(port: int, option: str = "--port") -> socket.socket:
    """A socket listening on 127.0.0.1:`port` (0: any free port); a port in use or not allowed said naming it."""

    def open_socket() -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((HOST, port))
            sock.listen(1024)
        except OSError:
            sock.close()
            raise
        return sock

    return bind(option, port, open_socket)


def base_url(sock: socket.socket) -> str:
    return f"http://{HOST}:{sock.getsockname()[1]}/v1"


@contextlib.contextmanager
def running(stand_in: StandIn, port: int = 0) -> Iterator[StandIn]:
    """`stand_in` serving on 127.0.0.1:`port` (0: any free port) in a thread, its `url` set; stopped on exit."""
    sock = listen(port)
    stand_in.url = base_url(sock)
    loop = asyncio.new_event_loop()
    started = threading.Event()
    thread = threading.Thread(target=loop.run_until_complete, args=(stand_in.serve(sock, started.set),), daemon=True)
    thread.start()
    while not started.wait(0.1):
        if not thread.is_alive():
            raise RuntimeError("the stand-in server ended before serving")
    try:
        yield stand_in
    finally:
        loop.call_soon_threadsafe(stand_in.stop)
        thread.join()
        loop.close()
        sock.close()
