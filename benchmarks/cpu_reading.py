"""SmolLM2 reading whole sources on the CPU: seconds per prompt token, English and Chinese side by side.

For each language, the first `--groups` goals of the bundled sample are read from the whole source (the
`full` condition: the longest reading a run asks for) by the `smollm2` reader on the CPU, through
`run_benchmark` on a fresh cache. The prompt tokens are those `gacc run --dry-run` counts for the same run
(the reader's own tokenizer and chat template); the seconds are the time inside the reader's calls. Their
ratio is the rate a dry run multiplies by (`gacc_hf.methods.hf_chat.CPU_SECONDS_PER_PROMPT_TOKEN`).

    HF_HUB_OFFLINE=1 python benchmarks/cpu_reading.py [--groups 1]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from gacc_hf.run.benchmark import run_benchmark
from gacc_hf.run.dry_run import dry_run
from gacc_hf.run.presets import RUN_DEFAULTS

METHODS = {"compressor": "truncate", "reader": "smollm2?device=cpu", "judge": "contains", "conditions": ["full"]}


def measure(data: str, groups: int) -> tuple[int, int, float]:
    """(reader calls, prompt tokens, seconds inside the reader's calls) for the first `groups` goals of `data`."""
    settings = {k: RUN_DEFAULTS[k] for k in ("seed", "n_bootstrap", "batch_size", "on_error")}
    with tempfile.TemporaryDirectory() as cache:
        plan = dry_run(data, settings=settings, ratios=[0.2], cache_dir=cache, limit=groups, **METHODS)
        (reader,) = [n for n in plan.needs if n.role == "reader"]
        result = run_benchmark(
            data, ratios=[0.2], cache_dir=cache, limit=groups, n_bootstrap=0, progress=False, **METHODS
        )
    return reader.to_call, reader.prompt_tokens, result.seconds["reader"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=1, help="goals read per language")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    rows = []
    for language, data in (("en", "sample"), ("zh", "sample:zh")):
        start = time.perf_counter()
        calls, tokens, seconds = measure(data, args.groups)
        rows.append((language, calls, tokens, seconds))
        wall = time.perf_counter() - start
        print(
            f"{language}: {calls} reader calls, {tokens} prompt tokens, {seconds:.1f} s reading "
            f"({seconds / calls:.1f} s a call, {1000 * seconds / tokens:.2f} ms a prompt token); wall {wall:.1f} s"
        )
    calls, tokens, seconds = (sum(r[i] for r in rows) for i in (1, 2, 3))
    print(
        f"both: {calls} calls, {tokens} prompt tokens, {seconds:.1f} s: {1000 * seconds / tokens:.2f} ms a prompt token"
    )
    zh, en = (r[3] / r[2] for r in sorted(rows, key=lambda r: r[0] != "zh"))
    print(f"zh ÷ en per prompt token: {zh / en:.2f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
