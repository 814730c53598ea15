"""Micro, all-correct Macro, goal-level bootstrap CIs and paired comparisons (pure functions).

Micro is accuracy over questions. Macro is the share of goals whose *every* question is correct
(docs/protocol.md §7), not the mean per-goal accuracy. Questions of one goal share a memory, so they are not
independent: confidence intervals resample whole goals (a cluster bootstrap), seeded for
reproducibility. Both the runner and the `evaluate` metric score through this module.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from itertools import groupby, repeat
from operator import is_not, itemgetter, methodcaller
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import ThreadpoolController

from gacc_hf.scoring.groups import cells_of, every_row_has

DEFAULT_BOOTSTRAP = 1000
_CHUNK_CELLS = 4_000_000  # resampled goal indices held in memory at once


@dataclass(frozen=True)
class GoalTable:
    """Per-goal question and correct counts, goals in first-seen order."""

    goal_ids: list[str]
    n_questions: np.ndarray
    n_correct: np.ndarray

    @property
    def all_correct(self) -> np.ndarray:
        return self.n_correct == self.n_questions


def goal_table(goal_ids: Sequence[str], correct: Sequence[bool]) -> GoalTable:
    """Group question verdicts by goal."""
    return goal_tables(goal_ids, [correct])[0]


def goal_tables(goal_ids: Sequence[str], columns: Sequence[Sequence[bool]]) -> list[GoalTable]:
    """`goal_table` of each column of verdicts over the same questions, their goals grouped once."""
    for correct in columns:
        if len(goal_ids) != len(correct):
            raise ValueError(f"goal_ids has {len(goal_ids)} entries but correct has {len(correct)}")
    if len(goal_ids) == 0:
        raise ValueError("cannot score zero questions")
    codes, uniq = pd.factorize(np.asarray(goal_ids, dtype=object), sort=False)
    ids, n_q = [str(g) for g in uniq], np.bincount(codes, minlength=len(uniq))
    out = []
    for correct in columns:
        verdicts = np.asarray(correct, dtype=bool)
        n_c = np.bincount(codes, weights=verdicts, minlength=len(uniq)).astype(np.int64)
        out.append(GoalTable(ids, n_q, n_c))
    return out


def micro(correct: Sequence[bool]) -> float:
    """Accuracy over questions.

    >>> micro([True, True, False, True])
    0.75
    """
    if len(correct) == 0:
        raise ValueError("cannot score zero questions")
    return float(np.mean(np.asarray(correct, dtype=bool)))


def macro(goal_ids: Sequence[str], correct: Sequence[bool]) -> float:
    """Share of goals with every question correct.

    >>> macro(["a", "a", "b", "b"], [True, True, True, False])
    0.5
    """
    return float(np.mean(goal_table(goal_ids, correct).all_correct))


def resampled_ratios(pairs: list[tuple[np.ndarray, np.ndarray]], n_boot: int, seed: int) -> list[np.ndarray]:
    """Goal bootstrap: for each draw of goals (shared by all pairs), sum(num[draw]) / sum(den[draw]).

    The sums are taken as (times each goal was drawn) @ values, one matrix product for every pair at once.
    Where the values are whole numbers (question and correct counts, their differences, 0/1 flags), that is the
    gathered sum exactly: every product and partial sum is a whole number far below 2**53, which float64 holds
    exactly in any order of addition, so a column that several pairs share (the cells' counts of questions, a
    column of ones) enters the product once. Other values (weighted sums) keep every column, and the product its
    shape.
    """
    n = len(pairs[0][0])
    given = [np.asarray(v, dtype=float) for pair in pairs for v in pair]
    unique, at = _distinct(given) if all(map(_whole, given)) else (given, list(range(len(given))))
    values = np.column_stack(unique)
    outs = []
    with _blas().limit(limits=1, user_api="blas"):  # see _blas
        for tally in _tallies(seed, n_boot, n):
            sums = tally @ values
            outs.append(sums[:, at[0::2]] / sums[:, at[1::2]])
    draws = np.concatenate(outs)
    return [draws[:, k] for k in range(len(pairs))]


def _whole(column: np.ndarray) -> bool:
    return bool((column == np.floor(column)).all())


def _distinct(columns: list[np.ndarray]) -> tuple[list[np.ndarray], list[int]]:
    """The distinct columns in first-seen order, and the index among them of each column given."""
    index: dict[bytes, int] = {}
    unique, at = [], []
    for column in columns:
        at.append(index.setdefault(column.tobytes(), len(unique)))
        if at[-1] == len(unique):
            unique.append(column)
    return unique, at


def resampled_cells(
    cells: Sequence[Sequence[tuple[np.ndarray, np.ndarray]]], n_boot: int, seed: int
) -> list[list[np.ndarray]]:
    """`resampled_ratios` of each cell's (numerator, denominator) pairs, the cells with as many goals in one
    product: the draws depend only on the seed, `n_boot` and the number of goals, so each cell's draws are
    those resampling it alone gives, and the product reads the draws once for all cells instead of once a
    cell (twice as fast on a run of 90 cells). Whole-number values only, as `resampled_ratios` says."""
    out: list[list[np.ndarray]] = [[] for _ in cells]
    by_goals: dict[int, list[int]] = defaultdict(list)
    for i, pairs in enumerate(cells):
        if pairs:
            by_goals[len(pairs[0][0])].append(i)
    for members in by_goals.values():
        draws = iter(resampled_ratios([pair for i in members for pair in cells[i]], n_boot, seed))
        for i in members:
            out[i] = [next(draws) for _ in cells[i]]
    return out


@functools.lru_cache(maxsize=1)
def _blas() -> ThreadpoolController:
    """numpy's BLAS, held to one thread for the bootstrap's products: they are small (resamples x goals by a few
    columns), and threads that wait for each other on a busy machine made them 10 to 20 times slower (measured on
    2 cores: 19.5 ms a product on two threads, 1.2 ms on one)."""
    return ThreadpoolController()


def _tallies(seed: int, n_boot: int, n: int) -> Iterator[np.ndarray]:
    """Times each of `n` goals was drawn, one row per resample, in chunks of at most `_CHUNK_CELLS` cells."""
    chunk = max(1, _CHUNK_CELLS // max(n, 1))
    if n_boot <= chunk:
        yield _tally(seed, n_boot, n)
        return
    rng = np.random.default_rng(seed)
    for done in range(0, n_boot, chunk):
        yield _drawn(rng, min(chunk, n_boot - done), n)


@functools.lru_cache(maxsize=4)
def _tally(seed: int, n_boot: int, n: int) -> np.ndarray:
    """The draws of one chunk, kept: every cell of a run with as many goals, its gaps, retention and AUC are
    resampled on the same draws (they depend on seed, `n_boot` and `n` alone), and so are the runs on one data set."""
    tally = _drawn(np.random.default_rng(seed), n_boot, n)
    tally.setflags(write=False)
    return tally


def _drawn(rng: np.random.Generator, size: int, n: int) -> np.ndarray:
    idx = rng.integers(0, n, size=(size, n))
    idx += np.arange(0, size * n, n)[:, None]  # row i's draws count into row i of the tally
    return np.bincount(idx.ravel(), minlength=size * n).reshape(size, n).astype(float)


def percentile_interval(draws: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile interval of bootstrap draws holding `confidence` of them (0.95: the 2.5th to the 97.5th
    percentile), as every CI of the harness is taken."""
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(draws, [alpha, 1 - alpha])
    return float(lo), float(hi)


