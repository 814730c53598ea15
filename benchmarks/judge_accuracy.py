"""How often each judge agrees with a person: the main job's labelled answers judged again by every judge.

    PYTHONPATH=$PWD python benchmarks/judge_accuracy.py [--folder docs/results/main] [--labels FILE]
        [--judges exact,contains,f1,smollm2] [--cache-dir DIR] [--bootstrap 1000] [--seed 0]

Reads the results folder's stored answers (`gacc_hf.results.folder.read_folder`) and its labels file
(`docs/results/main/labels.jsonl`: one answer a line by `gacc_hf.keys.answer_key`, right or wrong as a person
read it against its source and gold), finds the labelled answers, and judges each once with every judge named,
through the judge registry and the cache (the same verdict keys a run files, so a run's cached verdicts are
reused and these are reused by a run). It prints, per judge, the accuracy against the labels, the false-right
rate (answers labelled wrong that the judge called right) and the false-wrong rate (labelled right, called
wrong), each with a goal-bootstrap 95% CI; the verdicts the folder records (its own judge) as one more row; the
judges' agreement with each other; each cell's labelled answers scored under the human verdicts beside the
folder's judge (a reference); the seconds each judge took; and the command, load and date.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gacc_hf.data.loading import load_any
from gacc_hf.data.schema import validate
from gacc_hf.keys import text_hash
from gacc_hf.methods.registry import resolve
from gacc_hf.protocol import JudgeInput
from gacc_hf.results.folder import read_folder
from gacc_hf.run.cache import Cache
from gacc_hf.run.cache.key_template import KeyTemplate
from gacc_hf.run.read import asked_of
from gacc_hf.scoring.agreement import judge_agreement
from gacc_hf.scoring.labels import human_scores, judge_accuracy, labelled_answers, read_labels

ROOT = Path(__file__).resolve().parents[1]
MAIN = ROOT / "docs" / "results" / "main"
JUDGES = ("exact", "contains", "f1", "smollm2")


def labelled_items(folder: str | Path, labels_path: str | Path) -> tuple[list[dict[str, Any]], list[str], Any]:
    """One entry per labelled answer of the folder (the first row holding it): its row, its judge input and the
    hashes its verdict key binds; the label keys no stored answer matches; the folder's results."""
    run = read_folder(folder)
    rows, unmatched = labelled_answers(run.answers, read_labels(labels_path))
    spec = (run.config.get("data") or {}).get("spec")
    asked = {q.question_id: a for g in validate(load_any(spec)) for a in asked_of(g) for q in (a[0],)}
    items, seen = [], set()
    for row in rows:
        if row["key"] in seen:
            continue
        seen.add(row["key"])
        q, group, question_hash, references_hash, source_hash = asked[row["question_id"]]
        if (q.question, list(q.references)) != (row["question"], list(row["references"])):
            raise ValueError(f"{folder}: question {row['question_id']!r} differs from today's {spec!r} data")
        item = JudgeInput(q.question, str(row["answer"]), q.references, group.context)
        items.append({"row": row, "input": item, "hashes": (question_hash, references_hash, source_hash)})
    return items, unmatched, run


def judge_items(items: Sequence[Mapping[str, Any]], spec: str, cache: Cache) -> tuple[list[bool], float, int]:
    """The verdicts of judge `spec` on the items, through the cache: (verdicts, seconds, new calls)."""
    judge = resolve("judge", spec)
    template = KeyTemplate(("question", "answer", "references", "source"), judge=judge.name, revision=judge.revision)
    keys = [template(i["hashes"][0], text_hash(i["input"].answer), i["hashes"][1], i["hashes"][2]) for i in items]
    stored = cache.get_many("verdict", set(keys))
    missing = [k for k in dict.fromkeys(keys) if k not in stored]
    by_key = {k: i["input"] for k, i in zip(keys, items, strict=True)}
    start = time.perf_counter()
    if missing:
        inputs = [by_key[k] for k in missing]
        said = judge.batch(inputs) if hasattr(judge, "batch") else [judge(i) for i in inputs]
        fresh = {k: {"correct": bool(v)} for k, v in zip(missing, said, strict=True)}
        cache.put_many("verdict", fresh)
        stored = {**stored, **fresh}
    return [bool(stored[k]["correct"]) for k in keys], time.perf_counter() - start, len(missing)


