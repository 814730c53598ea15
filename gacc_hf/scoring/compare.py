"""Paired comparisons of answer rows: two runs, two compressors of one run, or two conditions.

Both sides must have answered the same questions: rows are aligned by (condition, ratio, question_id)
and the difference is B minus A with a paired goal-bootstrap CI (`scoring.paired_difference`). Two runs
are compared on the (condition, ratio) cells both have (`shared_cells` says which it skipped); within a
cell, sides that do not cover the same questions are refused, because an unpaired difference would mix
a change of method with a change of questions. Two runs must also share their data (content fingerprint),
reader and judge (`setup_differences`): the same question ids over other data, or under another reader or
judge, would pass for a change of compressor.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from operator import itemgetter, ne
from typing import Any, NamedTuple

import numpy as np

from gacc_hf.protocol import is_ceiling
from gacc_hf.scoring.groups import cells_of, grouped_by
from gacc_hf.scoring.scores import DEFAULT_BOOTSTRAP, PairedDifference, paired_differences

Key = tuple[str, float, str]
GAPS = (("own", "none"), ("own", "cross"))
# the fields of an answer row that a paired table reads (taken by C-level getters: a run has ~200,000 rows)
_CONDITION, _RATIO, _QUESTION, _GOAL, _CORRECT = map(
    itemgetter, ("condition", "ratio", "question_id", "goal_id", "correct")
)
_COMPRESSOR, _COMPRESSOR_CONDITION = itemgetter("compressor"), itemgetter("compressor", "condition")
_CELL_OF_KEY = itemgetter(0, 1)  # the (condition, ratio) of a (condition, ratio, question_id) key


class CompareError(ValueError):
    """The two sides cannot be paired (different questions, or an unknown compressor)."""


def compressors(answers: Iterable[Mapping[str, Any]]) -> list[str]:
    """Compressor names of answer rows, in first-seen order."""
    return list(dict.fromkeys(map(str, dict.fromkeys(map(_COMPRESSOR, answers)))))  # read in C


def methods(answers: Iterable[Mapping[str, Any]]) -> list[str]:
    """Compressor names of answer rows that are methods (ceilings such as full context and oracle aside)."""
    rows = list(answers)
    ceilings = {str(r["compressor"]) for r in rows if is_ceiling(r)}
    return [n for n in compressors(rows) if n not in ceilings]


def _method_id(config: Mapping[str, Any], role: str) -> str:
    m = config.get(role) or {}
    return f"{m.get('name')}@{m.get('revision')}"


def _data_id(config: Mapping[str, Any]) -> str:
    d = config.get("data") or {}
    short = str(d.get("fingerprint")).split(":")[-1][:16]
    return f"{short} ({d.get('spec')}, split {d.get('split')}, view {d.get('view')})"


def setup_differences(
    config_a: Mapping[str, Any], config_b: Mapping[str, Any], labels: tuple[str, str] = ("A", "B")
) -> tuple[list[str], list[str]]:
    """What makes two runs incomparable (data fingerprint, reader, judge), and what cannot be checked.

    The second list names runs that record no data fingerprint (written before gacc-hf recorded it).
    """
    differ, unknown = [], []
    fingerprints = [(c.get("data") or {}).get("fingerprint") for c in (config_a, config_b)]
    if None in fingerprints:
        unknown += [
            f"{label} records no data fingerprint" for label, f in zip(labels, fingerprints, strict=True) if f is None
        ]
    elif fingerprints[0] != fingerprints[1]:
        differ.append(f"data: {labels[0]} ran on {_data_id(config_a)}, {labels[1]} on {_data_id(config_b)}")
    for role in ("reader", "judge"):
        a, b = _method_id(config_a, role), _method_id(config_b, role)
        if a != b:
            differ.append(f"{role}: {labels[0]} used {a}, {labels[1]} used {b}")
    return differ, unknown


def setting(config: Mapping[str, Any]) -> str:
    """The (reader, judge) a run's answers were read and judged under, as said in a survival section."""
    return f"reader {_method_id(config, 'reader')}, judge {_method_id(config, 'judge')}"


