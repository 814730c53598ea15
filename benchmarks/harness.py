"""Harness overhead against the tiktoken floor, measured side by side in one run.

Plan: synthetic 1,000 contexts x 3 goals x 4 questions, ratios 0.1/0.25/0.5, conditions own/none/cross,
rule methods (goal-lines compressor, fields reader, exact judge). Prints the cold run, the warm rerun
(0 model calls), two floors (bare loops doing only the tiktoken encodes of the protocol; see
`floor_seconds`), their ratios and the peak RSS.

A shared machine's speed drifts within a minute, so the measurement is taken in `--rounds` rounds, each
timing the floors, a cold run on a fresh cache and its warm rerun back to back; every round's ratios are
printed, and the summary gives their median and range.

    python benchmarks/harness.py [--contexts 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time

import gacc_hf
from gacc_hf.budget import token_budget
from gacc_hf.data.schema import validate
from gacc_hf.methods.rules import GoalLinesCompressor
from gacc_hf.protocol import CompressorInput
from gacc_hf.run.conditions import GoalAssigner

RATIOS = (0.1, 0.25, 0.5)
CONDITIONS = ("own", "none", "cross")


def floor_seconds(dataset, codec) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Time only the tiktoken encodes of the protocol's token arithmetic, two ways.

    - per plan row: for every (group, condition, ratio) row, encode the context (N), the compressor output
      and the memory, as a harness without a memory cache would;
    - distinct: the same encodes once per distinct context, output and memory (the least any harness does).
    """
    groups = validate(dataset)
    assigner = GoalAssigner(groups, seed=0)
    compress = GoalLinesCompressor()
    n = {c: len(codec.encode(c)) for c in dict.fromkeys(g.context for g in groups)}
    rows = [(g.context, assigner.shown(g, cond).text, r) for g in groups for cond in CONDITIONS for r in RATIOS]
    outputs = {key: compress(CompressorInput(key[0], key[1], token_budget(n[key[0]], key[2]))) for key in rows}
    memories = {key: codec.decode(codec.encode(out)[: token_budget(n[key[0]], key[2])]) for key, out in outputs.items()}
    start = time.perf_counter()
    for key in rows:
        codec.encode(key[0])
        codec.encode(outputs[key])
        codec.encode(memories[key])
    per_row = time.perf_counter() - start
    start = time.perf_counter()
    for context in n:
        codec.encode(context)
    for key, out in outputs.items():
        codec.encode(out)
        codec.encode(memories[key])
    return per_row, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--contexts", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    codec = gacc_hf.get_codec()
    dataset = gacc_hf.synthetic(seed=0, contexts=args.contexts, goals_per_context=3, questions_per_goal=4)
    kwargs = dict(
        compressor="goal-lines",
        reader="fields",
        judge="exact",
        ratios=RATIOS,
        conditions=CONDITIONS,
        n_bootstrap=1000,
        progress=False,
    )
    print(f"plan: {args.contexts} contexts x 3 goals x 4 questions, ratios {RATIOS}, conditions {CONDITIONS}")
    ratios: dict[str, list[float]] = {"cold run": [], "warm rerun": []}
    for round_ in range(1, args.rounds + 1):
        floor_rows, floor = floor_seconds(dataset, codec)
        with tempfile.TemporaryDirectory() as cache:
            t0 = time.perf_counter()
            cold = gacc_hf.run_benchmark(dataset, cache_dir=cache, **kwargs)
            t1 = time.perf_counter()
            warm = gacc_hf.run_benchmark(dataset, cache_dir=cache, **kwargs)
            t2 = time.perf_counter()
        if round_ == 1:
            questions = sum(r["n_questions"] for r in cold.scores)
            print(f"scored question rows: {questions}; cold calls {cold.calls}; warm calls {warm.calls}")
            print(f"integrity cold {cold.integrity} warm {warm.integrity}")
        print(f"round {round_}")
        print(f"  {'floor, per plan row':<30} {floor_rows:8.3f} s")
        print(f"  {'floor, distinct texts':<30} {floor:8.3f} s")
        for name, secs in (("cold run", t1 - t0), ("warm rerun", t2 - t1)):
            per_row, distinct = secs / floor_rows, secs / floor
            print(f"  {name:<30} {secs:8.3f} s   {per_row:6.2f}x per-row floor   {distinct:6.2f}x distinct floor")
            ratios[name].append(per_row)
    for name, target in (("cold run", "3x"), ("warm rerun", "2x, goal 1.5x")):
        values = ratios[name]
        print(
            f"{name:<32} median {statistics.median(values):5.2f}x per-row floor "
            f"(range {min(values):.2f}-{max(values):.2f}x over {len(values)} rounds; target <= {target})"
        )
    print(f"{'peak RSS':<32} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:8.1f} MiB")


if __name__ == "__main__":
    main()
