"""Answer rows grouped by some of their fields, at the speed of C: a release-size run has 200,000 rows or more.

A run's rows come in long stretches of one cell (one compressor, condition and ratio), so each stretch of rows
with one key is found by `itertools.groupby` over C-level getters and merged into its group whole: the groups
are what `out.setdefault(key(row), []).append(row)` over every row gives (keys in first-seen order, each
group's rows in their order), with Python work per stretch instead of per row, in any order of rows.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from itertools import groupby
from operator import itemgetter, methodcaller
from typing import Any, TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")

_KEY, _MEMBER = itemgetter(0), itemgetter(1)
ABSENT = object()  # what a getter made by `field_or_absent` gives for a row without the field
#: a row's `ceiling` flag, ABSENT when it has none (`gacc_hf.protocol.is_ceiling` then reads its condition)
CEILING_FLAG = methodcaller("get", "ceiling", ABSENT)


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


def grouped_on(rows: list[T], fields: Callable[[T], Hashable], key: Callable[[T], K]) -> dict[K, list[T]]:
    """`grouped(rows, key)` for a `key` that depends on the fields `fields` reads (the condition among them) and
    the row's ceiling flag alone: the rows are grouped on those in C, and `key` is asked once a group.

    Where two groups meet under one key (rows of a cell flagged False and rows with no flag, both no
    ceiling), every row is asked instead, so that each group keeps its rows in their order.
    """
    out: dict[K, list[T]] = {}
    for members in grouped_by(zip(map(fields, rows), map(CEILING_FLAG, rows), strict=True), rows).values():
        k = key(members[0])
        if k in out:
            return grouped(rows, key)
        out[k] = members
    return out


def field_or_absent(field: str) -> Callable[[Any], Any]:
    """A C-level getter of a row's `field`, ABSENT where the row has none."""
    return methodcaller("get", field, ABSENT)
