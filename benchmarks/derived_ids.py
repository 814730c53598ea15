"""What deriving IDs from the content costs: loading one flat CSV with its ID columns and without them.

Writes two CSV files of the same questions (synthetic groups, a fifth of the contexts Chinese), one with the
`context_id`, `goal_id` and `question_id` columns and one without, and prints the best of 5 interleaved
timings of `load_any` on each (read, group, derive, validate, build the Dataset) after one untimed load,
their ratio and the load average.

    python benchmarks/derived_ids.py                    # 2,000 contexts x 3 goals x 4 questions: 24,000 rows
    python benchmarks/derived_ids.py --contexts 200
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import tempfile
import time
from pathlib import Path

from gacc_hf.data.loading import load_any
from gacc_hf.data.synthetic import synthetic_rows

IDS = ("context_id", "goal_id", "question_id")


def flat(contexts: int) -> list[dict[str, str]]:
    """One row per question of synthetic groups, references as a JSON list (how a CSV cell holds several)."""
    rows = synthetic_rows(seed=0, contexts=contexts, goals_per_context=3, questions_per_goal=4, chinese=contexts // 5)
    out = []
    for group in rows:
        refs = {g["question_id"]: g["references"] for g in group["gold"]}
        for q in group["questions"]:
            out.append({"context_id": group["context_id"], "context": group["context"], "goal_id": group["goal_id"],
                        "goal": group["goal"], "question_id": q["question_id"], "question": q["question"],
                        "references": json.dumps(refs[q["question_id"]], ensure_ascii=False)})  # fmt: skip
    return out


def write(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def timed(path: Path) -> float:
    start = time.perf_counter()
    load_any(path)
    return time.perf_counter() - start


def best_of(declared: Path, derived: Path, repeats: int) -> tuple[float, float]:
    """The best time of each, the two loads interleaved so that a change of machine load falls on both."""
    pairs = [(timed(declared), timed(derived)) for _ in range(repeats)]
    return min(a for a, _ in pairs), min(b for _, b in pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contexts", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rows = flat(args.contexts)
    with tempfile.TemporaryDirectory() as tmp:
        declared = write(Path(tmp) / "declared.csv", rows)
        derived = write(Path(tmp) / "derived.csv", [{k: v for k, v in r.items() if k not in IDS} for r in rows])
        load_any(derived)  # untimed: imports and first-use costs fall on neither side
        with_ids, without = best_of(declared, derived, args.repeats)
    print(f"rows {len(rows)}; load with ID columns {with_ids:.2f} s; IDs derived {without:.2f} s; "
          f"ratio {without / with_ids:.2f}; load average {os.getloadavg()[0]:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
