"""A source holding one long unbroken line costs what its tokens cost, measured side by side in one run.

Builds two datasets from the same synthetic groups (`gacc_hf.synthetic`). In the first, one source ends with a
single unbroken line of `--chars` characters (default 300,000) and no whitespace: runs of one repeated letter,
random Latin letters, Chinese, base64, digits and table rules, so that the letter runs join into pre-token
pieces tens of thousands of characters long. In the second, that source ends with ordinary lines instead: the
same characters wrapped at 76 columns, trimmed from the end until the source has the same cl100k_base token
count as the first. Each dataset then gets the same rules run (`gacc_hf.run_benchmark`: compressors truncate and
goal-lines, reader fields, judge exact, conditions own/full/oracle, on a fresh cache) and its results folder
written (`save`: the report and the results page). Prints both wall times and their ratio; the target is a ratio
of at most 1.5 (the cost follows tokens, not line length).

    PYTHONPATH=$PWD python benchmarks/long_lines.py [--chars 300000] [--contexts 20]
"""

from __future__ import annotations

import argparse
import base64
import random
import tempfile
import time
from pathlib import Path

import gacc_hf
from gacc_hf.tokenizer import get_codec

RUN = dict(
    compressor=["truncate", "goal-lines"],
    reader="fields",
    judge="exact",
    ratios=(0.1, 0.25),
    conditions=("own", "full", "oracle"),
    n_bootstrap=200,
    progress=False,
)
WRAP = 76


def long_line(chars: int, seed: int = 0) -> str:
    """`chars` characters without whitespace, in six kinds of run, each a sixth of the line."""
    rng = random.Random(seed)
    share = chars // 6
    runs = [
        "a" * share,
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(share)),
        "".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(share)),
        base64.b64encode(rng.randbytes(share)).decode("ascii")[:share],
        "".join(rng.choice("0123456789") for _ in range(share)),
        ("|" + "-" * 14) * (share // 15 + 1),
    ]
    line = "".join(runs)
    return (line + "x" * chars)[:chars]


def wrapped(line: str, tokens: int) -> str:
    """The line cut into lines of `WRAP` characters, trimmed from the end to at most `tokens` tokens."""
    codec = get_codec()
    text = "\n".join(line[i : i + WRAP] for i in range(0, len(line), WRAP))
    while codec.count(text) > tokens:
        over = codec.count(text) - tokens
        text = text[: len(text) - max(1, over)]
    return text


def datasets(chars: int, contexts: int):  # type: ignore[no-untyped-def]
    """The dataset with the long line and its twin with ordinary lines; the twin's tokens and the long one's."""
    base = gacc_hf.synthetic(seed=0, contexts=contexts, goals_per_context=2, questions_per_goal=3)
    first = base[0]["context"]
    line = long_line(chars)
    long_source = f"{first}\n{line}"
    short_source = f"{first}\n{wrapped(line, get_codec().count(long_source) - get_codec().count(first + chr(10)))}"

    def swap(source: str):  # type: ignore[no-untyped-def]
        return base.map(lambda row: {"context": source if row["context"] == first else row["context"]})

    return swap(long_source), swap(short_source), get_codec().count(long_source), get_codec().count(short_source)


def timed(dataset) -> float:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = gacc_hf.run_benchmark(dataset, cache_dir=str(Path(tmp) / "cache"), **RUN)
        result.save(Path(tmp) / "results")
        seconds = time.perf_counter() - start
    assert result.integrity["count_errors"] == 0, result.integrity
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chars", type=int, default=300_000, help="length of the unbroken line")
    parser.add_argument("--contexts", type=int, default=20)
    args = parser.parse_args()
    long_ds, lines_ds, long_tokens, lines_tokens = datasets(args.chars, args.contexts)
    print(f"plan: {args.contexts} sources x 2 goals x 3 questions; {RUN['compressor']}, {RUN['conditions']}")
    print(f"the source with the line: {long_tokens} tokens; with ordinary lines: {lines_tokens} tokens")
    timed(gacc_hf.synthetic(seed=1, contexts=2))  # loads the codec and the methods outside the timings
    lines_s = timed(lines_ds)
    long_s = timed(long_ds)
    print(f"{'ordinary lines':<34} {lines_s:8.2f} s")
    print(f"{f'one {args.chars:,}-character line':<34} {long_s:8.2f} s")
    print(f"{'ratio':<34} {long_s / lines_s:8.2f}x   (target <= 1.5x)")


if __name__ == "__main__":
    main()
