"""Wall time of one CPU-bound run on 1 and on 2 processes (`gacc run --num-processes`), side by side.

The compressor is a tiny randomly initialised Llama (transformers) that greedily generates
`GACC_SCALE_NEW_TOKENS` tokens over a byte vocabulary for every memory: real model work on the CPU and
nothing to download. Reader and judge are rules, so the compressor dominates. Each run starts from an
empty cache and is timed as a whole command (start-up and the merge included, as a user sees it); the
results folders are then compared (ledger, answers, scores, calls).

Runs: 1 process with 1 thread and 2 processes with 1 thread each (what `accelerate launch` sets), and with
`--default-threads` also 1 process with torch's default intra-op threads (one per core; very slow on a
busy machine, where its threads wait for each other). Each run is then repeated in its folder, where
everything is cached: that warm rerun is the fixed cost (start-up, plan, merge, writing), and wall minus
warm is the model work.

    python benchmarks/scale.py [--contexts 16] [--new-tokens 64] [--default-threads]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NEW_TOKENS_ENV = "GACC_SCALE_NEW_TOKENS"
PROMPT_BYTES = 384


class TinyLlama:
    """A 4-layer, 256-wide Llama with random weights (seed 0): the same weights in every process."""

    name = "tiny-llama"

    def __init__(self) -> None:
        import torch
        from transformers import LlamaConfig, LlamaForCausalLM

        self.new_tokens = int(os.environ.get(NEW_TOKENS_ENV, "32"))
        torch.manual_seed(0)
        config = LlamaConfig(
            vocab_size=256,
            hidden_size=256,
            intermediate_size=512,
            num_hidden_layers=4,
            num_attention_heads=4,
            num_key_value_heads=4,
            max_position_embeddings=PROMPT_BYTES + 256,
        )
        self.model = LlamaForCausalLM(config).eval()
        self.revision = f"tiny-llama-v2@seed=0,new_tokens={self.new_tokens}"

    def __call__(self, item) -> str:  # type: ignore[no-untyped-def]
        import torch

        ids = list((item.goal + "\n" + item.context).encode("utf-8")[:PROMPT_BYTES])
        with torch.no_grad():
            out = self.model.generate(
                torch.tensor([ids]),
                attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                max_new_tokens=self.new_tokens,
                min_new_tokens=self.new_tokens,
                do_sample=False,
                pad_token_id=0,
            )
        return bytes(out[0, len(ids) :].tolist()).decode("utf-8", errors="ignore")


def _run(workdir: Path, data: Path, processes: int, new_tokens: int, threads: int | None) -> tuple[float, dict]:
    workdir.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    env = {
        **env,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")])),
        NEW_TOKENS_ENV: str(new_tokens),
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    cmd = [sys.executable, "-m", "gacc_hf", "run", "--data", str(data), "--compressors", "import:scale:TinyLlama"]
    cmd += ["--ratios", "0.1,0.25", "--conditions", "own,none,cross", "--batch-size", "4", "--no-progress"]
    cmd += ["--num-processes", str(processes), "--cache-dir", "cache", "--output-dir", "out", "--overwrite"]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{processes}-process run failed:\n{done.stderr[-3000:]}")
    from gacc_hf.results.folder import read_folder

    run = read_folder(workdir / "out")
    comparable = {
        "scores": run.scores,
        "answers": run.answers,
        "memories": run.memories,
        "calls": run.payload["calls"],
    }
    return wall, comparable


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contexts", type=int, default=16, help="synthetic contexts (3 goals each)")
    parser.add_argument("--new-tokens", type=int, default=64, help="tokens generated per memory")
    parser.add_argument("--default-threads", action="store_true", help="also 1 process with torch's default threads")
    args = parser.parse_args()
    from gacc_hf.data.synthetic import synthetic_rows

    load = os.getloadavg()[0]
    setups = [("1 process, 1 thread", 1, 1), ("2 processes, 1 thread", 2, 1)]
    if args.default_threads:
        setups.append(("1 process, default threads", 1, None))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = root / "data.jsonl"
        rows = synthetic_rows(seed=0, contexts=args.contexts)
        data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        runs, warm = [], []
        for i, (_, n, t) in enumerate(setups):
            runs.append(_run(root / str(i), data, n, args.new_tokens, t))
            warm.append(_run(root / str(i), data, n, args.new_tokens, t)[0])
    calls = runs[0][1]["calls"]["compressor"]
    print(f"scale: synthetic {args.contexts} contexts, {calls} tiny-llama memories x {args.new_tokens} tokens")
    print(f"machine: {os.cpu_count()} cores, load average {load:.1f} before the runs")
    print(f"{'setup':<28} {'wall s':>8} {'warm s':>7} {'model s':>8} {'memories/s':>11} {'calls':>6}")
    model = [wall - w for (wall, _), w in zip(runs, warm, strict=True)]
    for (label, _, _), (wall, res), w, m in zip(setups, runs, warm, model, strict=True):
        print(f"{label:<28} {wall:>8.1f} {w:>7.1f} {m:>8.1f} {calls / m:>11.2f} {res['calls']['compressor']:>6}")
    (one, _), (two, _) = runs[:2]
    print(f"speed-up, 2 processes vs 1 (1 thread each): {one / two:.2f}x wall, {model[0] / model[1]:.2f}x model work")
    if args.default_threads:
        print(f"speed-up, 2 processes vs 1 process with default threads: {runs[2][0] / two:.2f}x wall")
    print(f"results identical: {all(res == runs[0][1] for _, res in runs)}")


if __name__ == "__main__":
    main()
