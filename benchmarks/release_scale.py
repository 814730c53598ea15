"""A run at the size of the GACC-Bench release against latency servers: calls, wall against the ideal, memory,
cache, the report's and the comparison's time, and a run killed half way then resumed.

Data: `benchmarks/release_data.py` (281 contexts, 500 goals, 2,571 questions, 20% Chinese, 2k-32k cl100k
tokens), written to a JSONL file and run by `gacc run` as a child process, as a user would. Methods: 10
compressors (`truncate`, `goal-lines`, `bm25` and seven served ones, `openai:c1` … `openai:c7`), ratios
0.1/0.2/0.3, conditions own/none/cross with the ceilings and the floor (full, oracle, closed); reader
`openai:reader` and judge `openai:judge`. Each role is served by 2 replicas of the stand-in server, `gacc
serve-test` (content replies, log-normal service time of median `--median`), at concurrency 64 per
replica (`concurrency=128` over the `|`-separated pair).

Printed, each with the load average: calls per role (the servers' counts); wall against the ideal, where
ideal = Σ service times ÷ (64 × 2) over every request the servers saw (the definition of
`benchmarks/servers.py`), and against the critical path, Σ compressor service ÷ 128 + max(Σ reader,
Σ judge service) ÷ 128 (compressors run one after another, reader and judge pipelined); the `gacc run`
process's peak RSS (`os.wait4`: the largest of it and its children) and its processes' summed RSS (sampled
from /proc every 0.2 s); the cache's size on disk; the wall time of `gacc report` and `gacc compare` on the
results folder. Then a second run on a fresh cache is SIGKILLed once the servers have seen half the
cold run's requests and the same command is run again: the servers' counts of both parts against the cold
run's, and the results folder against the cold run's (answers.parquet whole, memories.parquet but for its
`cached` column, and every score, outcome and integrity table of results.json).

    python benchmarks/release_scale.py [--fraction 0.05] [--median 0.25] [--keep DIR] [--bootstrap N]
    python benchmarks/release_scale.py --plan      # the dry run of that run: what it would call and send
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import pandas as pd

from benchmarks.release_data import describe, release_rows
from benchmarks.servers import MEDIAN, start_server
from gacc_hf.run.cache import Cache

REPLICAS, PER_REPLICA = 2, 64
SERVED = tuple(f"c{i}" for i in range(1, 8))
RULES = ("truncate", "goal-lines", "bm25")
RATIOS = "0.1,0.2,0.3"
CONDITIONS = "own,none,cross,full,oracle,closed"
SAME = ("scores", "scores_by_language", "gaps", "integrity", "exposures", "errors", "outcomes", "retention", "auc")


def load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


class Servers:
    """Two latency servers per role (compressor, reader, judge), as child processes, and their counts."""

    def __init__(self, median: float) -> None:
        roles = {"compressor": SERVED, "reader": ("reader",), "judge": ("judge",)}
        self.procs: list[subprocess.Popen[str]] = []
        self.urls: dict[str, list[str]] = {}
        for r, (role, models) in enumerate(roles.items()):
            for k in range(REPLICAS):
                proc, url = start_server(10**9, median, models, "content", idle=7200.0, seed=10 * r + k)
                self.procs.append(proc)
                self.urls.setdefault(role, []).append(url)

    def spec(self, role: str, model: str) -> str:
        urls = "|".join(self.urls[role])
        return f"openai:{model}@{urls}?concurrency={REPLICAS * PER_REPLICA}&timeout=300"

    def stats(self, reset: bool = False) -> dict[str, dict[str, float]]:
        """Per role, the replicas' counts summed: requests, Σ service seconds, requests in flight now."""
        out: dict[str, dict[str, float]] = {}
        for role, urls in self.urls.items():
            for url in urls:
                s = (httpx.post if reset else httpx.get)(f"{url}/stats").json()
                role_stats = out.setdefault(role, {"requests": 0, "service": 0.0, "in_flight": 0})
                for key in role_stats:
                    role_stats[key] += s[key]
        return out

    def close(self) -> None:
        for proc in self.procs:
            proc.kill()
            proc.wait()


def command(servers: Servers, data: Path, cache: Path, out: Path, bootstrap: int | None = None) -> list[str]:
    compressors = [*RULES, *(servers.spec("compressor", m) for m in SERVED)]
    return [
        sys.executable, "-m", "gacc_hf", "run", "--data", str(data), "--compressors", ",".join(compressors),
        "--reader", servers.spec("reader", "reader"), "--judge", servers.spec("judge", "judge"),
        "--ratios", RATIOS, "--conditions", CONDITIONS, "--cache-dir", str(cache), "--output-dir", str(out),
        "--overwrite", *([] if bootstrap is None else ["--bootstrap", str(bootstrap)]),
    ]  # fmt: skip


