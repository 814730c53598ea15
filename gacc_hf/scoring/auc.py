"""Score against budget: the area under a compressor's curve of Micro (and evidence recall) over the ratios run.

AUC = the trapezoid area of the score against r over the ratios run, divided by the r range, so it is on the
score's own 0–1 scale (a flat curve at 0.3 has AUC 0.3). It is linear in the scores, and every ratio of a
(compressor, condition) answers the same questions, so each goal's contribution is one weighted sum of its
correct counts: the goal bootstrap resamples that sum, one draw of goals for every ratio. A paired AUC
difference (`paired_auc`) resamples the same goals for both sides. One ratio has no curve: no AUC row.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from operator import itemgetter, methodcaller
from typing import Any

import numpy as np

from gacc_hf.protocol import is_ceiling
from gacc_hf.scoring.by_language import rows_per_language
from gacc_hf.scoring.compare import align
from gacc_hf.scoring.groups import cells_of, every_row_has
from gacc_hf.scoring.scores import percentile_interval, resampled_ratios
from gacc_hf.scoring.shares import Cell, cell_of, per_goal

Curve = dict[float, dict[str, Mapping[str, Any]]]  # ratio -> question id -> answer row
_QUESTION, _GOAL = itemgetter("question_id"), itemgetter("goal_id")
_HAS_EVIDENCE = methodcaller("__contains__", "evidence")


def trapezoid_weights(ratios: Sequence[float]) -> list[float]:
    """Each (sorted, distinct) ratio's weight in the trapezoid area divided by the r range.

    >>> [round(w, 12) for w in trapezoid_weights([0.1, 0.2, 0.4])]  # (0.05, 0.15, 0.1) / 0.3
    [0.166666666667, 0.5, 0.333333333333]
    """
    if len(ratios) < 2:
        raise ValueError(f"an area needs two ratios or more, got {len(ratios)}")
    span = ratios[-1] - ratios[0]
    gaps = [0.0, *(b - a for a, b in itertools.pairwise(ratios)), 0.0]  # each ratio's left and right interval
    return [(gaps[i] + gaps[i + 1]) / (2 * span) for i in range(len(ratios))]


def _curves(answers: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], Curve]:
    """The method rows of each (compressor, condition), by ratio and question id."""
    out: dict[tuple[str, str], Curve] = {}
    for cell, rows in cells_of(answers).by(_method_cell).items():
        if cell is not None:
            questions = map(str, map(_QUESTION, rows))
            out.setdefault(cell[:2], {})[cell[2]] = dict(zip(questions, rows, strict=True))
    return out


def _method_cell(row: Mapping[str, Any]) -> Cell | None:
    return None if is_ceiling(row) else cell_of(row)


def _weighted(curve: Curve, field: str) -> tuple[list[str], np.ndarray]:
    """Goal ids of the first ratio's questions and each question's weighted sum of `field` over the ratios."""
    ratios = sorted(curve)
    first = curve[ratios[0]]
    if any(curve[r].keys() != first.keys() for r in ratios):
        raise ValueError("the ratios of a curve answered different questions")
    weights = trapezoid_weights(ratios)
    read, order = itemgetter(field), list(first)

    def verdicts(rows: dict[str, Mapping[str, Any]]) -> np.ndarray:  # in the first ratio's question order
        in_order = rows.values() if list(rows) == order else map(rows.__getitem__, order)
        return np.fromiter(map(bool, map(read, in_order)), float, len(order))

    values = sum(w * verdicts(curve[r]) for w, r in zip(weights, ratios, strict=True))
    return list(map(str, map(_GOAL, first.values()))), np.asarray(values)


def _area(goals: list[str], values: np.ndarray, n_boot: int, seed: int) -> tuple[float, Any, Any]:
    n, (sums,) = per_goal(goals, [values])
    if n_boot <= 0:
        return float(sums.sum() / n.sum()), None, None
    (draws,) = resampled_ratios([(sums, n.astype(float))], n_boot, seed)
    return (float(sums.sum() / n.sum()), *percentile_interval(draws, 0.95))


def auc_rows(answers: Sequence[Mapping[str, Any]], n_boot: int, seed: int) -> list[dict[str, Any]]:
    """Micro AUC (and evidence AUC where rows carry evidence) per (compressor, condition) run at 2+ ratios."""
    out = []
    everywhere = every_row_has(answers, "evidence")
    for (comp, cond), curve in _curves(answers).items():
        if len(curve) < 2:
            continue
        row: dict[str, Any] = {"compressor": comp, "condition": cond, "ratios": sorted(curve)}
        evidence = everywhere or all(all(map(_HAS_EVIDENCE, rows.values())) for rows in curve.values())
        for field, name in (("correct", "micro_auc"), ("evidence", "evidence_auc"))[: 1 + evidence]:
            value, low, high = _area(*_weighted(curve, field), n_boot, seed)
            row.update({name: value, f"{name}_ci_low": low, f"{name}_ci_high": high})
        out.append({**row, "n_questions": len(curve[min(curve)])})
    return out


def auc_by_language(answers: Sequence[Mapping[str, Any]], n_boot: int, seed: int) -> list[dict[str, Any]]:
    """`auc_rows` of each language's answers, `language` first, when the run has several languages."""
    return rows_per_language(auc_rows, answers, n_boot, seed)


def paired_auc(
    rows_a: Sequence[Mapping[str, Any]],
    rows_b: Sequence[Mapping[str, Any]],
    n_boot: int,
    seed: int,
    labels: tuple[str, str] = ("A", "B"),
) -> list[dict[str, Any]]:
    """B − A in Micro AUC per condition both sides ran at 2+ shared ratios, with a paired goal-bootstrap CI."""
    align(rows_a, rows_b, labels)  # the same questions on both sides, or CompareError
    curves_a = {cond: c for (_, cond), c in _curves(rows_a).items()}
    curves_b = {cond: c for (_, cond), c in _curves(rows_b).items()}
    out = []
    for cond, curve_a in curves_a.items():
        if len(curve_a) < 2 or cond not in curves_b:
            continue
        goals, a = _weighted(curve_a, "correct")
        _, b = _weighted({r: {q: curves_b[cond][r][q] for q in qs} for r, qs in curve_a.items()}, "correct")
        diff, low, high = _area(goals, b - a, max(n_boot, 1), seed)
        out.append(
            {
                "condition": cond,
                "ratios": sorted(curve_a),
                "auc_a": float(a.mean()),
                "auc_b": float(b.mean()),
                "auc_diff": diff,
                "auc_diff_ci_low": low,
                "auc_diff_ci_high": high,
                "n_questions": len(a),
            }
        )
    return out


def format_auc(rows: Sequence[Mapping[str, Any]]) -> str:
    """The paired AUC table as fixed-width text, B − A in percentage points with its 95% CI."""
    head = f"{'condition':<9} {'ratios':<18} {'n_q':>6} {'AUC A':>7} {'AUC B':>7} {'ΔAUC pp [95% CI]':>24}"
    lines = ["Micro AUC over the ratios (trapezoids on r, divided by the r range)", head, "-" * len(head)]
    for r in rows:
        ratios = ",".join(f"{x:g}" for x in r["ratios"])
        diff = f"{100 * r['auc_diff']:+.1f} [{100 * r['auc_diff_ci_low']:+.1f},{100 * r['auc_diff_ci_high']:+.1f}]"
        lines.append(
            f"{r['condition']:<9} {ratios:<18} {r['n_questions']:>6} {r['auc_a']:>7.3f} {r['auc_b']:>7.3f} {diff:>24}"
        )
    return "\n".join(lines)
