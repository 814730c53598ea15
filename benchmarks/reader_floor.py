"""The local reader against its floor: the least model compute the main job's reading needs.

1. Harness: `run_benchmark` runs the main job (the `main` preset) on a fresh cache, optionally on its
   first `--limit` groups; the reader's time is the time inside its calls (`result.seconds["reader"]`).
2. Floor: the same reader items (every distinct memory and question the run read), the same loaded
   model, threads, dtype and batch limits, with nothing around the model: every memory's prompt prefix
   prefilled once and all questions decoded in shared batches, all items at once (see `floor`); each
   row leaves its batch at the token that ends its answer (argmax, end of turn, stop string).

The floor is timed before and after the run (the reader items come from a run with the rule reader:
memories and questions do not depend on the reader) and the lesser time counts, since other work on a
shared machine drifts. Prints seconds and questions/s for both, harness ÷ floor, and whether the
floor's answers equal the run's. With `--check`, the run's answers are also compared with the recorded main job
(`docs/results/main/answers.parquet`, read by the previous reader), question by question.

    HF_HUB_OFFLINE=1 python benchmarks/reader_floor.py [--limit 6] [--check]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from gacc_hf.methods import hf_chat as pipeline
from gacc_hf.methods.prefix_decoding import RowDecoder, eos_ids
from gacc_hf.methods.registry import resolve
from gacc_hf.run.benchmark import run_benchmark
from gacc_hf.run.presets import DEFAULTS

RECORDED = Path(__file__).resolve().parent.parent / "docs" / "results" / "main" / "answers.parquet"


def reader_items(result) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """The distinct questions of each distinct memory the run read, from its ledger and answer rows."""
    memory_of = {m["memory_sha256"]: m["memory"] for m in result.memories if m.get("memory") is not None}
    items: dict[str, dict[str, None]] = {}
    for row in result.answers:
        items.setdefault(memory_of[row["memory_sha256"]], {})[row["question"]] = None
    return {memory: list(questions) for memory, questions in items.items()}


def floor(reader, items: dict[str, list[str]]) -> tuple[float, dict[tuple[str, str], str]]:  # type: ignore[no-untyped-def]
    """Seconds for the least decoding work that produces the run's answers; those answers.

    Every reader item at once, through a fresh `RowDecoder` with the reader's batch limits: each distinct
    memory's prompt prefix prefilled once, all questions decoded in shared batches, nothing around it (no
    runner chunks, cache, tokenizer counts or progress).
    """
    model, tokenizer = reader.lm.model, reader.lm.tokenizer
    keys, rows = [], []
    for memory, questions in items.items():
        ids, shared = reader.memory_prompts(memory, questions)
        keys += [(memory, q) for q in questions]
        rows += [(tuple(r[:shared]), r[shared:]) for r in ids]
    decoder = RowDecoder(
        model, reader.max_new_tokens, eos_ids(model.generation_config), reader._stop_criteria(),
        tokenizer.pad_token_id, reader.batch_size, reader.batch_tokens,
    )  # fmt: skip
    started = time.perf_counter()
    outs = decoder.decode(rows)
    seconds = time.perf_counter() - started
    return seconds, {
        key: pipeline.first_line(tokenizer.decode(out, skip_special_tokens=True))
        for key, out in zip(keys, outs, strict=True)
    }


def timed_run(limit: int | None, **methods: str):  # type: ignore[no-untyped-def]
    """The main job (its first `limit` groups) on a fresh cache, and its wall seconds."""
    with tempfile.TemporaryDirectory() as cache_dir:
        started = time.perf_counter()
        result = run_benchmark(DEFAULTS.data, limit=limit, cache_dir=cache_dir, progress=False, **methods)
        return result, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="the first N groups of the sample only")
    parser.add_argument("--check", action="store_true", help="compare the answers with docs/results/main")
    parser.add_argument("--no-floor", action="store_true", help="only the run (with --check: an answer check)")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    if not args.no_floor:
        # the run's reader items without reading them: memories and questions do not depend on the reader
        items = reader_items(timed_run(args.limit, reader="fields", judge="exact")[0])
        reader = resolve("reader", DEFAULTS.reader)  # the run's model, threads and dtype (one loaded copy)
        first, floor_answers = floor(reader, items)
    result, wall = timed_run(args.limit)  # the main preset
    print(f"groups: {args.limit or 'all'}; run: {wall:.1f} s wall, reader {result.seconds['reader']:.1f} s in "
          f"{result.calls['reader']} calls")  # fmt: skip
    if not args.no_floor:
        second = floor(reader, items)[0]  # timed before and after the run: the load drifts on a shared machine
        floor_s, questions, read = min(first, second), sum(len(q) for q in items.values()), result.seconds["reader"]
        print(f"floor before the run {first:.1f} s, after {second:.1f} s; the lesser is the floor")
        print(f"{'':32}{'seconds':>9}{'questions/s':>13}{'÷ floor':>9}")
        print(f"{'floor':32}{floor_s:9.1f}{questions / floor_s:13.3f}{1:9.2f}")
        print(f"{'harness: reader calls':32}{read:9.1f}{result.calls['reader'] / read:13.3f}{read / floor_s:9.2f}")
        print(f"{'harness: whole run, wall':32}{wall:9.1f}{'':13}{wall / floor_s:9.2f}")
        memory_of = {m["memory_sha256"]: m["memory"] for m in result.memories if m.get("memory") is not None}
        run_answers = {(memory_of[r["memory_sha256"]], r["question"]): r["answer"] for r in result.answers}
        same = sum(floor_answers[k] == run_answers[k] for k in floor_answers)
        print(f"floor answers equal to the run's: {same} / {len(floor_answers)} questions")
    if args.check:
        import pandas as pd

        recorded = pd.read_parquet(RECORDED)
        before = {(r.question_id, r.compressor, r.condition): r.answer for r in recorded.itertuples()}
        now = {(r["question_id"], r["compressor"], r["condition"]): r["answer"] for r in result.answers}
        differ = [k for k in now if before.get(k) != now[k]]
        print(f"answers equal to docs/results/main: {len(now) - len(differ)} / {len(now)} rows")
        for key in differ:
            print(f"  differs: {key}: {before.get(key)!r} -> {now[key]!r}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
