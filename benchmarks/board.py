"""The leaderboard at the release's size: build time, page size, and first render, a sort and a search in Chromium.

Writes N results folders without running a model, each of the release's size: 2,571 questions (4 a goal) × 10
compressors × 3 ratios × 3 conditions, plus the `full` ceiling and the closed-book floor (236,532 answer rows,
59,156 ledger rows), verdicts and evidence drawn at random and scored with the harness's own scoring (1,000
bootstrap resamples), each answer row with its reader, judge, question and outcome as a run of schema 5 writes
it, the memories a few words each (the board reads the ledger's token counts, not the text).
The runs share their rows, each under its own compressor names, so they are generated once and written N times.
Then `gacc board` over them (each run read, verified and its page rendered, on `--jobs` processes; the board
page), timed whole, and the board loaded from file:// in Debian's headless Chromium: time from navigation to the
page's ready mark, then one sort (Micro, ascending) and one search (a compressor's name), each timed from the
event to the table redrawn. Prints one line per figure, with the floor and ratio of each target.

The board is built twice on seals kept in a fresh folder (`gacc_hf.results.seal`): first with none (every run
checked and its page rendered: the cold build), then again with the seals the first left (the warm build, what a
board built again over runs already checked costs). The cold build's floor is the time to read every run's rows
into Python (`read_folder`, on as many fresh processes: what any check of them starts with), the warm build's
the time to read every byte of the runs' folders, which the seals are found by.

    PYTHONPATH=$PWD python benchmarks/board.py                          # 30 runs of the release's size
    PYTHONPATH=$PWD python benchmarks/board.py --runs 4 --questions 300 # a quick try
    PYTHONPATH=$PWD python benchmarks/board.py --jobs 1                 # one process
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from playwright.sync_api import sync_playwright

from gacc_hf.results.board import write_board
from gacc_hf.results.folder import derived_figures, read_folder, write_folder
from gacc_hf.results.layout import RunResults
from gacc_hf.scoring.outcomes import outcome

CONDITIONS = ("own", "none", "cross")
RATIOS = (0.1, 0.2, 0.5)
SETTING = {"reader": "smollm2", "judge": "contains"}  # schema 5: every answer row names its reader and judge
BOUNDS = (("full-context", "full", 1.0), ("closed-book", "closed", 0.0))
TARGETS = {"build": 30.0, "size": 10e6, "render": 2.0, "event": 0.5}


def rows(n_questions: int, n_compressors: int, seed: int = 0) -> tuple[list[dict], list[dict], dict]:
    """Answer rows, ledger rows and config of one run of that size (see the module docstring)."""
    rng = random.Random(seed)
    methods = [(f"method-{i}", k, r) for i in range(n_compressors) for k in CONDITIONS for r in RATIOS]
    answers, memories = [], []
    for c, k, r in [*methods, *BOUNDS]:
        bound = k in ("full", "closed")
        for g in range((n_questions + 3) // 4):
            cid, gid = f"ctx-{g // 3:05d}", f"ctx-{g // 3:05d}/g{g % 3}"
            base = {"compressor": c, "condition": k, "ratio": r, "context_id": cid, "goal_id": gid, "ceiling": bound}
            n = min(4, n_questions - 4 * g)
            budget = int(r * 2000)
            kept = budget - rng.randrange(0, 20) if budget else 0
            ledger = {"budget": budget, "retained_tokens": kept, "reencoded_tokens": kept, "truncated": False}
            memories.append({**base, **ledger, "n_questions": n})
            sha = f"{g}-{c}-{k}-{r}"
            memories[-1] |= {"memory": "kept words", "memory_sha256": sha}
            shown = {"cross": f"ctx-{g // 3:05d}/g{(g + 1) % 3}", "none": None}.get(k, gid)
            for q in range(n):
                correct, evidence = rng.random() < r * 0.9 + 0.05, rng.random() < r + 0.1
                row = {**SETTING, **base, "shown_goal_id": shown, "question_id": f"{gid}/q{q}", "language": "en"}
                row |= {"question": f"What is asked {q}?", "references": ["word"], "memory_sha256": sha}
                row |= {"evidence": evidence, "answer": "an answer", "correct": correct}
                answers.append(row | {"outcome": outcome(correct, evidence), "error": None})
    config = {
        "compressors": [{"name": f"method-{i}", "revision": f"method-v1@{i:016x}"} for i in range(n_compressors)],
        "reader": {"name": "smollm2", "revision": "reader-v1"},
        "judge": {"name": "contains", "revision": "contains-v1"},
        "ratios": list(RATIOS),
        "conditions": [*CONDITIONS, "full", "closed"],
        "seed": 0,
        "n_bootstrap": 1000,
        "n_groups": (n_questions + 3) // 4,
        "n_questions": n_questions,
        "data": {
            "spec": "release",
            "fingerprint": "sha256:" + "ab" * 32,
            "languages": {"en": {"n_groups": (n_questions + 3) // 4, "n_questions": n_questions, "detected": True}},
        },
        "protocol_version": "gacc-1",
    }
    return answers, memories, config


def renamed(value, k: int):
    """`value` with every compressor name `method-i` made the run's own (`r07-method-i`)."""
    return json.loads(json.dumps(value).replace('"method-', f'"r{k:02d}-method-'))


