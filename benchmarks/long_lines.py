"""A source holding one long unbroken line costs what its tokens cost, measured side by side in one run.

Builds two datasets from the same synthetic groups (`gacc_hf.synthetic`). In the first, one source ends with a
single unbroken line of `--chars` characters (default 300,000) and no whitespace: runs of one repeated letter,
random Latin letters, Chinese, base64, digits and table rules, so that the letter runs join into pre-token
pieces tens of thousands of characters long. In the second, that source ends with ordinary lines instead: the
same characters wrapped at 76 columns, trimmed from the end until the source has the same cl100k_base token
count as the first. Each dataset then gets the same rules run (`gacc_hf.run_benchmark`: compressors truncate and
goal-lines, reader fields, judge exact, conditions own/full/oracle, on a fresh cache) and its results folder
written (`save`: the report and the results page). Each run is timed in a process of its own, so no memo of
an earlier run helps it, in `--rounds` rounds whose order alternates; prints both wall times, the CPU times (less
moved by other work on a shared machine) and their ratios, then the medians. The target is a ratio of at most 1.5
(the cost follows tokens, not line length).

    PYTHONPATH=$PWD python benchmarks/long_lines.py [--chars 300000] [--contexts 20] [--rounds 3]
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import statistics
import subprocess
import sys
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


def timed(dataset) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Wall and CPU seconds of the run and its `save`, on a fresh cache."""
    with tempfile.TemporaryDirectory() as tmp:
        wall, cpu = time.perf_counter(), time.process_time()
        result = gacc_hf.run_benchmark(dataset, cache_dir=str(Path(tmp) / "cache"), **RUN)
        result.save(Path(tmp) / "results")
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert result.integrity["count_errors"] == 0, result.integrity
    return wall, cpu


def one(which: str, chars: int, contexts: int) -> None:
    """Time one run in this process (a fresh one: no memo of an earlier run helps) and print it as JSON."""
    long_ds, lines_ds, long_tokens, lines_tokens = datasets(chars, contexts)
    timed(gacc_hf.synthetic(seed=1, contexts=2))  # loads the codec and the methods outside the timing
    wall, cpu = timed(long_ds if which == "long" else lines_ds)
    print(json.dumps({"wall": wall, "cpu": cpu, "tokens": long_tokens if which == "long" else lines_tokens}))


def measure(which: str, chars: int, contexts: int) -> dict[str, float]:
    command = [sys.executable, __file__, "--one", which, "--chars", str(chars), "--contexts", str(contexts)]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chars", type=int, default=300_000, help="length of the unbroken line")
    parser.add_argument("--contexts", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--one", choices=["long", "lines"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        return one(args.one, args.chars, args.contexts)
    print(f"plan: {args.contexts} sources x 2 goals x 3 questions; {RUN['compressor']}, {RUN['conditions']}")
    times: dict[str, dict[str, list[float]]] = {clock: {"lines": [], "long": []} for clock in ("wall", "cpu")}
    for round_ in range(1, args.rounds + 1):
        order = ("lines", "long") if round_ % 2 else ("long", "lines")
        got = {which: measure(which, args.chars, args.contexts) for which in order}
        if round_ == 1:
            print(f"tokens of the source: with the line {got['long']['tokens']}, with lines {got['lines']['tokens']}")
        print(f"round {round_} (" + " first, ".join(order) + " second)")
        for clock, runs in times.items():
            for which in runs:
                runs[which].append(got[which][clock])
            print(f"  {clock:<5} {_line(got['lines'][clock], got['long'][clock], args.chars)}")
    for clock, runs in times.items():
        ratios = [long / lines for lines, long in zip(runs["lines"], runs["long"], strict=True)]
        print(f"{clock}: ratio median {statistics.median(ratios):.2f}x (range {min(ratios):.2f}-{max(ratios):.2f}x)")
        print(f"  best of each: {_line(min(runs['lines']), min(runs['long']), args.chars)}   (target <= 1.5x)")


def _line(lines: float, long: float, chars: int) -> str:
    return f"ordinary lines {lines:6.2f} s   one {chars:,}-character line {long:6.2f} s   ratio {long / lines:5.2f}x"


if __name__ == "__main__":
    main()