def figures(
    items: Sequence[Mapping[str, Any]], verdicts: Mapping[str, Sequence[bool]], n_boot: int, seed: int
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Each judge against the labels, and the judges' agreement with each other."""
    goals = [str(i["row"]["goal_id"]) for i in items]
    human = [bool(i["row"]["label"]) for i in items]
    languages = [str(i["row"].get("language") or "") for i in items]
    return (
        judge_accuracy(goals, human, verdicts, n_boot, seed),
        judge_agreement(goals, verdicts, languages, n_boot, seed),
    )


def _ci(row: Mapping[str, Any], name: str) -> str:
    value = row[name]
    if value is None:
        return f"— ({row[f'{name}_undefined']})"
    low, high = row[f"{name}_ci_low"], row[f"{name}_ci_high"]
    return _3(value) + ("" if low is None else f" [{_3(low)}, {_3(high)}]")


def _3(x: float) -> str:
    """Three decimals, a rounding error below zero (−1e−17 in a resampled κ of 0) shown as 0.000, not −0.000."""
    return f"{round(x, 3) + 0.0:.3f}"


def _load() -> str:
    try:
        return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "load average unknown"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--folder", default=str(MAIN), help="results folder whose answers are labelled")
    p.add_argument("--labels", help="labels file (default: FOLDER/labels.jsonl)")
    p.add_argument("--judges", default=",".join(JUDGES), help="judges to measure, comma-separated")
    p.add_argument("--cache-dir", default=".gacc_cache", help="the cache the verdicts go through")
    p.add_argument("--bootstrap", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    print(f"command: {' '.join(['python', 'benchmarks/judge_accuracy.py', *(argv or sys.argv[1:])])}")
    print(f"date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {_load()} on {os.cpu_count()} CPUs")
    items, unmatched, run = labelled_items(args.folder, args.labels or Path(args.folder) / "labels.jsonl")
    n_right = sum(bool(i["row"]["label"]) for i in items)
    n_goals = len({i["row"]["goal_id"] for i in items})
    print(f"labelled answers: {len(items)} ({n_right} right, {len(items) - n_right} wrong), over {n_goals} goals; "
          f"labels matching no answer: {len(unmatched)}")  # fmt: skip
    cache = Cache(args.cache_dir)
    recorded = run.config.get("judge") or {}
    name = f"recorded ({recorded.get('name')}@{recorded.get('revision')})"
    verdicts: dict[str, list[bool]] = {name: [bool(i["row"]["correct"]) for i in items]}
    for spec in [s for s in args.judges.split(",") if s]:
        verdicts[spec], seconds, calls = judge_items(items, spec, cache)
        print(f"judge {spec}: {calls} new call(s) in {seconds:.1f} s")
    accuracy, agreement = figures(items, verdicts, args.bootstrap, args.seed)
    print(f"\nagainst the labels (95% CI, goal bootstrap, {args.bootstrap} resamples, seed {args.seed}):")
    print(f"{'judge':<32} {'accuracy':>24} {'false-right':>24} {'false-wrong':>24}")
    for row in accuracy:
        cells = [_ci(row, k) for k in ("accuracy", "false_right", "false_wrong")]
        print(f"{row['judge']:<32} {cells[0]:>24} {cells[1]:>24} {cells[2]:>24}")
    print("\njudges with each other (raw agreement, Cohen's κ):")
    for pair in agreement["pairs"]:
        print(f"  {pair['judge_a']} / {pair['judge_b']}: {_ci(pair, 'agreement')}, κ {_ci(pair, 'kappa')}")
    print(f"Krippendorff's α over all: {_ci(agreement['all'], 'alpha')}")
    print(f"\nthe labelled answers of each cell under the human verdicts (a reference), beside {name}:")
    rows, _ = labelled_answers(run.answers, read_labels(args.labels or Path(args.folder) / "labels.jsonl"))
    for cell in human_scores(rows, args.bootstrap, args.seed):
        human = _ci({**cell, "micro": cell["human_micro"], "micro_ci_low": cell["human_micro_ci_low"],
                     "micro_ci_high": cell["human_micro_ci_high"], "micro_undefined": None}, "micro")  # fmt: skip
        print(f"  {cell['compressor']} {cell['condition']} r={cell['ratio']:g}: {cell['n_questions']} labelled, "
              f"human Micro {human}, judge Micro {cell['judge_micro']:.3f}")  # fmt: skip
    cache.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