def group_rss(pgid: int) -> int:
    """Bytes resident in the processes of process group `pgid` together (from /proc)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # the process ended meanwhile
            continue
        if int(fields[2]) == pgid:  # fields after the name: state, ppid, pgrp, ...; rss is the 22nd
            total += int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    return total


def run_child(cmd: list[str], log: Path, kill_when: Any = None) -> dict[str, Any]:
    """Run `cmd` (its output to `log`); SIGKILL it when `kill_when()` turns true. Wall, exit, peak RSS of the
    process (`os.wait4`: the largest of it and its children) and of its process group summed (sampled)."""
    started = time.perf_counter()
    with log.open("w") as sink:
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
        killed, summed = False, 0
        while not (ended := os.wait4(proc.pid, os.WNOHANG))[0]:  # never reaped before wait4 has its usage
            summed = max(summed, group_rss(proc.pid))
            if kill_when is not None and kill_when():
                os.killpg(proc.pid, signal.SIGKILL)
                killed, ended = True, os.wait4(proc.pid, 0)
                break
            time.sleep(0.2)
        _, status, usage = ended
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0 and not killed:
        sys.exit(f"{' '.join(cmd[:4])} ... exited {code}; see {log}")
    return {
        "wall": wall,
        "code": code,
        "rss_gb": usage.ru_maxrss * 1024 / 1e9,
        "group_gb": summed / 1e9,
        "killed": killed,
    }


def timed(cmd: list[str], log: Path) -> float:
    return run_child(cmd, log)["wall"]


def cold_run(servers: Servers, data: Path, work: Path, bootstrap: int | None) -> dict[str, Any]:
    servers.stats(reset=True)
    run = run_child(command(servers, data, work / "cache", work / "cold", bootstrap), work / "cold.log")
    stats = servers.stats()
    total = {role: s["requests"] for role, s in stats.items()}
    service = {role: s["service"] for role, s in stats.items()}
    capacity = REPLICAS * PER_REPLICA
    ideal = sum(service.values()) / capacity
    path = (service["compressor"] + max(service["reader"], service["judge"])) / capacity
    print(f"\ncold run ({load()}):")
    print("  calls per role (servers' counts): " + ", ".join(f"{r} {n:,}" for r, n in total.items()))
    print(f"  harness's own counts: {json.loads((work / 'cold' / 'results.json').read_text())['calls']}")
    print(f"  wall {run['wall']:.1f} s; ideal (Σ service {sum(service.values()):,.0f} s ÷ {capacity}) "
          f"{ideal:.1f} s: wall ÷ ideal {run['wall'] / ideal:.2f}")  # fmt: skip
    print(f"  critical path (compressors + max(reader, judge)) {path:.1f} s: wall ÷ path {run['wall'] / path:.2f}")
    print(
        f"  peak RSS of gacc run {run['rss_gb']:.2f} GB; of its processes together (sampled) {run['group_gb']:.2f} GB"
    )
    size = sum(f.stat().st_size for f in (work / "cache").rglob("*") if f.is_file())
    print(f"  cache on disk {size / 1e6:,.1f} MB ({load()})")
    return {"total": sum(total.values()), "per_role": total, **run}


def report_and_compare(work: Path) -> None:
    gacc = [sys.executable, "-m", "gacc_hf"]
    seconds = timed([*gacc, "report", str(work / "cold")], work / "report.log")
    print(f"  gacc report {seconds:.1f} s ({load()})")
    compare = [*gacc, "compare", str(work / "cold"), "--a", "openai:c1", "--b", "goal-lines"]
    seconds = timed(compare, work / "compare.log")
    print(f"  gacc compare (openai:c1 vs goal-lines) {seconds:.1f} s ({load()})")


class Seen:
    """The servers' request count, polled: the kill condition, and how many came in the last second."""

    def __init__(self, servers: Servers, at_least: int) -> None:
        self.servers, self.at_least = servers, at_least
        self.history: list[tuple[float, int]] = []

    def __call__(self) -> bool:
        self.history.append((time.monotonic(), sum(s["requests"] for s in self.servers.stats().values())))
        return self.history[-1][1] >= self.at_least

    def last_second(self, now: float, count: int) -> int:
        before = [n for t, n in self.history if t <= now - 1.0]
        return count - (before[-1] if before else 0)


