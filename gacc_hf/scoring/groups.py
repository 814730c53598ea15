"""Answer rows grouped by some of their fields, at the speed of C: a release-size run has 200,000 rows or more.

A run's rows come in long stretches of one cell (one compressor, condition and ratio), so each stretch of rows
with one key is found by `itertools.groupby` over C-level getters and merged into its group whole: the groups
are what `out.setdefault(key(row), []).append(row)` over every row gives (keys in first-seen order, each
group's rows in their order), with Python work per stretch instead of per row, in any order of rows.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from itertools import chain, groupby
from operator import itemgetter, methodcaller
from typing import Any, TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")
R = TypeVar("R")

_KEY, _MEMBER = itemgetter(0), itemgetter(1)
ABSENT = object()  # what a getter made by `field_or_absent` gives for a row without the field
#: a row's `ceiling` flag, ABSENT when it has none (`gacc_hf.protocol.is_ceiling` then reads its condition)
CEILING_FLAG = methodcaller("get", "ceiling", ABSENT)
_CELL, _CEILING = itemgetter("compressor", "condition", "ratio"), itemgetter("ceiling")


def grouped_by(keys: Iterable[K], rows: Iterable[T]) -> dict[K, list[T]]:
    """`rows` by their `keys` (one key a row, in step), keys in first-seen order.

    >>> grouped_by("abba", [1, 2, 3, 4])
    {'a': [1, 4], 'b': [2, 3]}
    """
    out: dict[K, list[T]] = {}
    for key, stretch in groupby(zip(keys, rows, strict=True), _KEY):
        members = map(_MEMBER, stretch)
        group = out.get(key)
        if group is None:
            out[key] = list(members)
        else:
            group.extend(members)
    return out


def grouped(rows: Iterable[T], key: Callable[[T], K]) -> dict[K, list[T]]:
    """`rows` by `key(row)` (best a C-level getter such as `operator.itemgetter`), keys in first-seen order.

    >>> grouped([{"c": "own", "q": 1}, {"c": "none", "q": 2}, {"c": "own", "q": 3}], itemgetter("c"))
    {'own': [{'c': 'own', 'q': 1}, {'c': 'own', 'q': 3}], 'none': [{'c': 'none', 'q': 2}]}
    """
    rows = rows if isinstance(rows, list) else list(rows)
    return grouped_by(map(key, rows), rows)


class Rows(list):  # type: ignore[type-arg]
    """Answer rows that keep what is computed from all of them once (`kept`): every figure of a run groups the
    same rows by cell and reads their languages, so the rows of one setting are read once for all of them.
    The rows must not change once read."""

    kept: dict[str, Any] | None = None


def kept(rows: Sequence[Mapping[str, Any]], name: str, compute: Callable[[Sequence[Mapping[str, Any]]], R]) -> R:
    """`compute(rows)`, kept by `Rows` under `name` for the next figure that asks."""
    if not isinstance(rows, Rows):
        return compute(rows)
    if rows.kept is None:
        rows.kept = {}
    if name not in rows.kept:
        rows.kept[name] = compute(rows)
    return rows.kept[name]  # type: ignore[no-any-return]


def every_row_has(rows: Sequence[Mapping[str, Any]], field: str) -> bool:
    """Whether every row has `field` (kept by `Rows`): rows of older versions lack some fields."""
    return kept(rows, f"has {field}", lambda r: _reads(r, itemgetter(field)))


def _reads(rows: Sequence[Mapping[str, Any]], getter: Callable[[Mapping[str, Any]], Any]) -> bool:
    try:  # twice as fast as asking each row whether it has the field
        deque(map(getter, rows), maxlen=0)
    except KeyError:
        return False
    return True


def cells_of(rows: Sequence[Mapping[str, Any]]) -> Cells:
    """The `Cells` of answer rows (kept by `Rows`). They hold a copy of the list, never the `Rows` that keeps
    them: that cycle would leave a run's rows to the cyclic collector, which walks them all to free them."""
    return kept(rows, "cells", lambda r: Cells(list(r)))


class Cells:
    """Answer rows grouped by (compressor, condition, ratio, ceiling flag), read in C, in first-seen order.

    Every way a figure groups a run's rows (by cell as the rows name it, as scoring names it, by compressor
    and condition, methods apart from ceilings) is a coarser grouping of these groups, made by asking its key
    of one row a group (`by`).
    """

    def __init__(self, rows: list[Mapping[str, Any]]) -> None:
        self.rows = rows
        try:  # read in C; a getter with a default is twice as slow, so it reads only rows some of which lack a flag
            flags = list(map(_CEILING, rows))
        except KeyError:
            flags = list(map(CEILING_FLAG, rows))
        keys = zip(map(_CELL, rows), flags, strict=True)
        self.groups: list[list[int]] = list(grouped_by(keys, range(len(rows))).values())  # row indices

    def firsts(self) -> list[Mapping[str, Any]]:
        """The first row of each group: one row of every (compressor, condition, ratio, ceiling flag)."""
        return [self.rows[indices[0]] for indices in self.groups]

    def by(self, key: Callable[[Mapping[str, Any]], K]) -> dict[K, list[Mapping[str, Any]]]:
        """`grouped(rows, key)` for a `key` that reads no more than a row's compressor, condition, ratio and
        ceiling flag (`gacc_hf.protocol.is_ceiling`): the key is asked of one row a group."""
        parts: dict[K, list[list[int]]] = {}
        for indices in self.groups:
            parts.setdefault(key(self.rows[indices[0]]), []).append(indices)
        return {k: self._members(p) for k, p in parts.items()}

    def _members(self, parts: list[list[int]]) -> list[Mapping[str, Any]]:
        # groups that meet under one key give their rows in row order (a merge of sorted runs)
        indices = parts[0] if len(parts) == 1 else sorted(chain.from_iterable(parts))
        return list(map(self.rows.__getitem__, indices))


def field_or_absent(field: str) -> Callable[[Any], Any]:
    """A C-level getter of a row's `field`, ABSENT where the row has none."""
    return methodcaller("get", field, ABSENT)
