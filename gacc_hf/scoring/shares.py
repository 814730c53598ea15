"""The share of each outcome (right, guessed, missed, lost) per cell, with goal-bootstrap CIs: a reading aid.

A cell's four shares are counted over all its questions, so they sum to 1 unless some rows failed (a row
without a verdict has no outcome, as it has no score). Every share of a cell is resampled on the same draw
of goals, as Micro and Macro are (`gacc_hf.scoring.scores`), because the questions of one goal share a memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd

from gacc_hf.protocol import is_ceiling
from gacc_hf.scoring.by_language import rows_per_language
from gacc_hf.scoring.groups import cells_of, every_row_has
from gacc_hf.scoring.outcomes import OUTCOMES
from gacc_hf.scoring.scores import percentile_intervals, resampled_cells

Cell = tuple[str, str, float]
_GOAL, _OUTCOME = itemgetter("goal_id"), itemgetter("outcome")


def per_goal(goal_ids: Sequence[str], columns: Sequence[Sequence[float]]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Questions per goal and each column summed per goal, goals in first-seen order.

    >>> n, (a,) = per_goal(["g", "h", "g"], [[1, 0, 1]])
    >>> n.tolist(), a.tolist()
    ([2, 1], [2.0, 0.0])
    """
    codes, uniq = pd.factorize(np.asarray(goal_ids, dtype=object), sort=False)
    n = np.bincount(codes, minlength=len(uniq))
    sums = [np.bincount(codes, weights=np.asarray(c, dtype=float), minlength=len(uniq)) for c in columns]
    return n, sums


def _cells(answers: Sequence[Mapping[str, Any]]) -> dict[Cell, list[Mapping[str, Any]]]:
    return cells_of(answers).by(cell_of)


def cell_of(row: Mapping[str, Any]) -> Cell:
    """A row's (compressor, condition, ratio) as figures name them."""
    return str(row["compressor"]), str(row["condition"]), float(row["ratio"])


def outcome_shares(answers: Sequence[Mapping[str, Any]], n_boot: int, seed: int) -> list[dict[str, Any]]:
    """One row per (compressor, condition, ratio), in first-seen order: each outcome's share and its 95% CI
    (None without resampling); empty when the rows carry no outcome (results of older versions)."""
    if not answers or not every_row_has(answers, "outcome"):
        return []
    cells = _cells(answers)
    tallies = []  # each cell's questions per goal and each outcome's count per goal
    for rows in cells.values():
        outcomes = np.array(list(map(_OUTCOME, rows)), dtype=object)
        flags = [outcomes == name for name in OUTCOMES]  # what `row["outcome"] == name` gives, row by row
        tallies.append(per_goal(list(map(str, map(_GOAL, rows))), flags))
    pairs = [[(c, n.astype(float)) for c in counts] for n, counts in tallies]
    draws = [d for drawn in resampled_cells(pairs, n_boot, seed) for d in drawn] if n_boot > 0 else []
    bounds = iter(percentile_intervals(draws, 0.95))
    out = []
    for ((comp, cond, ratio), rows), (n, counts) in zip(cells.items(), tallies, strict=True):
        row: dict[str, Any] = {"compressor": comp, "condition": cond, "ratio": ratio}
        row["ceiling"] = is_ceiling(rows[0])
        for k, name in enumerate(OUTCOMES):
            low, high = next(bounds) if n_boot > 0 else (None, None)
            row.update({name: float(counts[k].sum() / n.sum()), f"{name}_ci_low": low, f"{name}_ci_high": high})
        out.append({**row, "n_questions": len(rows)})
    return out


def outcome_shares_by_language(answers: Sequence[Mapping[str, Any]], n_boot: int, seed: int) -> list[dict[str, Any]]:
    """`outcome_shares` of each language's rows, `language` first, when the run has several languages."""
    return rows_per_language(outcome_shares, answers, n_boot, seed)