def percentile_intervals(draws: Sequence[np.ndarray], confidence: float) -> list[tuple[float, float]]:
    """`percentile_interval` of each column of draws, in one quantile call (each column's interval is the one it gives
    alone: the quantiles of a column are taken along it)."""
    if not draws:
        return []
    alpha = (1 - confidence) / 2
    lows, highs = np.quantile(np.stack(draws, axis=1), [alpha, 1 - alpha], axis=0)
    return list(zip(map(float, lows), map(float, highs), strict=True))


@dataclass(frozen=True)
class Score:
    """Micro and Macro with goal-bootstrap percentile intervals."""

    micro: float
    macro: float
    n_questions: int
    n_goals: int
    micro_ci: tuple[float, float] | None = None
    macro_ci: tuple[float, float] | None = None

    def as_dict(self) -> dict[str, object]:
        row = asdict(self)
        for key in ("micro_ci", "macro_ci"):
            ci = row.pop(key)
            row[f"{key.split('_')[0]}_ci_low"] = None if ci is None else ci[0]
            row[f"{key.split('_')[0]}_ci_high"] = None if ci is None else ci[1]
        return row


def score(
    goal_ids: Sequence[str],
    correct: Sequence[bool],
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    confidence: float = 0.95,
) -> Score:
    """Micro, Macro and (when n_boot > 0) their goal-bootstrap CIs.

    >>> s = score(["a", "a", "b"], [True, False, True], n_boot=0)
    >>> round(s.micro, 4), s.macro, s.n_goals
    (0.6667, 0.5, 2)
    """
    return score_many([(goal_ids, correct)], n_boot, seed, confidence)[0]


