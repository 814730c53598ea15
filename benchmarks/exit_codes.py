"""How `gacc` commands end, counted over many launches on a loaded machine: exit codes, aborts at exit, and
what a limited two-process run and a Ctrl-C print.

A native library's teardown at exit aborted a command now and then (SIGABRT, "terminate called without an
active exception", exit 134), more often under load, so each command is launched many times with
`--parallel` launches at once (the load), and the summary counts exit codes and aborts per command:

- `validate`: `gacc data validate` on a parquet file with a column the schema lacks (expected exit 2);
  `--side-by-side N`: the same command N times through the entry point and N times through `main()` left to
  the interpreter's own exit (native teardown included), interleaved, so the two share the load;
- `rules`: `gacc run --preset rules` on a warm cache, each into a new results folder (0);
- `rules2`: the same on two processes (`--num-processes 2`) (0);
- `report`, `publish`: `gacc report` of a run (each on a copy of its own) and `gacc publish --dry-run` (0);
- `limited`: `gacc run --preset rules --max-calls 60 --num-processes 2` rerun until it is done, from an
  empty cache, over and over, until `--reruns` reruns: every rerun but the last of a round must exit 3
  (a rank that reached its share stopped), the last 0;
- `sigint`: a two-process rules run given SIGINT to its whole process group (the terminal's Ctrl-C) once
  both processes have loaded the data: exit 130, and no C++ abort text (`terminate called`, `pybind11`).

    python benchmarks/exit_codes.py --validate 400 --rules 100 --parallel 3
    python benchmarks/exit_codes.py --limited --reruns 50 --sigint 20
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}
GACC = [sys.executable, "-m", "gacc_hf"]
ABORT_TEXT = ("terminate called", "pybind11", "core dumped")
#: `gacc data validate` through the entry point, and through `main()` left to the interpreter's own exit
WAYS_IN = {
    "python -m gacc_hf data validate extra.parquet": GACC,
    "sys.exit(main()) data validate extra.parquet": [
        sys.executable, "-c", "import sys; from gacc_hf.cli import main; sys.exit(main())"
    ],
}  # fmt: skip
RULES = ["run", "--preset", "rules", "--no-progress", "--verbosity", "WARNING"]


def bad_parquet(folder: Path) -> Path:
    """A parquet file of two groups with an `extra` column: validation names it on each row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from gacc_hf.data.synthetic import synthetic_rows

    rows = synthetic_rows(seed=4, contexts=2, goals_per_context=1, questions_per_goal=2)
    path = folder / "extra.parquet"
    pq.write_table(pa.Table.from_pylist([{**row, "extra": "x"} for row in rows]), path)
    return path


