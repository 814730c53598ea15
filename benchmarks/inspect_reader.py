"""SmolLM2 as the reader through Inspect's Hugging Face provider vs gacc-hf's own `smollm2` reader, side by side.

Both read the same memories (the compressor echoes its prompt on both sides, cut to L by the protocol) with the
same weights, chat template, greedy decoding, 24-token limit and newline stop; Inspect reads one prompt at a time
(`max_connections=1`), gacc-hf prefills each memory once and decodes its questions in shared batches. Prints each
side's wall time (Inspect's includes loading the model), the ratio, how many answers are equal word for word and
both Micro values, then the load average.

    python benchmarks/inspect_reader.py              # 2 groups of the sample (9 questions), about a minute idle
    python benchmarks/inspect_reader.py --groups 5
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.helpers, from a checkout

from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

import gacc_hf
from gacc_hf.inspect_eval import gacc_bench
from gacc_hf.methods.weights import smollm2_folder
from tests.helpers.inspect_models import echo_compressor, mock_compressor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=2)
    parser.add_argument("--ratio", type=float, default=0.2)
    args = parser.parse_args()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as logs:
        reader = get_model(f"hf/{smollm2_folder()}", do_sample=False)
        [log] = inspect_eval(
            gacc_bench(ratio=args.ratio), model=mock_compressor(), model_roles={"reader": reader},
            limit=args.groups, log_dir=logs, display="none", max_connections=1,
        )  # fmt: skip
        inspect_seconds = time.perf_counter() - start
        ours = [(s.id, a) for s in log.samples for a in s.scores["gacc_scorer"].metadata["answers"]]
    start = time.perf_counter()
    result = gacc_hf.run_benchmark(
        "sample", compressor=echo_compressor, reader="smollm2", judge="contains", ratios=args.ratio,
        conditions=("own",), limit=args.groups, progress=False,
    )  # fmt: skip
    gacc_seconds = time.perf_counter() - start
    theirs = {(a["goal_id"], a["question_id"]): a["answer"] for a in result.answers}
    equal = sum(a["answer"] == theirs[(goal, a["question_id"])] for goal, a in ours)
    micro = log.results.scores[0].metrics["micro"].value
    print(f"groups {args.groups}, questions {len(ours)}, ratio {args.ratio}")
    print(f"Inspect hf/ reader: {inspect_seconds:.1f} s   gacc-hf smollm2 reader: {gacc_seconds:.1f} s   "
          f"ratio {inspect_seconds / gacc_seconds:.2f}")  # fmt: skip
    print(f"answers equal: {equal}/{len(ours)}   Micro: Inspect {micro:.3f}, gacc-hf {result.scores[0]['micro']:.3f}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