def check_settings(configs: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Check that folders (label → config) can be the settings of one survival section: the same data (refused
    otherwise, in one line) and each (reader, judge) once. Returns what cannot be checked (no fingerprint)."""
    labels = list(configs)
    first = labels[0]
    unknown: list[str] = []
    for label in labels[1:]:
        differ, missing = setup_differences(configs[first], configs[label], (first, label))
        unknown += [m for m in missing if m not in unknown]
        data = [d for d in differ if d.startswith("data:")]
        if data:
            raise CompareError(f"the runs are not on the same data: {data[0]}")
    seen: dict[str, str] = {}
    for label in labels:
        key = setting(configs[label])
        if key in seen:
            raise CompareError(f"{seen[key]} and {label} are the same setting ({key}): give each setting once")
        seen[key] = label
    return unknown


def select(answers: Sequence[Mapping[str, Any]], compressor: str | None, label: str) -> list[Mapping[str, Any]]:
    """The rows of one compressor; `None` picks the only method (ceilings aside)."""
    names = compressors(answers)
    if compressor is None:
        choices = methods(answers) or names
        if len(choices) != 1:
            raise CompareError(f"{label} has compressors {', '.join(choices)}; choose one with --a/--b")
        compressor = choices[0]
    if compressor not in names:
        raise CompareError(f"{label} has no compressor {compressor!r}; it has {', '.join(names)}")
    return [r for r in answers if r["compressor"] == compressor]


def _cell(row: Mapping[str, Any]) -> tuple[str, float]:
    return str(row["condition"]), float(row["ratio"])


def _cells(cells: set[tuple[str, float]]) -> str:
    return ", ".join(f"{cond} r={ratio:g}" for cond, ratio in sorted(cells))


def shared_cells(
    rows_a: Sequence[Mapping[str, Any]], rows_b: Sequence[Mapping[str, Any]], labels: tuple[str, str] = ("A", "B")
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]], list[str]]:
    """The rows of the (condition, ratio) cells both sides have, and one note per cell only one side has.

    >>> a = [{"condition": "own", "ratio": r} for r in (0.1, 0.2)]
    >>> shared_cells(a, a[1:])[2]
    ['own r=0.1 (only in A)']
    """
    cells = {label: set(map(_cell, rows)) for label, rows in zip(labels, (rows_a, rows_b), strict=True)}
    shared = set.intersection(*cells.values())
    if not shared:
        have = "; ".join(f"{label} has {_cells(cs)}" for label, cs in cells.items())
        raise CompareError(f"{labels[0]} and {labels[1]} have no (condition, ratio) cell in common: {have}")
    skipped = [f"{_cells({cell})} (only in {label})" for label, cs in cells.items() for cell in sorted(cs - shared)]
    return [r for r in rows_a if _cell(r) in shared], [r for r in rows_b if _cell(r) in shared], skipped


class _Side(NamedTuple):
    """One side's rows with each row's (condition, ratio, question_id) key, and the row of each key."""

    rows: Sequence[Mapping[str, Any]]
    keys: list[Key]
    read: dict[str, Any]  # what was read of every row, by name (`_goals`, `_verdicts`, `_index`), kept


def _index(side: _Side) -> dict[Key, int]:
    """The row of each key (read only where two sides do not list their questions in one order)."""
    if "index" not in side.read:
        side.read["index"] = dict(zip(side.keys, range(len(side.keys)), strict=True))
    return side.read["index"]  # type: ignore[no-any-return]


def _goals(side: _Side) -> list[Any]:
    """Each row's goal id."""
    if "goals" not in side.read:
        side.read["goals"] = list(map(_GOAL, side.rows))
    return side.read["goals"]  # type: ignore[no-any-return]


def _verdicts(side: _Side) -> np.ndarray:
    """Each row's verdict, as bool(row["correct"])."""
    if "correct" not in side.read:
        side.read["correct"] = np.fromiter(map(bool, map(_CORRECT, side.rows)), bool, len(side.rows))
    return side.read["correct"]  # type: ignore[no-any-return]


def _side(rows: Iterable[Mapping[str, Any]], label: str, condition: str | None = None) -> _Side:
    """The keys of a side's rows (`condition` in place of each row's own, when given), read in C; a question
    answered twice at one condition and ratio is refused."""
    rows = rows if isinstance(rows, list) else list(rows)
    conditions = repeat(condition, len(rows)) if condition is not None else map(str, map(_CONDITION, rows))
    keys = list(zip(conditions, map(float, map(_RATIO, rows)), map(str, map(_QUESTION, rows)), strict=True))
    if len(set(keys)) < len(keys):
        seen: set[Key] = set()
        for key in keys:
            if key in seen:
                raise CompareError(f"{label} answers question {key[2]!r} twice at condition={key[0]}, ratio={key[1]:g}")
            seen.add(key)
    return _Side(rows, keys, {})


def _describe(keys: Iterable[Key]) -> str:
    ks = sorted(keys)
    shown = ", ".join(f"{q} ({c}, r={r:g})" for c, r, q in ks[:3])
    return f"{len(ks)} (e.g. {shown})"


def _aligned(a: _Side, b: _Side, labels: tuple[str, str]) -> tuple[list[int], list[Any]]:
    """For each row of A, the index of B's row of the same question, and the goal of each; refuses sides that
    do not cover the same questions, or that put a question in different goals."""
    if a.keys == b.keys:  # the same questions in the same order (how a run writes its conditions): row i is row i
        to_b = list(range(len(a.keys)))
    else:
        index_a, index_b = _index(a), _index(b)
        only = ((labels[0], index_a.keys() - index_b.keys()), (labels[1], index_b.keys() - index_a.keys()))
        if any(keys for _, keys in only):
            parts = "; ".join(f"only in {label}: {_describe(keys)}" for label, keys in only if keys)
            raise CompareError(f"{labels[0]} and {labels[1]} do not cover the same questions: {parts}")
        to_b = list(map(index_b.__getitem__, a.keys))
    goals = _goals(a)
    paired_goals = _goals(b) if a.keys == b.keys else list(map(_goals(b).__getitem__, to_b))
    if goals != paired_goals:
        i = list(map(ne, goals, paired_goals)).index(True)
        ra, rb = a.rows[i], b.rows[to_b[i]]
        raise CompareError(
            f"question {ra['question_id']!r} belongs to goal {ra['goal_id']!r} in {labels[0]} "
            f"but {rb['goal_id']!r} in {labels[1]}: not the same dataset"
        )
    return to_b, goals


def align(
    rows_a: Iterable[Mapping[str, Any]], rows_b: Iterable[Mapping[str, Any]], labels: tuple[str, str] = ("A", "B")
) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """Pairs of rows answering the same (condition, ratio, question_id), in A's order.

    >>> a = [{"condition": "own", "ratio": 0.1, "question_id": "q1", "goal_id": "g"}]
    >>> len(align(a, a))
    1
    >>> align(a, [])
    Traceback (most recent call last):
    ...
    gacc_hf.scoring.compare.CompareError: A and B do not cover the same questions: only in A: 1 (e.g. q1 (own, r=0.1))
    """
    a, b = _side(rows_a, labels[0]), _side(rows_b, labels[1])
    to_b, _ = _aligned(a, b, labels)
    return list(zip(a.rows, map(b.rows.__getitem__, to_b), strict=True))


def paired_table(
    rows_a: Iterable[Mapping[str, Any]],
    rows_b: Iterable[Mapping[str, Any]],
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    labels: tuple[str, str] = ("A", "B"),
) -> list[dict[str, Any]]:
    """B minus A per (condition, ratio), each with Micro/Macro of both sides and paired 95% CIs.

    With `n_boot <= 0` the CI fields are None (no resampling asked for).
    """
    return _paired(_side(rows_a, labels[0]), _side(rows_b, labels[1]), n_boot, seed, labels)


def _paired(a: _Side, b: _Side, n_boot: int, seed: int, labels: tuple[str, str]) -> list[dict[str, Any]]:
    """`paired_table` of two keyed sides: the cells are A's (condition, ratio), in A's order."""
    cells = _paired_cells(a, b, labels)
    differences = paired_differences([cell for _, cell in cells], n_boot=n_boot, seed=seed)
    return [
        {"condition": cond, "ratio": ratio, **_flat(d, with_ci=n_boot > 0)}
        for ((cond, ratio), _), d in zip(cells, differences, strict=True)
    ]


PairedCell = tuple[np.ndarray, np.ndarray, np.ndarray]  # goal ids, A's verdicts, B's verdicts of one cell


def _paired_cells(a: _Side, b: _Side, labels: tuple[str, str]) -> list[tuple[tuple[str, float], PairedCell]]:
    """A's (condition, ratio) cells in A's order, each with its questions' goals and both sides' verdicts."""
    to_b, goals = _aligned(a, b, labels)
    correct_a, correct_b = _verdicts(a), _verdicts(b)[np.asarray(to_b, dtype=np.intp)]
    goal_ids = np.asarray(goals, dtype=object)
    out = []
    for cell, rows in grouped_by(map(_CELL_OF_KEY, a.keys), range(len(a.keys))).items():
        at = np.asarray(rows, dtype=np.intp)
        out.append((cell, (goal_ids[at], correct_a[at], correct_b[at])))
    return out


def _flat(d: PairedDifference, with_ci: bool) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for m in ("micro", "macro"):
        ci = getattr(d, f"{m}_diff_ci") if with_ci else (None, None)
        row.update(
            {
                f"{m}_a": getattr(d, f"{m}_a"),
                f"{m}_b": getattr(d, f"{m}_b"),
                f"{m}_diff": getattr(d, f"{m}_diff"),
                f"{m}_diff_ci_low": ci[0],
                f"{m}_diff_ci_high": ci[1],
            }
        )
    return {**row, "n_questions": d.n_questions, "n_goals": d.n_goals}


def condition_gaps(
    answers: Sequence[Mapping[str, Any]], n_boot: int = DEFAULT_BOOTSTRAP, seed: int = 0
) -> list[dict[str, Any]]:
    """own−none and own−cross per compressor and ratio, paired over the same questions.

    A positive gap means the compressor used the goal: its memory served the questions of that goal
    better than a memory made without it (none) or for another goal (cross).
    """
    groups = cells_of(answers).by(_COMPRESSOR_CONDITION)  # each compressor's rows by condition
    sides: dict[tuple[Any, Any], _Side] = {}  # keyed once, whichever gaps read them

    def side(name: str, condition: str) -> _Side:
        # paired over (ratio, question): the two conditions differ by design, so both are keyed "*"
        if (name, condition) not in sides:
            sides[name, condition] = _side(groups[name, condition], condition, "*")
        return sides[name, condition]

    heads, cells = [], []
    for name in dict.fromkeys(str(comp) for comp, _ in groups):  # `compressors(answers)`, one row a cell read
        for own, other in GAPS:
            if (name, own) in groups and (name, other) in groups:
                for (_, ratio), cell in _paired_cells(side(name, other), side(name, own), (other, own)):
                    heads.append({"compressor": name, "gap": f"{own}-{other}", "ratio": ratio})
                    cells.append(cell)
    differences = paired_differences(cells, n_boot=n_boot, seed=seed)  # every gap resampled in shared products
    return [{**head, **_flat(d, with_ci=n_boot > 0)} for head, d in zip(heads, differences, strict=True)]


def _pct(x: float) -> str:
    return f"{100 * x:+.1f}"


def _diff(row: Mapping[str, Any], m: str) -> str:
    low, high = row[f"{m}_diff_ci_low"], row[f"{m}_diff_ci_high"]
    return _pct(row[f"{m}_diff"]) + ("" if low is None else f" [{_pct(low)},{_pct(high)}]")


def format_table(rows: Sequence[Mapping[str, Any]], label_a: str, label_b: str) -> str:
    """The paired table as fixed-width text: B − A in percentage points with its 95% CI."""
    head = (
        f"{'condition':<9} {'ratio':>6} {'n_q':>6} {'micro A':>8} {'micro B':>8} {'Δmicro pp [95% CI]':>24} "
        f"{'macro A':>8} {'macro B':>8} {'Δmacro pp [95% CI]':>24}"
    )
    lines = [f"A = {label_a}", f"B = {label_b}", "differences are B − A, in percentage points", head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r['condition']:<9} {r['ratio']:>6.3g} {r['n_questions']:>6} {r['micro_a']:>8.3f} {r['micro_b']:>8.3f} "
            f"{_diff(r, 'micro'):>24} {r['macro_a']:>8.3f} {r['macro_b']:>8.3f} {_diff(r, 'macro'):>24}"
        )
    return "\n".join(lines)
