"""Time the `gacc` evaluate metric against the same Micro/Macro formulas in plain Python, on the same rows.

    HF_HUB_OFFLINE=1 HF_EVALUATE_OFFLINE=1 .venv/bin/python benchmarks/metric.py [--goals 200000 --per-goal 5]

Rows: `goals` x `per_goal` questions, goal-major, with a seeded ~80% verdict rate. Each metric timing is one
`compute` (or the `add_batch` loop plus `compute`) on a fresh `Gacc` writing to a temporary cache, so it
includes evaluate's Arrow write and read. The plain-Python baseline judges with the same function and groups
with a dict. Every pair of results is checked for equality before its times are printed.
"""

from __future__ import annotations

import argparse
import platform
import random
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

from gacc_hf.methods.judges import exact_match
from gacc_hf.metric import Gacc


def make_rows(goals: int, per_goal: int, seed: int) -> tuple[list[str], list[list[str]], list[bool], list[str]]:
    """Answers, references, their exact-match verdicts and goal ids; a goal's questions are adjacent."""
    rng = random.Random(seed)
    answers, references, verdicts, goal_ids = [], [], [], []
    for g in range(goals):
        for q in range(per_goal):
            gold = f"The answer {g}-{q}."
            right = rng.random() < 0.8
            answers.append(f"answer {g}-{q}" if right else f"answer {g}-{q + 1}")
            references.append([gold, f"alias {g}-{q}"])
            verdicts.append(right)
            goal_ids.append(f"goal-{g:07d}")
    return answers, references, verdicts, goal_ids


def plain_scores(goal_ids: Sequence[str], correct: Sequence[bool]) -> dict[str, Any]:
    """Micro and all-correct Macro with a dict and a loop."""
    all_ok: dict[str, bool] = {}
    n_correct = 0
    for goal, ok in zip(goal_ids, correct, strict=True):
        n_correct += ok
        all_ok[goal] = all_ok.get(goal, True) and ok
    return {
        "micro": n_correct / len(correct),
        "macro": sum(all_ok.values()) / len(all_ok),
        "n_questions": len(correct),
        "n_goals": len(all_ok),
    }


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Best wall time of `repeat` runs and the last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goals", type=int, default=200_000)
    parser.add_argument("--per-goal", type=int, default=5)
    parser.add_argument("--batch", type=int, default=10_000, help="rows per add_batch call")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    answers, references, verdicts, goal_ids = make_rows(args.goals, args.per_goal, args.seed)
    n = len(goal_ids)
    cache = tempfile.mkdtemp(prefix="gacc-bench-")

    def metric_compute(config: str) -> dict[str, Any]:
        if config == "verdicts":
            return Gacc("verdicts", cache_dir=cache).compute(predictions=verdicts, goal_ids=goal_ids)
        return Gacc(config, cache_dir=cache).compute(predictions=answers, references=references, goal_ids=goal_ids)

    def metric_batches() -> dict[str, Any]:
        metric = Gacc("verdicts", cache_dir=cache)
        for i in range(0, n, args.batch):
            metric.add_batch(predictions=verdicts[i : i + args.batch], goal_ids=goal_ids[i : i + args.batch])
        return metric.compute()

    cases = [
        ("verdicts, one compute", lambda: metric_compute("verdicts"), lambda: plain_scores(goal_ids, verdicts)),
        (
            f"verdicts, add_batch x{-(-n // args.batch)} + compute",
            metric_batches,
            lambda: plain_scores(goal_ids, verdicts),
        ),
        (
            "default (exact match), one compute",
            lambda: metric_compute("default"),
            lambda: plain_scores(goal_ids, [exact_match(a, r) for a, r in zip(answers, references, strict=True)]),
        ),
    ]
    print(f"rows: {n:,} ({args.goals:,} goals x {args.per_goal}); best of {args.repeat}")
    print(f"python {platform.python_version()} on {platform.machine()}, {platform.processor() or 'cpu'}")
    print(f"{'case':<40} {'metric s':>9} {'plain s':>9} {'ratio':>7}")
    for name, metric_fn, plain_fn in cases:
        t_metric, got = timed(metric_fn, args.repeat)
        t_plain, want = timed(plain_fn, args.repeat)
        if got != want:
            raise SystemExit(f"{name}: metric {got} != plain {want}")
        print(f"{name:<40} {t_metric:>9.3f} {t_plain:>9.3f} {t_metric / t_plain:>6.2f}x")
    print(f"micro {got['micro']:.6f}, macro {got['macro']:.6f} (metric and plain Python agree in every case)")


if __name__ == "__main__":
    main()
