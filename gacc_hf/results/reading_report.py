"""The reading aids of `report.md`: outcome shares, retention and the area under each curve, as markdown.

Rendered from the `results.json` fields `gacc_hf.scoring.reading` derives; each table is empty text when the
run has nothing for it, and `curve_note` says once why a run at one ratio has no curve.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gacc_hf.scoring.outcomes import OUTCOMES


def md_table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


def with_ci(row: Mapping[str, Any], name: str) -> str:
    """`0.123 [0.100, 0.150]`, or the value alone when the row has no interval."""
    low, high = row.get(f"{name}_ci_low"), row.get(f"{name}_ci_high")
    return f"{row[name]:.3f}" + ("" if low is None else f" [{low:.3f}, {high:.3f}]")


def outcome_table(rows: Sequence[Mapping[str, Any]], language: bool = False) -> str:
    """Each cell's four outcome shares with their 95% CIs; ceilings and the floor marked as bounds."""
    head = [*(["language"] if language else []), "compressor", "condition", "ratio", *OUTCOMES, "questions"]
    body = [
        [
            *([r["language"]] if language else []),
            f"`{r['compressor']}`" + (" (bound)" if r.get("ceiling") else ""),
            r["condition"],
            f"{r['ratio']:g}",
            *(with_ci(r, name) for name in OUTCOMES),
            r["n_questions"],
        ]
        for r in rows
    ]
    return md_table(head, body) if rows else ""


def retention_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Each method cell's retention of Micro with its paired 95% CI, or why it is undefined."""
    body = [
        [
            f"`{r['compressor']}`",
            r["condition"],
            f"{r['ratio']:g}",
            f"undefined: {r['undefined']}" if r["retention"] is None else with_ci(r, "retention"),
        ]
        for r in rows
    ]
    return md_table(["compressor", "condition", "ratio", "retention [95% CI]"], body) if rows else ""


def retention_note(rows: Sequence[Mapping[str, Any]], conditions: Sequence[str]) -> str:
    """One line when no cell has a retention: the run has no method cell, or no bound to normalise by."""
    if rows:
        return ""
    absent = [c for c in ("closed", "full") if c not in conditions]
    why = f"the run has no {' and no '.join(absent)} condition" if absent else "the run has no method cell"
    return f"Retention is undefined: {why}."


def auc_table(rows: Sequence[Mapping[str, Any]], language: bool = False) -> str:
    """Micro and evidence AUC per (compressor, condition) with their 95% CIs."""
    evidence = any(r.get("evidence_auc") is not None for r in rows)
    head = [*(["language"] if language else []), "compressor", "condition", "ratios", "Micro AUC [95% CI]"]
    body = [
        [
            *([r["language"]] if language else []),
            f"`{r['compressor']}`",
            r["condition"],
            ", ".join(f"{x:g}" for x in r["ratios"]),
            with_ci(r, "micro_auc"),
            *([with_ci(r, "evidence_auc") if r.get("evidence_auc") is not None else "n/a"] if evidence else []),
        ]
        for r in rows
    ]
    return md_table([*head, *(["Evidence AUC [95% CI]"] if evidence else [])], body) if rows else ""


def curve_note(ratios: Sequence[float]) -> str:
    """Said once for a run at a single ratio: there is no curve, so no area under it."""
    if len(ratios) != 1:
        return ""
    return f"One ratio only (r = {ratios[0]:g}): no curve of score against budget and no area under it."
