"""Re-deriving a release-size run's figures from its answer rows: what checking a results folder costs a run.

`derived_figures` recomputes every figure a results folder stores (scores, gaps, scores by language, outcome
shares, retention, AUC, with 1,000 bootstrap resamples) from the answer rows, and verifying a folder (a board
checks each of its runs) compares them to the stored ones. The rows are those of `benchmarks/board.py`: 2,571
questions × 10 compressors × 3 ratios × 3 conditions, plus the full ceiling and the closed-book floor (236,532
rows). Prints the whole (best of `--repeat`), each family alone on the same rows, and the floor measured in the
same run: one pass over every row reading the fields scoring reads, the least any derivation does.

    PYTHONPATH=$PWD python benchmarks/derive.py                  # the release's size
    PYTHONPATH=$PWD python benchmarks/derive.py --questions 300  # a quick try
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from operator import itemgetter
from typing import Any

from benchmarks.board import rows
from gacc_hf.results.folder import derived_figures
from gacc_hf.scoring.auc import auc_rows
from gacc_hf.scoring.compare import condition_gaps
from gacc_hf.scoring.retention import retention_rows
from gacc_hf.scoring.scores import score_answers
from gacc_hf.scoring.shares import outcome_shares

TARGET = 0.8  # seconds for a release-size run: 30 runs checked on a board in well under 30 s
_READ = itemgetter("reader", "judge", "compressor", "condition", "ratio", "question_id", "goal_id", "correct")


def best(repeat: int, work: Callable[[], Any]) -> float:
    """The fastest of `repeat` timings of `work` (seconds): the least the machine's other load adds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=2571)
    parser.add_argument("--compressors", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    answers, _, config = rows(args.questions, args.compressors)
    n_boot, seed = config["n_bootstrap"], config["seed"]
    print(f"load average before: {os.getloadavg()[0]:.1f}; {len(answers)} answer rows, {n_boot} resamples")
    floor = best(args.repeat, lambda: list(map(_READ, answers)))
    print(f"floor: every row's scored fields read once in {floor:.3f} s")
    whole = best(args.repeat, lambda: derived_figures(answers, config))
    verdict = "met" if whole <= TARGET else "NOT met"
    print(f"derived_figures: {whole:.3f} s (target <= {TARGET:g} s, ratio {whole / TARGET:.2f}: {verdict}); ", end="")
    print(f"{whole / floor:.1f} x the floor")
    families = {
        "scores": score_answers,
        "gaps": condition_gaps,
        "outcomes": outcome_shares,
        "retention": retention_rows,
        "auc": auc_rows,
    }
    for name, family in families.items():  # each alone, its rows grouped afresh
        took = best(args.repeat, lambda family=family: family(answers, n_boot, seed))
        print(f"  {name}: {took:.3f} s alone ({took / floor:.1f} x the floor)")


if __name__ == "__main__":
    main()
