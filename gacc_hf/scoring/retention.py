"""Retention: how much of what a memory can give a cell keeps, between the closed-book floor and full context.

retention = (cell − closed) / (full − closed), on Micro, over the same questions. `closed` is the reader
answering from an empty memory, `full` the reader given the whole source, so 0 is "no better than no memory"
and 1 "as good as the whole source". The interval is a paired goal bootstrap: one draw of goals serves the
cell, the floor and the ceiling, and each draw's retention is the ratio of its two paired differences. The
figure is undefined (None, with the reason) when the run has no `closed` or no `full` cell, or when full is
not above closed; its interval is undefined when some draw has full not above closed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import Any

import numpy as np

from gacc_hf.protocol import is_ceiling
from gacc_hf.scoring.groups import cells_of
from gacc_hf.scoring.scores import percentile_interval, resampled_cells, resampled_ratios
from gacc_hf.scoring.shares import per_goal

FLOOR, CEILING = "closed", "full"
_CELL, _CONDITION = itemgetter("compressor", "condition", "ratio"), itemgetter("condition")
_QUESTION, _GOAL, _CORRECT = itemgetter("question_id"), itemgetter("goal_id"), itemgetter("correct")
_FIRST, _SECOND = itemgetter(0), itemgetter(1)


def _undefined(reason: str | None) -> dict[str, Any]:
    keys = ("retention", "retention_ci_low", "retention_ci_high", "closed_micro", "full_micro")
    return {**dict.fromkeys(keys), "undefined": reason}


Verdicts = tuple[list[str], list[str], list[bool]]  # question ids, their goal ids and verdicts, a question once


def _verdicts(rows: Sequence[Mapping[str, Any]]) -> Verdicts:
    """Each question's goal and verdict, read in C; a question answered twice counts its last answer, in the
    place of its first (as a dict by question id keeps them)."""
    questions = list(map(str, map(_QUESTION, rows)))
    goals, correct = list(map(str, map(_GOAL, rows))), list(map(bool, map(_CORRECT, rows)))
    if len(set(questions)) < len(questions):
        kept = dict(zip(questions, zip(goals, correct, strict=True), strict=True))
        return list(kept), list(map(_FIRST, kept.values())), list(map(_SECOND, kept.values()))
    return questions, goals, correct


def _by_question(verdicts: Verdicts) -> dict[str, bool]:
    questions, _, correct = verdicts
    return dict(zip(questions, correct, strict=True))


def missing_bound(answers: Sequence[Mapping[str, Any]]) -> str | None:
    """Why retention is undefined for the whole run (no closed or no full condition), or None.

    >>> missing_bound([{"condition": "own"}, {"condition": "full"}])
    'the run has no closed condition to normalise by'
    """
    present = set(map(str, set(map(_CONDITION, answers))))  # read in C
    absent = [c for c in (FLOOR, CEILING) if c not in present]
    return f"the run has no {' and no '.join(absent)} condition to normalise by" if absent else None


def retention(
    cell: Sequence[Mapping[str, Any]],
    closed: Sequence[Mapping[str, Any]],
    full: Sequence[Mapping[str, Any]],
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    """The retention of one cell's answers, given the closed and full answers of the same questions.

    >>> rows = lambda *c: [{"question_id": q, "goal_id": q, "correct": v} for q, v in zip("abcd", c)]
    >>> retention(rows(1, 1, 0, 0), rows(1, 0, 0, 0), rows(1, 1, 1, 0), 0, 0)["retention"]
    0.5
    """
    closed_by, full_by = _by_question(_verdicts(closed)), _by_question(_verdicts(full))
    return _retention(_verdicts(cell), closed_by, full_by, n_boot, seed)


def _retention(a: Verdicts, c: dict[str, bool], f: dict[str, bool], n_boot: int, seed: int) -> dict[str, Any]:
    """`retention` of the verdicts by question id of a cell (`a`), the floor (`c`) and the ceiling (`f`)."""
    out, pairs = _point(a, c, f)
    if pairs and n_boot > 0:
        _bound(out, resampled_ratios(pairs, n_boot, seed))
    return out


Pair = tuple[np.ndarray, np.ndarray]


def _point(a: Verdicts, c: dict[str, bool], f: dict[str, bool]) -> tuple[dict[str, Any], list[Pair]]:
    """`_retention` without its interval, and the per-goal (gain, 1) and (room, 1) pairs that resampling
    takes (none where retention is undefined)."""
    questions, goals, correct = a
    if not all(map(f.__contains__, questions)) or not all(map(c.__contains__, questions)):
        return _undefined("closed or full did not answer the same questions"), []
    verdicts = [correct, list(map(c.__getitem__, questions)), list(map(f.__getitem__, questions))]
    _, (cell_c, closed_c, full_c) = per_goal(goals, verdicts)
    gain, room = cell_c - closed_c, full_c - closed_c
    out = _undefined(None if room.sum() > 0 else "full is not above closed")
    n = len(questions)
    out.update({"closed_micro": float(closed_c.sum() / n), "full_micro": float(full_c.sum() / n)})
    if out["undefined"]:
        return out, []
    out["retention"] = float(gain.sum() / room.sum())
    ones = np.ones(len(gain))
    return out, [(gain, ones), (room, ones)]


def _bound(out: dict[str, Any], draws: Sequence[np.ndarray]) -> None:
    """Set the interval of a retention from its resampled gains and rooms (left None when some draw has full
    not above closed)."""
    gains, rooms = draws
    if (rooms > 0).all():
        out["retention_ci_low"], out["retention_ci_high"] = percentile_interval(gains / rooms, 0.95)


def _part(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """Where `retention_rows` puts a row: its method cell, its bound (closed or full), or neither."""
    if not is_ceiling(row):
        return ("cell", str(row["compressor"]), str(row["condition"]), float(row["ratio"]))
    if row["condition"] in (FLOOR, CEILING):
        return ("bound", str(row["condition"]))
    return ("neither", *_CELL(row))


def retention_rows(answers: Sequence[Mapping[str, Any]], n_boot: int, seed: int) -> list[dict[str, Any]]:
    """The retention of every method cell (compressor, condition, ratio), in first-seen order."""
    cells: dict[tuple[str, str, float], list[Mapping[str, Any]]] = {}
    bounds: dict[str, list[Mapping[str, Any]]] = {FLOOR: [], CEILING: []}
    for (part, *key), rows in cells_of(answers).by(_part).items():
        if part == "cell":
            cells[tuple(key)] = rows  # type: ignore[index]
        elif part == "bound":
            bounds[key[0]] = rows
    reason = missing_bound(cells_of(answers).firsts())  # the conditions present, read from one row a cell
    closed, full = _by_question(_verdicts(bounds[FLOOR])), _by_question(_verdicts(bounds[CEILING]))  # once
    points = [_point(_verdicts(rows), closed, full) for rows in cells.values()] if not reason else []
    if points and n_boot > 0:
        for (values, _), draws in zip(points, resampled_cells([p for _, p in points], n_boot, seed), strict=True):
            if draws:
                _bound(values, draws)
    out = []
    for k, (comp, cond, ratio) in enumerate(cells):
        head = {"compressor": comp, "condition": cond, "ratio": ratio}
        out.append({**head, **(_undefined(reason) if reason else points[k][0])})
    return out