def launch(args: list[str], cwd: Path, through: list[str] = GACC) -> tuple[int, str]:
    """One `gacc` command (`through` the entry point, or another way in): its exit code (negative: the
    signal that ended it) and stderr."""
    proc = subprocess.run([*through, *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=900)
    return proc.returncode, proc.stderr


def aborted(code: int, err: str) -> bool:
    return code in (-signal.SIGABRT, 128 + signal.SIGABRT) or any(text in err for text in ABORT_TEXT)


def count(launches: list[tuple[str, list[str], list[str]]], cwd: Path, parallel: int) -> None:
    """Run `launches` (name, way in, arguments), `parallel` at once and interleaved as listed; per name, the
    exit codes and aborts, and the load before and after."""
    load = os.getloadavg()
    start = time.perf_counter()
    with ThreadPoolExecutor(parallel) as pool:
        ends = list(pool.map(lambda launch_: launch(launch_[2], cwd, launch_[1]), launches))
    for name in dict.fromkeys(name for name, _, _ in launches):
        mine = [end for (n, _, _), end in zip(launches, ends, strict=True) if n == name]
        row = {
            "command": name,
            "launches": len(mine),
            "exit codes": dict(sorted(collections.Counter(code for code, _ in mine).items())),
            "aborts": sum(aborted(code, err) for code, err in mine),
            "seconds (all of this batch)": round(time.perf_counter() - start, 1),
            "load before/after": [round(load[0], 2), round(os.getloadavg()[0], 2)],
        }
        print(json.dumps(row), flush=True)


def limited_rounds(folder: Path, reruns: int) -> dict[str, object]:
    """Rerun the limited two-process run until done, from an empty cache each round, `reruns` reruns in all."""
    load, codes, wrong, round_no = os.getloadavg(), collections.Counter(), [], 0
    while sum(codes.values()) < reruns:
        round_no += 1
        cache, out = folder / f"limited-cache-{round_no}", folder / f"limited-out-{round_no}"
        args = [*RULES, "--max-calls", "60", "--num-processes", "2",
                "--cache-dir", str(cache), "--output-dir", str(out)]  # fmt: skip
        for _ in range(100):
            code, err = launch(args, folder)
            codes[code] += 1
            if code not in (0, 3) or aborted(code, err) or "Connection" in err:
                wrong.append(err.strip().splitlines()[-1:])
            if code != 3:
                break
    row = {
        "command": "gacc run --preset rules --max-calls 60 --num-processes 2, rerun until done",
        "rounds": round_no,
        "reruns": sum(codes.values()),
        "exit codes": dict(sorted(codes.items())),
        "other than 3 then 0": wrong,
        "load before/after": [round(load[0], 2), round(os.getloadavg()[0], 2)],
    }
    print(json.dumps(row), flush=True)
    return row


def interrupted(folder: Path, tries: int) -> dict[str, object]:
    """SIGINT to the process group of a two-process run at work, `tries` times: exit codes and abort texts."""
    load, codes, texts = os.getloadavg(), collections.Counter(), collections.Counter()
    for n in range(tries):
        cwd = folder / f"sigint-{n}"
        cwd.mkdir()
        log = cwd / "stderr.txt"
        args = [*GACC, *RULES[:-2], "--data", "synthetic:contexts=60", "--num-processes", "2"]
        with log.open("w") as err:
            proc = subprocess.Popen(
                [*args, "--cache-dir", "cache", "--output-dir", "out"],
                cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
            )  # fmt: skip
            deadline = time.monotonic() + 300
            while log.read_text().count("gacc: data synthetic") < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            os.killpg(proc.pid, signal.SIGINT)
            codes[proc.wait(timeout=300)] += 1
        text = log.read_text()
        texts.update(t for t in (*ABORT_TEXT, "Traceback", "interrupted") if t in text)
    row = {
        "command": "SIGINT to the process group of gacc run --preset rules --num-processes 2 at work",
        "tries": tries,
        "exit codes": dict(sorted(codes.items())),
        "runs whose stderr holds": dict(texts),
        "load before/after": [round(load[0], 2), round(os.getloadavg()[0], 2)],
    }
    print(json.dumps(row), flush=True)
    return row


def warm_run(folder: Path) -> Path:
    """A rules run into `folder/run` on `folder/cache`, for the report and publish launches and a warm cache."""
    code, err = launch([*RULES, "--cache-dir", "cache", "--output-dir", "run"], folder)
    if code != 0:
        raise SystemExit(f"the warm-up run failed ({code}): {err[-2000:]}")
    return folder / "run"


def copy_of(run: Path | None, i: int) -> str:
    """A copy of `run` for launch `i`: a report rewrites its folder, and two at once on one folder collide."""
    assert run is not None
    copy = run.with_name(f"report-{i}")
    shutil.copytree(run, copy)
    return str(copy)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name in ("validate", "rules", "rules2", "report", "publish"):
        parser.add_argument(f"--{name}", type=int, default=0, metavar="N", help=f"launches of `{name}`")
    parser.add_argument("--side-by-side", type=int, default=0, metavar="N", help="validate launches each way in")
    parser.add_argument("--limited", action="store_true", help="the limited two-process reruns")
    parser.add_argument("--reruns", type=int, default=50, help="reruns of the limited run in all (default 50)")
    parser.add_argument("--sigint", type=int, default=0, metavar="N", help="SIGINT tries")
    parser.add_argument("--parallel", type=int, default=3, help="launches at once (default 3)")
    args = parser.parse_args(argv)
    print(f"# {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, load {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="gacc-exits-") as tmp:
        folder = Path(tmp)
        run = warm_run(folder) if args.rules or args.rules2 or args.report or args.publish else None
        rules, bad = [*RULES, "--cache-dir", "cache"], str(bad_parquet(folder))
        publish = ["publish", "--dry-run", "--repo-id", "me/m", "--compressor", "truncate", str(run)]
        plans = {  # name: (launches, the arguments of launch i)
            "gacc data validate extra.parquet": (args.validate, lambda i: ["data", "validate", bad]),
            "gacc run --preset rules": (args.rules, lambda i: [*rules, "--output-dir", f"one-{i}"]),
            "gacc run --preset rules --num-processes 2": (
                args.rules2, lambda i: [*rules, "--output-dir", f"two-{i}", "--num-processes", "2"]
            ),
            "gacc report": (args.report, lambda i: ["report", copy_of(run, i)]),
            "gacc publish --dry-run": (args.publish, lambda i: publish),
        }  # fmt: skip
        for name, (n, command) in plans.items():
            if n:
                count([(name, GACC, command(i)) for i in range(n)], folder, args.parallel)
        if args.side_by_side:  # the same command ended by the interpreter's own exit, interleaved with it
            validate = ["data", "validate", bad]
            count(
                [(name, way, validate) for _ in range(args.side_by_side) for name, way in WAYS_IN.items()],
                folder,
                args.parallel,
            )
        if args.limited:
            limited_rounds(folder, args.reruns)
        if args.sigint:
            interrupted(folder, args.sigint)
    print(f"# done {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
