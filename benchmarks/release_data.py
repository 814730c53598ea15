"""Generated data shaped like the GACC-Bench release: its counts, both languages, long-context lengths.

The release has 281 contexts, 500 goals and 2,571 questions in English and Chinese. `release_rows(F)`
keeps that shape at any fraction F (each count rounded, at least one context): 20% of the contexts are
Chinese; every context has 1-3 goals and every goal 3-8 questions, the extra goals and questions above
the minimum spread at random over the contexts and goals with room left (so the totals are exact); source
lengths are drawn log-uniform from 2,000 to 32,000 cl100k tokens, the range LongBench and ∞Bench-like
benchmarks use. The rows are `gacc_hf.data.synthetic` record documents padded to those lengths.
"""

from __future__ import annotations

import math
import random
import statistics
from typing import Any

from gacc_hf.data.synthetic import synthetic_rows
from gacc_hf.tokenizer import get_codec

RELEASE = {"contexts": 281, "goals": 500, "questions": 2571}
CHINESE_SHARE = 0.2
GOALS_PER_CONTEXT = (1, 3)
QUESTIONS_PER_GOAL = (3, 8)
TOKENS = (2_000, 32_000)


def spread(items: int, total: int, bounds: tuple[int, int], rng: random.Random) -> list[int]:
    """`items` counts within `bounds` that sum to `total`: each starts at the minimum, the rest is dealt one
    at a time to an item drawn at random among those below the maximum.

    >>> counts = spread(4, 10, (1, 3), random.Random(0))
    >>> sum(counts), min(counts) >= 1, max(counts) <= 3
    (10, True, True)
    """
    lo, hi = bounds
    if not lo * items <= total <= hi * items:
        raise ValueError(f"{total} cannot be spread over {items} items of {lo}-{hi}")
    counts = [lo] * items
    open_ = list(range(items))
    for _ in range(total - lo * items):
        k = rng.randrange(len(open_))
        counts[open_[k]] += 1
        if counts[open_[k]] == hi:
            open_[k] = open_[-1]
            open_.pop()
    return counts


def shape(fraction: float) -> dict[str, int]:
    """The release's counts at `fraction`, kept feasible (goals within 1-3 per context, questions 3-8 a goal)."""
    contexts = max(1, round(RELEASE["contexts"] * fraction))
    goals = min(max(contexts, round(RELEASE["goals"] * fraction)), 3 * contexts)
    questions = min(max(3 * goals, round(RELEASE["questions"] * fraction)), 8 * goals)
    return {"contexts": contexts, "goals": goals, "questions": questions, "chinese": round(contexts * CHINESE_SHARE)}


def release_rows(fraction: float = 1.0, seed: int = 0) -> list[dict[str, Any]]:
    """Rows in the judge schema with the release's shape at `fraction` (see the module docstring)."""
    n = shape(fraction)
    rng = random.Random(seed)
    goals = spread(n["contexts"], n["goals"], GOALS_PER_CONTEXT, rng)
    questions = spread(n["goals"], n["questions"], QUESTIONS_PER_GOAL, rng)
    lo, hi = map(math.log, TOKENS)
    tokens = [round(math.exp(rng.uniform(lo, hi))) for _ in range(n["contexts"])]
    return synthetic_rows(seed, n["contexts"], goals, questions, chinese=n["chinese"], tokens=tokens)


def describe(rows: list[dict[str, Any]]) -> str:
    """Counts and the measured source lengths (min / median / max cl100k tokens), in all and per language."""
    codec = get_codec()
    contexts = {r["context_id"]: r for r in rows}
    lengths: dict[str, list[int]] = {}
    for row in contexts.values():
        language = "zh" if row["source"].endswith("-zh") else "en"
        lengths.setdefault(language, []).append(len(codec.encode(row["context"])))
    lines = [
        f"data: {len(contexts)} contexts, {len(rows)} goals, {sum(len(r['questions']) for r in rows)} questions; "
        f"goals per context {min(_per_context(rows))}-{max(_per_context(rows))}, questions per goal "
        f"{min(len(r['questions']) for r in rows)}-{max(len(r['questions']) for r in rows)}"
    ]
    for language, values in [("all", [v for vs in lengths.values() for v in vs]), *sorted(lengths.items())]:
        lines.append(
            f"  source tokens ({language}, {len(values)} contexts): min {min(values):,} / median "
            f"{statistics.median(values):,.0f} / max {max(values):,}; total {sum(values):,}"
        )
    return "\n".join(lines)


def _per_context(rows: list[dict[str, Any]]) -> list[int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["context_id"]] = counts.get(row["context_id"], 0) + 1
    return list(counts.values())
