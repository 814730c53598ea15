"""The local models' speed: reader throughput at batch sizes 1 and 8, and the harness overhead of the main job.

1. Reader throughput: the SmolLM2 reader answers the same sample questions (memories: `embed` at ratio
   0.1) one at a time and in batches of 8; questions/s for both, side by side, and whether the answers
   are identical (greedy decoding must not depend on batching).
2. Main job (`--main-job`): `gacc run` with its defaults, through `gacc_hf.cli.main`, on an empty cache.
   Every registered method it names is wrapped in a timer (name and revision unchanged, so cache keys
   are the same), and the harness overhead is printed as (wall time) / (time inside model calls),
   once for the whole command and once without model loading.

    HF_HUB_OFFLINE=1 python benchmarks/models.py [--questions 16] [--main-job --cache-dir DIR --output-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from gacc_hf import CompressorInput, ReaderInput, get_codec
from gacc_hf.data import load_sample
from gacc_hf.protocol import call_many, method_name, revision_of
from gacc_hf.registry import resolve

SECONDS: dict[str, float] = defaultdict(float)  # time inside model calls, by role
LOADING: dict[str, float] = defaultdict(float)  # time building (loading) methods, by role


class Timed:
    """A method with the same name and revision whose calls add their wall time to `SECONDS[role]`."""

    def __init__(self, role: str, fn: Any) -> None:
        self.role, self.fn = role, fn
        self.name, self.revision = method_name(fn), revision_of(fn)

    def _timed(self, call: Callable[[Any], Any], arg: Any) -> Any:
        start = time.perf_counter()
        try:
            return call(arg)
        finally:
            SECONDS[self.role] += time.perf_counter() - start

    def __call__(self, item: Any) -> Any:
        return self._timed(self.fn, item)

    def batch(self, items: Sequence[Any]) -> list[Any]:
        return self._timed(lambda xs: call_many(self.fn, xs), items)


def reader_throughput(n_questions: int) -> None:
    rows = list(load_sample("judge"))
    compressor, codec = resolve("compressor", "embed"), get_codec()
    items: list[ReaderInput] = []
    for row in rows:
        budget = len(codec.encode(row["context"])) // 10
        memory = compressor(CompressorInput(row["context"], row["goal"], budget))
        items += [ReaderInput(memory, q["question"]) for q in row["questions"]]
    items = items[:n_questions]
    answers, rates = {}, {}
    for size in (1, 8):
        reader = resolve("reader", "smollm2")
        reader.batch_size = size  # execution setting: same revision, same model
        start = time.perf_counter()
        answers[size] = reader.batch(items)
        rates[size] = len(items) / (time.perf_counter() - start)
    print(f"reader smollm2, {len(items)} sample questions, memories = embed at ratio 0.1")
    print(f"{'batch size':>10} {'questions/s':>12}")
    for size, rate in rates.items():
        print(f"{size:>10} {rate:>12.2f}")
    print(f"speed-up batch 8 / batch 1: {rates[8] / rates[1]:.2f}x; answers identical: {answers[1] == answers[8]}")


def main_job(cache_dir: str, output_dir: str) -> None:
    from gacc_hf.cli import main
    from gacc_hf.presets import DEFAULTS
    from gacc_hf.registry import register

    names = [("compressor", c) for c in DEFAULTS.compressors] + [("reader", DEFAULTS.reader), ("judge", DEFAULTS.judge)]
    for role, name in names:  # load every model first, so loading is timed apart from the run
        start = time.perf_counter()
        method = Timed(role, resolve(role, name))  # type: ignore[arg-type]
        LOADING[role] += time.perf_counter() - start
        register(role, name, lambda method=method: method)  # type: ignore[arg-type,misc]
    argv = ["run", "--cache-dir", cache_dir, "--output-dir", output_dir]
    start = time.perf_counter()
    code = main(argv)
    wall = time.perf_counter() - start
    inside, loading = sum(SECONDS.values()), sum(LOADING.values())
    print(f"\nmain job: gacc {' '.join(argv)} (exit {code})")
    print(f"wall {wall:.1f} s after {loading:.1f} s of model loading; inside model calls {inside:.1f} s")
    for role in ("compressor", "reader", "judge"):
        print(f"  {role:<10} {SECONDS[role]:8.1f} s in calls, {LOADING[role]:6.1f} s loading")
    print(f"overhead (wall / time inside model calls): {wall / max(inside, 1e-9):.3f}")
    print(f"with model loading counted as overhead: {(wall + loading) / max(inside, 1e-9):.3f}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=16, help="questions for the throughput part (default 16)")
    parser.add_argument("--main-job", action="store_true", help="also run and time `gacc run` on an empty cache")
    parser.add_argument("--cache-dir", help="cache for the main job (default: a new temporary folder)")
    parser.add_argument("--output-dir", help="results folder of the main job (default: a new temporary folder)")
    args = parser.parse_args(argv)
    if args.main_job:  # first, so that its model loading is measured
        tmp = tempfile.mkdtemp(prefix="gacc-models-bench-")
        main_job(args.cache_dir or os.path.join(tmp, "cache"), args.output_dir or os.path.join(tmp, "run"))
    reader_throughput(args.questions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
