"""How the script-aware matcher and the Chinese indexing score Chinese data, and the choices they rest on.

    PYTHONPATH=$PWD python benchmarks/chinese_matching.py [DATA.jsonl ...] [--segmenter-path DIR] [--embed]

Default data: the Chinese test fixture `tests/fixtures/zh_fixture.jsonl`. For every question it builds a right
answer (the source sentence holding a reference, and "reference + 。") and a wrong one (another question's
reference in a Chinese frame), and prints, per data file:

- `contains` / `exact` / `f1` (threshold 0.5) on the right and the wrong answers, with `f1` over CJK
  characters (the shipped choice, as CMRC 2018) and over segmenter words (as LongBench) side by side;
- evidence recall of the whole source and of the oracle memory at r = 0.2;
- evidence recall of `goal-lines` and `bm25` under `own` and `none` at r = 0.2, indexing Chinese by
  character bigrams (shipped), by segmenter words, and not at all (the English-only tokenisers before);
- with `--embed`, the same for `embed` (all-MiniLM-L6-v2, an English model).

The segmenter is `rjieba` (jieba-rs, MIT), imported from `--segmenter-path` when it is not installed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from fractions import Fraction
from pathlib import Path
from unittest import mock

from gacc_hf.budget import fit_to_budget, token_budget
from gacc_hf.data.jsonl import read_rows
from gacc_hf.data.schema import Group, validate
from gacc_hf.methods import bm25, rules
from gacc_hf.protocol import CompressorInput
from gacc_hf.scoring.evidence import evidence_flags, oracle_memory
from gacc_hf.text.matching import contains, exact, is_cjk, normalize_answer, tokens
from gacc_hf.text.sentences import split_sentences
from gacc_hf.tokenizer import get_codec

ROOT = Path(__file__).resolve().parents[1]
RATIO = Fraction(1, 5)


def f1_over(units: Callable[[str], list[str]], answer: str, reference: str) -> float:
    from collections import Counter

    pred, gold = units(answer), units(reference)
    overlap = sum((Counter(pred) & Counter(gold)).values())
    if not pred or not gold or not overlap:
        return float(pred == gold)
    p, r = overlap / len(pred), overlap / len(gold)
    return 2 * p * r / (p + r)


def answers(groups: Iterable[Group]) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """(sentence answer, "reference。" answer, wrong answer, references) per question."""
    out = []
    for g in groups:
        sentences = split_sentences(g.context)
        for q in g.questions:
            sentence = next((s for s in sentences if contains(s, q.references)), "")
            other = next((o.references[0] for o in g.questions if not contains(o.references[0], q.references)), "未知")
            out.append((sentence, q.references[0] + "。", f"答案是{other}。", q.references))
    return out


def recall(memories: Iterable[tuple[str, Group]]) -> float:
    flags = [f for memory, g in memories for f in evidence_flags(memory, g.questions)]
    return sum(flags) / len(flags)


def compressed(compressor: Callable[[CompressorInput], str], groups: list[Group], goal: bool) -> float:
    codec = get_codec()
    out = []
    for g in groups:
        budget = token_budget(len(codec.encode(g.context)), RATIO)
        memory = compressor(CompressorInput(g.context, g.goal if goal else "", budget))
        out.append((fit_to_budget(memory, budget, codec).text, g))
    return recall(out)


def report(path: Path, segment: Callable[[str], list[str]] | None, embed: bool) -> None:
    schema = ("context_id", "source", "context", "goal_id", "goal", "questions", "gold")
    groups = validate([{k: row[k] for k in schema} for row in read_rows(path)])  # extra columns (language) aside
    codec = get_codec()
    n_q = sum(len(g.questions) for g in groups)
    print(f"\n## {path.name}: {len(groups)} goals, {len({g.context for g in groups})} texts, {n_q} questions")
    rows = answers(groups)

    def rate(judge: Callable[[str, tuple[str, ...]], bool], column: int) -> str:
        return f"{sum(judge(r[column], r[3]) for r in rows) / len(rows):.2f}"

    def f1_judge(units: Callable[[str], list[str]]) -> Callable[[str, tuple[str, ...]], bool]:
        return lambda answer, refs: max(f1_over(units, answer, ref) for ref in refs) >= 0.5

    judges: dict[str, Callable[[str, tuple[str, ...]], bool]] = {
        "contains": contains,
        "exact": exact,
        "f1 characters": f1_judge(tokens),
    }
    if segment:
        judges["f1 segmenter words"] = f1_judge(lambda text: [w for w in segment(normalize_answer(text)) if w.strip()])
    print("| judge | right: source sentence | right: reference + 。 | wrong: other reference |")
    print("|---|---|---|---|")
    for name, judge in judges.items():
        print(f"| {name} | {rate(judge, 0)} | {rate(judge, 1)} | {rate(judge, 2)} |")

    oracle = [
        (oracle_memory(g.context, g.questions, token_budget(len(codec.encode(g.context)), RATIO)).text, g)
        for g in groups
    ]
    print(
        f"\nevidence recall: full {recall((g.context, g) for g in groups):.3f}, oracle@0.2 {recall(oracle):.3f}, "
        f"empty oracle memories {sum(not m for m, _ in oracle)} of {len(oracle)}"
    )

    indexings: dict[str, Callable[[str], list[str]]] = {"bigrams (shipped)": rules.cjk_terms, "none": lambda text: []}
    if segment:
        indexings["segmenter words"] = lambda text: [w for w in segment(text) if len(w) > 1 and is_cjk(w[0])]
    print("\n| compressor | Chinese indexing | evidence own | evidence none | own − none |")
    print("|---|---|---|---|---|")
    for label, terms in indexings.items():
        with mock.patch.object(rules, "cjk_terms", terms), mock.patch.object(bm25, "cjk_terms", terms):
            for name, compressor in (("goal-lines", rules.GoalLinesCompressor()), ("bm25", bm25.BM25Compressor())):
                own, none = compressed(compressor, groups, True), compressed(compressor, groups, False)
                print(f"| {name} | {label} | {own:.3f} | {none:.3f} | {own - none:+.3f} |")
    if embed:
        from gacc_hf.methods.embed import EmbedCompressor

        compressor = EmbedCompressor()
        own, none = compressed(compressor, groups, True), compressed(compressor, groups, False)
        print(f"| embed | all-MiniLM-L6-v2 | {own:.3f} | {none:.3f} | {own - none:+.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="*", type=Path, default=[ROOT / "tests" / "fixtures" / "zh_fixture.jsonl"])
    parser.add_argument("--segmenter-path", help="a folder holding rjieba (pip install --target DIR rjieba)")
    parser.add_argument("--embed", action="store_true", help="also measure embed (loads all-MiniLM-L6-v2)")
    args = parser.parse_args()
    if args.segmenter_path:
        sys.path.append(args.segmenter_path)
    try:
        import rjieba

        segment: Callable[[str], list[str]] | None = rjieba.cut
    except ImportError:
        segment = None
        print("rjieba not importable: segmenter columns left out")
    for path in args.data:
        report(path, segment, args.embed)


if __name__ == "__main__":
    main()