def killed_and_resumed(
    servers: Servers, data: Path, work: Path, cold_per_role: dict[str, int], bootstrap: int | None
) -> dict[str, Any]:
    """A fresh run SIGKILLed once the servers saw half the cold run's requests, then the same command again."""
    cmd = command(servers, data, work / "cache2", work / "resumed", bootstrap)
    servers.stats(reset=True)
    cold_total = sum(cold_per_role.values())
    seen_so_far = Seen(servers, cold_total // 2)
    first = run_child(cmd, work / "killed.log", seen_so_far)
    stats = servers.stats()
    seen, in_flight = sum(s["requests"] for s in stats.values()), sum(s["in_flight"] for s in stats.values())
    last = seen_so_far.last_second(time.monotonic(), seen)
    print(f"\nkilled at {first['wall']:.1f} s by SIGKILL: {seen:,} requests seen, {in_flight:.0f} of them in flight, "
          f"{last:,} in the last second ({load()})")  # fmt: skip
    deadline = time.monotonic() + 60  # the replies to the dead client go out before the counts are reset
    while time.monotonic() < deadline and sum(s["in_flight"] for s in servers.stats().values()):
        time.sleep(0.2)
    with Cache(work / "cache2") as cache:  # what the killed run stored: the rerun must ask for the rest only
        stored = {"reader": cache.count("answer"), "judge": cache.count("verdict")}
    servers.stats(reset=True)
    rerun = run_child(cmd, work / "rerun.log")
    per_role = {role: s["requests"] for role, s in servers.stats().items()}
    again = sum(per_role.values())
    extra = seen + again - cold_total
    print(f"  rerun {rerun['wall']:.1f} s: {again:,} requests; first part + rerun = {seen + again:,} against the "
          f"cold run's {cold_total:,}: {extra:+,}, the requests in flight at the kill or answered but not yet "
          f"stored ({load()})")  # fmt: skip
    for role, n in stored.items():
        print(f"  {role}: the rerun asked {per_role[role]:,}; the cold run {cold_per_role[role]:,} less the {n:,} "
              f"stored before the kill is {cold_per_role[role] - n:,}")  # fmt: skip
    same = same_results(work / "cold", work / "resumed")
    print("  results against the cold run's: " + same)
    missing_only = all(per_role[role] == cold_per_role[role] - n for role, n in stored.items())
    return {"killed": first["killed"], "seen": seen, "in_flight": in_flight, "last_second": last, "rerun": again,
            "extra": extra, "missing_only": missing_only, "same": same.startswith("identical")}  # fmt: skip


def same_results(a: Path, b: Path) -> str:
    """Which of the compared parts differ between two results folders ("identical" when none does)."""
    differ = []
    if not pd.read_parquet(a / "answers.parquet").equals(pd.read_parquet(b / "answers.parquet")):
        differ.append("answers.parquet")
    memories = [pd.read_parquet(f / "memories.parquet").drop(columns="cached") for f in (a, b)]
    if not memories[0].equals(memories[1]):
        differ.append("memories.parquet")
    ja, jb = (json.loads((f / "results.json").read_text()) for f in (a, b))
    differ += [f"results.json:{key}" for key in SAME if ja.get(key) != jb.get(key)]
    compared = "answers.parquet, memories.parquet (less `cached`), results.json " + "/".join(SAME)
    return f"identical ({compared})" if not differ else f"DIFFERENT: {', '.join(differ)} (compared {compared})"


def release_scale(
    fraction: float, median: float, work: Path, bootstrap: int | None = None, plan: bool = False
) -> dict[str, Any]:
    """The whole measurement in `work`; its figures (the cold run's and the killed-and-resumed run's).
    `bootstrap`: the runs' resamples (None: the harness default). `plan`: print the run's dry run
    (`gacc run --dry-run`: calls, tokens, bounds) instead, and measure nothing."""
    print(f"release scale x{fraction}, median service {median} s, work folder {work} ({load()})")
    rows = release_rows(fraction)
    print(describe(rows))
    data = work / "data.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    servers = Servers(median)
    try:
        if plan:
            dry = [*command(servers, data, work / "cache", work / "cold", bootstrap), "--dry-run"]
            subprocess.run(dry, check=True)
            return {}
        cold = cold_run(servers, data, work, bootstrap)
        report_and_compare(work)
        return {"cold": cold, "resumed": killed_and_resumed(servers, data, work, cold["per_role"], bootstrap)}
    finally:
        servers.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fraction", type=float, default=1.0, help="the release's counts times F (same shape)")
    parser.add_argument("--median", type=float, default=MEDIAN, help="the servers' median service time, s")
    parser.add_argument("--keep", type=Path, help="work folder to keep (data, caches, results, logs)")
    parser.add_argument("--bootstrap", type=int, help="bootstrap resamples of the runs (default: the harness's)")
    parser.add_argument("--plan", action="store_true", help="print the run's dry run instead of running it")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="gacc-release-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        release_scale(args.fraction, args.median, work, args.bootstrap, args.plan)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