def write_runs(root: Path, n_runs: int, n_questions: int, n_compressors: int) -> list[Path]:
    answers, memories, config = rows(n_questions, n_compressors)
    payload = {"config": config, **derived_figures(answers, config)}
    payload |= {"integrity": {"budget_violations": 0, "count_errors": 0, "exposures": 0}, "exposures": []}
    payload |= {"calls": {}, "tokenizer": {"name": "cl100k_base"}, "errors": []}
    paths = []
    for k in range(n_runs):
        run = RunResults(renamed(payload, k), renamed(answers, k), renamed(memories, k))
        run.payload["config"]["finished_at"] = f"2026-12-{1 + k % 28:02d}T12:00:00Z"
        write_folder(run, root / f"run-{k:02d}")
        paths.append(root / f"run-{k:02d}")
    return paths


def _rows_read(path: Path) -> int:
    return len(read_folder(path).answers)


def rows_floor(paths: list[Path], jobs: int) -> float:
    """Seconds to read every run's rows on `jobs` fresh processes, as the cold build starts its own."""
    start = time.perf_counter()
    with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
        list(pool.map(_rows_read, paths))
    return time.perf_counter() - start


def in_chromium(path: Path, search: str) -> tuple[float, float, float]:
    """Seconds from navigation to the ready mark, of a sort and of a search."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium")
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(path.as_uri(), wait_until="commit", timeout=600_000)
        page.wait_for_selector("body[data-ready='1']", timeout=600_000)
        ready = page.evaluate("performance.now()") / 1000
        # the event, then a layout forced (the table's height read): the table redrawn, not only its rows sorted
        timed = "(f) => { const t = performance.now(); f(); document.body.offsetHeight;"
        timed += " return (performance.now() - t) / 1000; }"
        sort = page.evaluate(f"({timed})(() => document.querySelector(\"#board-head th[data-key='micro']\").click())")
        search_s = page.evaluate(
            f"({timed})(() => {{ const s = document.getElementById('search'); s.value = {json.dumps(search)};"
            " s.dispatchEvent(new Event('input')); })"
        )
        shown = page.inner_text("#shown")
        browser.close()
    print(f"search {search!r}: {shown} cells shown")
    return ready, sort, search_s


def _figure(name: str, value: float, target: float, unit: str) -> str:
    verdict = "met" if value <= target else "NOT met"
    return f"{name}: {value:.2f} {unit} (target <= {target:g} {unit}, ratio {value / target:.2f}: {verdict})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--questions", type=int, default=2571)
    parser.add_argument("--compressors", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)), help="default: the cores usable")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        paths = write_runs(Path(tmp), args.runs, args.questions, args.compressors)
        print(f"{args.runs} runs of {args.questions} questions written in {time.perf_counter() - start:.1f} s")
        start = time.perf_counter()
        read = sum(len(f.read_bytes()) for path in paths for f in sorted(path.rglob("*")) if f.is_file())
        floors = {"warm": time.perf_counter() - start}
        floors["cold"] = rows_floor(paths, args.jobs)
        print(f"floor (warm): every byte of the runs' folders read ({read / 1e6:.0f} MB) in {floors['warm']:.2f} s")
        print(f"floor (cold): every run's rows read, {args.jobs} process(es), in {floors['cold']:.2f} s")
        seals = Path(tmp) / "seals"
        for kind, name in (("cold", "every run checked, no seal yet"), ("warm", "every run from its seal")):
            start = time.perf_counter()
            out, _ = write_board(paths, Path(tmp) / "board", jobs=args.jobs, seals=seals)
            build = time.perf_counter() - start
            print(_figure(f"gacc board, {args.jobs} process(es), {kind}: {name}", build, TARGETS["build"], "s"))
            print(f"  {build / args.runs:.2f} s a run; {build / floors[kind]:.1f} x its floor")
        pages = sum(p.stat().st_size for p in out.parent.glob("runs/*/report.html"))
        print(f"the runs' own pages beside it: {pages / 1e6:.1f} MB ({args.runs} pages)")
        print(_figure("index.html", out.stat().st_size / 1e6, TARGETS["size"] / 1e6, "MB"))
        tries = [in_chromium(out, f"r{args.runs - 1:02d}-method-1 own") for _ in range(3)]
    for name, i, target in (("navigation to first render", 0, "render"), ("a sort (Micro)", 1, "event")):
        figures = ", ".join(f"{t[i]:.2f}" for t in tries)
        print(_figure(f"Chromium, {name} (best of {figures})", min(t[i] for t in tries), TARGETS[target], "s"))
    figures = ", ".join(f"{t[2]:.2f}" for t in tries)
    print(_figure(f"Chromium, a search (best of {figures})", min(t[2] for t in tries), TARGETS["event"], "s"))
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
