"""Which outcomes moved between two sides of a paired comparison: a count per (outcome in A, outcome in B).

A compressor that beats another by keeping more evidence shows as `lost → right`; one whose reader
misreads what it kept as `right → missed`. A row without an outcome (failed, or a results folder of an
older version) counts as `none`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from gacc_hf.scoring.compare import align
from gacc_hf.scoring.outcomes import OUTCOMES

NONE = "none"


def transitions(
    rows_a: Sequence[Mapping[str, Any]], rows_b: Sequence[Mapping[str, Any]], labels: tuple[str, str] = ("A", "B")
) -> dict[tuple[str, float], Counter[tuple[str, str]]]:
    """Per (condition, ratio): how many questions went from each outcome in A to each outcome in B.

    >>> a = [{"condition": "own", "ratio": 0.2, "question_id": "q", "goal_id": "g", "outcome": "lost"}]
    >>> transitions(a, [{**a[0], "outcome": "right"}])[("own", 0.2)]
    Counter({('lost', 'right'): 1})
    """
    out: dict[tuple[str, float], Counter[tuple[str, str]]] = {}
    for ra, rb in align(rows_a, rows_b, labels):
        cell = out.setdefault((str(ra["condition"]), float(ra["ratio"])), Counter())
        cell[(ra.get("outcome") or NONE, rb.get("outcome") or NONE)] += 1
    return out


def format_transitions(table: Mapping[tuple[str, float], Counter[tuple[str, str]]]) -> str:
    """Each cell's transition counts as a fixed-width grid: rows are A's outcome, columns B's."""
    blocks = []
    for (cond, ratio), counts in table.items():
        names = [*OUTCOMES, *([NONE] if any(NONE in pair for pair in counts) else [])]
        head = "A \\ B".ljust(8) + "".join(f"{n:>8}" for n in names)
        lines = [f"outcomes A → B, {cond} r={ratio:g} (questions):", head]
        lines += [f"{a:<8}" + "".join(f"{counts.get((a, b), 0):>8}" for b in names) for a in names]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
