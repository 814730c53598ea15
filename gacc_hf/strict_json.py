"""JSON with finite numbers only, and the key of any other number named.

JSON has no NaN or infinity: Python writes them as `NaN` and `Infinity` (which other readers refuse) or,
with `allow_nan=False`, refuses them with "Out of range float values are not JSON compliant", naming
neither the file nor the key. gacc writes its JSON (`results.json`, the board's data, a dry run's plan)
through `dumps`, and checks what it reads back from a results folder with `non_finite`, so a NaN from a bug
or a hand edit is one line naming the file and the key that holds it. The results page's data, megabytes at
the release's size, are encoded faster by orjson, which writes a NaN as null: their only numbers that are not
whole, the cells' ratios, go through `check_finite` first (`gacc_hf.results.page.page_json`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any


class NonFiniteError(ValueError):
    """A number that is NaN or infinite where JSON needs a finite one; the message names file and key."""


def non_finite(value: Any) -> tuple[str, float] | None:
    """The key path (`scores[2].micro`) and value of the first NaN or infinite number in `value`, or None.

    >>> non_finite({"scores": [{"micro": 0.5}, {"micro": float("nan")}]})
    ('scores[1].micro', nan)
    >>> non_finite({"a": [1, 2.5, "inf"]}) is None
    True
    """
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:  # depth first, in document order; no recursion, whatever the nesting
        path, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return path or "the value", item
        if isinstance(item, Mapping):
            stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in reversed(list(item.items())))
        elif isinstance(item, list | tuple):
            stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(item))))
    return None


def check_finite(value: Any, where: str, error: type[ValueError] = NonFiniteError) -> None:
    """Raise `error` naming `where` (the file) and the key when `value` holds a NaN or infinite number."""
    found = non_finite(value)
    if found is not None:
        raise error(f"{where}: {found[0]} is {found[1]}, not a finite number (JSON holds finite numbers only)")


def dumps(value: Any, where: str, **options: Any) -> str:
    """`json.dumps(value, **options)` with finite numbers only: NonFiniteError naming `where` and the key.

    >>> dumps({"cost": float("inf")}, "plan")
    Traceback (most recent call last):
    ...
    gacc_hf.strict_json.NonFiniteError: plan: cost is inf, not a finite number (JSON holds finite numbers only)
    """
    try:  # one pass in C; the walk that names the key only when it refuses
        return json.dumps(value, allow_nan=False, **options)
    except (ValueError, RecursionError):  # the walk has no recursion: it names a NaN however deep
        check_finite(value, where)
        raise
