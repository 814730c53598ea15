"""Repeated cold runs of `gacc run --num-processes 2` (the main job: SmolLM2 reader, `embed` compressor):
how many end with exit 0 and a results folder.

Each run gets an empty cache and a new results folder, so every rank loads and runs its models, and is
timed as a whole command. A line per run gives the exit code, whether `results.json` was written, the
wall time and the load average at its start and end, and the last stderr line of a failed run; the
summary counts exit codes. Extra arguments go to `gacc run` as they are (default: `--limit 4`, a few
groups per rank).

With `--make-demo`, each run is instead what a new user types: a fresh `git clone` of this repository's
committed `HEAD` in a new folder, then `make demo` there (set-up from the pip cache, then the main job on
an empty cache), and the results folder looked for under that clone's `runs/`.

    python benchmarks/cold_runs.py [--runs 10] [--processes 2] [-- --limit 4 --preset main]
    python benchmarks/cold_runs.py --make-demo --runs 10 --keep /tmp/cold-demo
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def cold_run(folder: Path, processes: int, extra: list[str]) -> dict[str, object]:
    """One `gacc run` on an empty cache in `folder`: exit code, results written, seconds, load, last error."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "gacc_hf", "run", "--num-processes", str(processes), "--no-progress",
           "--cache-dir", str(folder / "cache"), "--output-dir", str(folder / "out"), *extra]  # fmt: skip
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    (folder / "stderr.txt").write_text(proc.stderr, encoding="utf-8")
    last = proc.stderr.strip().splitlines()[-1] if proc.returncode and proc.stderr.strip() else ""
    return {
        "code": proc.returncode,
        "results": (folder / "out" / "results.json").is_file(),
        "seconds": round(seconds, 1),
        "load": os.getloadavg(),
        "last": last,
    }


def demo_run(folder: Path) -> dict[str, object]:
    """`git clone` of this repository's HEAD into `folder`, then `make demo` in it, timed as one command."""
    repo = Path(__file__).resolve().parent.parent
    subprocess.run(["git", "clone", "-q", str(repo), str(folder)], check=True)
    start = time.perf_counter()
    proc = subprocess.run(["make", "demo"], cwd=folder, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    (folder / "make-demo.log").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    last = proc.stderr.strip().splitlines()[-1] if proc.returncode and proc.stderr.strip() else ""
    return {
        "code": proc.returncode,
        "results": any((folder / "runs").glob("*/results.json")),
        "seconds": round(seconds, 1),
        "load": os.getloadavg(),
        "last": last,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--make-demo", action="store_true", help="each run: a fresh clone, then `make demo`")
    parser.add_argument("--keep", help="folder for the runs' folders (default: a temporary one, removed)")
    parser.add_argument("extra", nargs="*", help="arguments for `gacc run` (after --)")
    args = parser.parse_args()
    extra = args.extra or ["--limit", "4"]
    with tempfile.TemporaryDirectory(prefix="gacc-cold-") as tmp:
        root = Path(args.keep or tmp)
        codes: collections.Counter[int] = collections.Counter()
        with_results = 0
        for i in range(1, args.runs + 1):
            folder = root / f"run{i}"
            before = " ".join(f"{x:.2f}" for x in os.getloadavg())
            if args.make_demo:
                run = demo_run(folder)
            else:
                folder.mkdir(parents=True)
                run = cold_run(folder, args.processes, extra)
            codes[run["code"]] += 1  # type: ignore[index]
            with_results += bool(run["results"])
            load = " ".join(f"{x:.2f}" for x in run["load"])  # type: ignore[attr-defined]
            print(f"run {i}: exit {run['code']}, results {'yes' if run['results'] else 'no'}, "
                  f"{run['seconds']} s, load {before} -> {load} {run['last']}", flush=True)  # fmt: skip
        print(f"exit codes: {dict(sorted(codes.items()))}; results folders: {with_results}/{args.runs}")
    return 0 if codes == {0: args.runs} and with_results == args.runs else 1


if __name__ == "__main__":
    raise SystemExit(main())
