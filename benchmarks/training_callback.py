"""What `GaccCallback` costs per evaluation: the model's first evaluation at a checkpoint against the second at
the same weights (every memory from the cache), the weights hash that makes the revision, and the first
evaluation with the model generating its prompts in batches against one prompt per `generate` call (the
floor, measured in the same run; both must write the same memories).

    HF_HUB_OFFLINE=1 HF_EVALUATE_OFFLINE=1 .venv/bin/python benchmarks/training_callback.py [--contexts 3]

The compressor is the local SmolLM2 wrapped by `compressor_from_model` (greedy, `--max-new-tokens` new tokens),
the reader `fields` and the judge `exact` on synthetic rows, one ratio, the `own` condition: the setting the
callback runs at each `on_evaluate`. Both evaluations are checked to give the same Micro before times print.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time

import gacc_hf
from gacc_hf.methods.weights import smollm2_folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contexts", type=int, default=3)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=8, help="prompts per generate call, against 1")
    args = parser.parse_args()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)
    folder = smollm2_folder()
    model, tokenizer = AutoModelForCausalLM.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    compressor = gacc_hf.compressor_from_model(model, tokenizer, max_new_tokens=args.max_new_tokens)
    data = gacc_hf.synthetic(seed=0, contexts=args.contexts)
    started = time.perf_counter()
    revision = compressor.revision
    hash_s = time.perf_counter() - started
    runs = []
    with tempfile.TemporaryDirectory() as cache:
        for _ in range(2):
            started = time.perf_counter()
            result = gacc_hf.run_benchmark(
                data, compressor, "fields", "exact", ratios=0.2, conditions=("own",), cache_dir=cache, progress=False
            )
            runs.append((time.perf_counter() - started, result.calls["compressor"], result.scores[0]["micro"]))
    assert runs[0][2] == runs[1][2], "the cached evaluation scored differently"
    weights_mb = sum(t.numel() * t.element_size() for t in model.state_dict().values()) / 1e6
    print(f"python {platform.python_version()}, torch threads 1, {len(data)} groups, revision {revision}")
    print(f"revision (weights hash, {weights_mb:.0f} MB): {hash_s:.2f} s")
    for name, (seconds, calls, micro) in zip(("first evaluation", "same weights again"), runs, strict=True):
        print(f"{name}: {seconds:.2f} s, {calls} compressor calls, micro {micro:.3f}")
    print(f"ratio first / again: {runs[0][0] / runs[1][0]:.1f}x")
    _batched_against_one(model, tokenizer, data, args)


def _batched_against_one(model: object, tokenizer: object, data: object, args: argparse.Namespace) -> None:
    """A first evaluation (empty cache) at one prompt per `generate` call, then at `--batch-size`."""
    timed = {}
    for size in (1, args.batch_size):
        compressor = gacc_hf.compressor_from_model(
            model, tokenizer, max_new_tokens=args.max_new_tokens, batch_size=size
        )
        with tempfile.TemporaryDirectory() as cache:
            started = time.perf_counter()
            result = gacc_hf.run_benchmark(
                data, compressor, "fields", "exact", ratios=0.2, conditions=("own",), cache_dir=cache, progress=False
            )
            seconds = time.perf_counter() - started
        timed[size] = (seconds, [m["memory_sha256"] for m in result.memories], result.calls["compressor"])
    assert timed[1][1] == timed[args.batch_size][1], "batched generation wrote other memories"
    for size, (seconds, _, calls) in timed.items():
        print(f"first evaluation, {size} prompt(s) per generate call: {seconds:.2f} s, {calls} compressor calls")
    print(f"ratio 1 / {args.batch_size} per call: {timed[1][0] / timed[args.batch_size][0]:.2f}x (same memories)")


if __name__ == "__main__":
    main()