def score_many(
    cells: Sequence[tuple[Sequence[str], Sequence[bool]]],
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[Score]:
    """`score` of each (goal_ids, correct) cell, resampled together.

    A cell's draws depend only on the seed, `n_boot` and its number of goals, so the cells with as many
    goals (every cell of a run, and a cell's evidence next to its correctness) are resampled in one pass
    over one set of draws: each interval is the one scoring the cell alone gives.
    """
    tables = [  # cells in a row over the same goal ids (a cell's correctness, then its evidence) grouped once
        table for _, same in groupby(cells, lambda cell: id(cell[0])) for table in goal_tables(*_columns(list(same)))
    ]
    intervals: dict[int, tuple[tuple[float, float], tuple[float, float]]] = {}
    if n_boot > 0:
        # one draw of goals serves Micro and Macro: Micro is correct / questions within the drawn goals
        pairs = [[(t.n_correct, t.n_questions), (t.all_correct, np.ones(len(t.goal_ids)))] for t in tables]
        bounds = iter(
            percentile_intervals([d for drawn in resampled_cells(pairs, n_boot, seed) for d in drawn], confidence)
        )
        for i in range(len(tables)):
            intervals[i] = (next(bounds), next(bounds))
    out = []
    for i, table in enumerate(tables):
        n_q = table.n_questions.astype(float)
        micro_ci, macro_ci = intervals.get(i, (None, None))
        m, M = float(table.n_correct.sum() / n_q.sum()), float(table.all_correct.mean())
        out.append(Score(m, M, int(n_q.sum()), len(table.goal_ids), micro_ci, macro_ci))
    return out


@dataclass(frozen=True)
class PairedDifference:
    """B minus A over the same goals and questions, with a paired goal-bootstrap CI."""

    micro_a: float
    micro_b: float
    macro_a: float
    macro_b: float
    micro_diff: float
    macro_diff: float
    micro_diff_ci: tuple[float, float]
    macro_diff_ci: tuple[float, float]
    n_questions: int
    n_goals: int


def _columns(cells: list[tuple[Sequence[str], Sequence[bool]]]) -> tuple[Sequence[str], list[Sequence[bool]]]:
    return cells[0][0], [correct for _, correct in cells]


def paired_difference(
    goal_ids: Sequence[str],
    correct_a: Sequence[bool],
    correct_b: Sequence[bool],
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    confidence: float = 0.95,
) -> PairedDifference:
    """Compare two systems on the same questions (aligned row by row).

    Resampling the same goals for both sides keeps the comparison paired, so the interval reflects
    disagreement between the systems rather than the difficulty spread of the goals.

    >>> d = paired_difference(["a", "a", "b"], [True, False, True], [True, True, True], n_boot=200)
    >>> round(d.micro_diff, 4), d.macro_diff
    (0.3333, 0.5)
    """
    return paired_differences([(goal_ids, correct_a, correct_b)], n_boot, seed, confidence)[0]


def paired_differences(
    cells: Sequence[tuple[Sequence[str], Sequence[bool], Sequence[bool]]],
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[PairedDifference]:
    """`paired_difference` of each (goal_ids, correct_a, correct_b) cell, the cells with as many goals
    resampled in one product (`resampled_cells`): each interval is the one comparing the cell alone gives."""
    tables = []
    for goal_ids, correct_a, correct_b in cells:
        if len(correct_a) != len(correct_b):
            raise ValueError(f"paired verdicts differ in length: {len(correct_a)} vs {len(correct_b)}")
        ta, tb = goal_tables(goal_ids, [correct_a, correct_b])
        tables.append((ta, tb))
    pairs = []
    for ta, tb in tables:
        n_q = ta.n_questions.astype(float)
        diff_c = (tb.n_correct - ta.n_correct).astype(float)
        diff_all = tb.all_correct.astype(float) - ta.all_correct.astype(float)
        pairs.append([(diff_c, n_q), (diff_all, np.ones_like(n_q))])
    bounds = iter(
        percentile_intervals([d for drawn in resampled_cells(pairs, max(n_boot, 1), seed) for d in drawn], confidence)
    )
    out = []
    for (ta, tb), [(_, n_q), _] in zip(tables, pairs, strict=True):
        micro_a, micro_b = float(ta.n_correct.sum() / n_q.sum()), float(tb.n_correct.sum() / n_q.sum())
        macro_a, macro_b = float(ta.all_correct.mean()), float(tb.all_correct.mean())
        out.append(
            PairedDifference(
                micro_a,
                micro_b,
                macro_a,
                macro_b,
                micro_b - micro_a,
                macro_b - macro_a,
                next(bounds),
                next(bounds),
                int(n_q.sum()),
                len(ta.goal_ids),
            )
        )
    return out


def score_answers(answers: list[dict[str, Any]], n_bootstrap: int, seed: int) -> list[dict[str, Any]]:
    """One score row per (compressor, condition, ratio), in plan order; errored questions count as wrong.

    Evidence recall is scored like correctness, by the same goal bootstrap: `evidence_micro` is the share
    of questions whose reference survived in the memory, `evidence_macro` the share of goals whose every
    question's evidence survived. It needs no reader, so it separates compression loss from reader loss.
    Rows without an `evidence` field (results of older versions) get no evidence columns.
    """
    cells = cells_of(answers).by(_CELL)
    # what is scored, per cell: correctness, then evidence where every row has it
    scored: list[tuple[list[str], list[bool]]] = []
    with_evidence = []
    everywhere = every_row_has(answers, "evidence")
    for rows in cells.values():
        goals = list(map(_GOAL, rows))
        scored.append((goals, list(map(_CORRECT, rows))))
        with_evidence.append(everywhere or all(map(_HAS_EVIDENCE, rows)))
        if with_evidence[-1]:
            scored.append((goals, list(map(bool, map(_EVIDENCE, rows)))))
    results = iter(score_many(scored, n_bootstrap, seed))
    out = []
    for ((comp, cond, ratio), rows), evidence in zip(cells.items(), with_evidence, strict=True):
        row = {
            "compressor": comp,
            "condition": cond,
            "ratio": ratio,
            "ceiling": bool(rows[0].get("ceiling", cond in ("full", "oracle"))),
            **next(results).as_dict(),
            "n_errors": sum(map(is_not, map(_ERROR, rows), repeat(None))),
        }
        if evidence:
            e = next(results).as_dict()
            row.update({f"evidence_{k}": e[k] for k in _EVIDENCE_KEYS})
        out.append(row)
    return out


# the fields of an answer row that scoring reads (taken by C-level getters: a run has ~100,000 rows)
_CELL = itemgetter("compressor", "condition", "ratio")
_GOAL, _CORRECT, _EVIDENCE, _ERROR = map(itemgetter, ("goal_id", "correct", "evidence", "error"))
_HAS_EVIDENCE = methodcaller("__contains__", "evidence")
_EVIDENCE_KEYS = ("micro", "macro", "micro_ci_low", "micro_ci_high", "macro_ci_low", "macro_ci_high")
