"""The baselines table: every compressor on the sample at the main job's ratios and conditions.

Defaults are the main job's (the `main` preset: ratio 0.2, conditions own/none with the full and oracle
ceilings, reader `smollm2`, judge `contains`) with every registered compressor that needs no server.
Prints one Markdown table of Micro and Macro with their 95% goal-bootstrap intervals (and evidence
recall when the run reports it), then each compressor's own overshoot of L before the protocol's cut
(from the ledger's `proposed_tokens`), the time each compressor spent in its calls, the wall time and the
load average. Every call is cached, so a rerun (or a run with more compressors) only computes what is new.

    python benchmarks/baselines.py                                   # the README's table (about half an hour on 2 CPUs)
    python benchmarks/baselines.py --compressors llmlingua,longllmlingua --reader fields --judge exact \\
        --conditions own,none --ratios 0.05,0.1,0.2 --groups 6       # overshoot only: minutes
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import gacc_hf
from gacc_hf.run.presets import PRESETS

MAIN = PRESETS["main"]
COMPRESSORS = ["truncate", "goal-lines", "bm25", "embed", "llmlingua", "longllmlingua", "smollm2"]


def _ci(row: dict, key: str) -> str:
    low, high = row.get(f"{key}_ci_low"), row.get(f"{key}_ci_high")
    return f"{row[key]:.3f}" if low is None else f"{row[key]:.3f} [{low:.3f}, {high:.3f}]"


def score_table(scores: list[dict]) -> str:
    """Markdown: one line per (compressor, condition, ratio); evidence recall when the run has it."""
    evidence = any("evidence_micro" in row for row in scores)
    head = ["compressor", "condition", "ratio", "Micro [95% CI]", "Macro [95% CI]", "n_q"]
    head += ["evidence recall [95% CI]"] if evidence else []
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in scores:
        cells = [row["compressor"], row["condition"], f"{row['ratio']:g}", _ci(row, "micro"), _ci(row, "macro")]
        cells += [str(row["n_questions"])]
        cells += [_ci(row, "evidence_micro") if row.get("evidence_micro") is not None else "-"] if evidence else []
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def overshoot_table(memories: list[dict]) -> str:
    """Per compressor and ratio: how often its own output exceeded L, and by how much (called memories only)."""
    lines = ["| compressor | ratio | memories | over L | median proposed / L | max proposed / L |"]
    lines.append("|---|---|---|---|---|---|")
    for name, ratio in dict.fromkeys((m["compressor"], m["ratio"]) for m in memories):
        rows = [m for m in memories if (m["compressor"], m["ratio"]) == (name, ratio)]
        rows = [m for m in rows if m["compressor_called"] and m["budget"] > 0]
        if not rows:
            continue
        over = sum(m["proposed_tokens"] > m["budget"] for m in rows)
        ratios = [m["proposed_tokens"] / m["budget"] for m in rows]
        lines.append(
            f"| {name} | {ratio:g} | {len(rows)} | {over} ({over / len(rows):.0%}) | {statistics.median(ratios):.2f} "
            f"| {max(ratios):.2f} |"
        )
    return "\n".join(lines)


def time_table(memories: list[dict], method_seconds: dict[str, float]) -> str:
    """Per compressor: the distinct memories this run computed (cache hits cost nothing) and the time inside
    its calls."""
    lines = ["| compressor | memories computed | seconds in calls | seconds / memory |", "|---|---:|---:|---:|"]
    for name, seconds in method_seconds.items():
        computed = len({m["memory_key"] for m in memories if m["compressor"] == name and not m["cached"]})
        per = f"{seconds / computed:.3f}" if computed else "-"
        lines.append(f"| {name} | {computed} | {seconds:.2f} | {per} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compressors", default=",".join(COMPRESSORS))
    parser.add_argument("--reader", default=MAIN.reader)
    parser.add_argument("--judge", default=MAIN.judge)
    parser.add_argument("--ratios", default=",".join(f"{r:g}" for r in MAIN.ratios))
    parser.add_argument("--conditions", default=",".join(MAIN.conditions))
    parser.add_argument("--groups", type=int, default=None, help="first N groups of the sample (default: all)")
    parser.add_argument("--cache-dir", default=".gacc_cache")
    args = parser.parse_args()

    start = time.perf_counter()
    result = gacc_hf.run_benchmark(
        MAIN.data,
        compressor=args.compressors.split(","),
        reader=args.reader,
        judge=args.judge,
        ratios=[float(r) for r in args.ratios.split(",")],
        conditions=args.conditions.split(","),
        cache_dir=args.cache_dir,
        limit=args.groups,
    )
    seconds = time.perf_counter() - start
    print(score_table(result.scores))
    print()
    print(overshoot_table(result.memories))
    print()
    print(time_table(result.memories, result.method_seconds.get("compressor", {})))
    print()
    print(f"groups {result.config['n_groups']}, reader {args.reader}, judge {args.judge}; calls {result.calls}")
    print(f"integrity {result.integrity}; wall {seconds:.0f} s; load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
