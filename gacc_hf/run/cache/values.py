"""What a stored cache value of each kind must look like: the checks behind "a value with the wrong shape is
never used" (`gacc_hf.run.cache`).

Every value `Cache.get_many` returns has passed `value_problem`; `usual_shape` is the same verdict for the
common shapes, cheap enough to ask of every value of a warm rerun, which sends anything else to the full check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gacc_hf.cost.usage import usage_problem

# The field every stored value of a kind carries, and its type; `count` values are plain integers.
_VALUE_FIELDS: dict[str, tuple[str, type]] = {
    "memory": ("memory", str),
    "answer": ("answer", str),
    "verdict": ("correct", bool),
}
# Ledger fields a memory value may carry, with their type (checked when present).
_MEMORY_LEDGER: dict[str, type] = {
    "proposed_tokens": int,
    "retained_tokens": int,
    "reencoded_tokens": int,
    "padding_tokens": int,
    "unused_budget": int,
    "truncated": bool,
}


def value_problem(kind: str, value: Any) -> str | None:
    """What is wrong with a stored value of `kind` (None: nothing). Failures are never stored, so a value
    carrying an `error` is a problem too. Kinds other than the runner's are not checked.

    >>> value_problem("verdict", {"correct": True}) is None
    True
    >>> value_problem("answer", {"error": "reader failed"})
    "a failure was stored (an 'error' field); failures are never cached"
    >>> value_problem("memory", {"memory": "m", "retained_tokens": "3"})
    "a memory value's 'retained_tokens' must be int, got '3'"
    """
    if kind == "count":
        return None if type(value) is int and value >= 0 else f"a count must be a non-negative int, got {value!r:.80}"
    if kind == "matches":
        return _matches_problem(value)
    if kind == "text":
        return None if type(value) is str else f"a text value must be a string, got {value!r:.80}"
    if kind == "matches-inputs":
        hashes = type(value) is list and len(value) == 5 and all(type(h) is str and len(h) == 64 for h in value)
        return None if hashes else f"a matches-inputs value must be 5 sha256 hex digests, got {value!r:.80}"
    if kind not in _VALUE_FIELDS:
        return None
    if isinstance(value, dict) and "error" in value:
        return "a failure was stored (an 'error' field); failures are never cached"
    name, kind_type = _VALUE_FIELDS[kind]
    if not isinstance(value, dict) or type(value.get(name)) is not kind_type:
        return f"{kind} value needs a {kind_type.__name__} {name!r}, got {value!r:.80}"
    if "usage" in value and (problem := usage_problem(value["usage"])):
        return problem
    if kind == "memory":
        for field, field_type in _MEMORY_LEDGER.items():
            if field in value and type(value[field]) is not field_type:
                return f"a memory value's {field!r} must be {field_type.__name__}, got {value[field]!r:.80}"
    return None


def _matches_problem(value: Any) -> str | None:
    """What is wrong with a `matches` value: `evidence` must be a string of `0` and `1` (one per question),
    `exposed` a list of [kind, text] pairs whose kind is `question` or `reference`.

    >>> _matches_problem({"evidence": "10", "exposed": [["reference", "six months"]]}) is None
    True
    >>> _matches_problem({"evidence": [True], "exposed": []})
    "a matches value's 'evidence' must be a string of 0 and 1, got [True]"
    """
    if not isinstance(value, dict) or sorted(value) not in (["evidence", "exposed"], ["evidence", "exposed", "seal"]):
        return f"a matches value needs exactly 'evidence', 'exposed' (and 'seal'), got {value!r:.80}"
    if type(value.get("seal", "")) is not str:
        return f"a matches value's 'seal' must be a string, got {value['seal']!r:.80}"
    flags, exposed = value["evidence"], value["exposed"]
    if type(flags) is not str or flags.strip("01"):
        return f"a matches value's 'evidence' must be a string of 0 and 1, got {flags!r:.80}"
    if not isinstance(exposed, list) or not all(
        isinstance(p, list) and len(p) == 2 and p[0] in ("question", "reference") and type(p[1]) is str for p in exposed
    ):
        return f"a matches value's 'exposed' must be a list of [kind, text] pairs, got {exposed!r:.80}"
    return None


def usual_shape(kind: str) -> Callable[[Any], bool] | None:
    """A test that a parsed value has its kind's usual shape, so that `value_problem` has nothing to say:
    an answer or verdict that is exactly `{field: value}` (with a sound `usage` where a model made it), a
    `matches` value that exposes nothing. None for the other kinds, which `_parse` checks in full."""
    if kind == "matches":
        return lambda value: (
            type(value) is dict
            and len(value) == 3
            and type(value.get("seal")) is str
            and value.get("exposed") == []
            and type(flags := value.get("evidence")) is str
            and not flags.strip("01")
        )
    if kind not in ("answer", "verdict"):
        return None
    name, kind_type = _VALUE_FIELDS[kind]
    return lambda value: (
        type(value) is dict
        and type(value.get(name)) is kind_type
        and (len(value) == 1 or (len(value) == 2 and usage_problem(value.get("usage")) is None))
    )
