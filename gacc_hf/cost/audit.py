"""A stored run's usage and cost checked against what they are derived from, before they reach a model card.

`results.json` holds no per-call usage, so the tokens themselves cannot be counted again; what can be
re-derived is checked. Per cell (compressor, condition, ratio), the question and answered counts come from
the answer rows. Per role and method, the tokens of the whole run are the sum of the cells' shares
(`gacc_hf.cost.cells`: every value's usage is split among the rows that used it, so the cells add up to the
run). What this run itself sent depends on the cache at run time and is checked only to be part of the
whole. Memory and call counts are not checked: a memory two processes of a run both made counts in each.
The cost is computed again from the usage and the recorded prices (`gacc_hf.cost.costing.cost_document`)
and must be the stored one.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from gacc_hf.cost.costing import cost_document
from gacc_hf.cost.tally import ROLES
from gacc_hf.scoring.settings import config_methods

_TOKENS = ("prompt_tokens", "completion_tokens")
_ROUNDING = 1e-6  # each cell's share is stored to 6 places


def _cell_key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    return (row.get("reader"), row.get("judge"), row["compressor"], row["condition"], float(row["ratio"]))


def _derived_counts(answers: Sequence[Mapping[str, Any]]) -> dict[tuple, dict[str, int]]:
    """Per cell: its question rows and those answered."""
    counts: dict[tuple, dict[str, int]] = defaultdict(lambda: {"questions": 0, "answered": 0})
    for row in answers:
        cell = counts[_cell_key(row)]
        cell["questions"] += 1
        cell["answered"] += row.get("answer") is not None
    return dict(counts)


def _cell_problems(
    cells: Sequence[Mapping[str, Any]], derived: Mapping[tuple, Mapping[str, int]], several: bool = False
) -> list[str]:
    stored = {_cell_key(c): c for c in cells}
    if set(stored) != set(derived):
        return ["usage.cells cover other cells than the answer rows"]
    out = []
    for key, cell in stored.items():
        for field, value in derived[key].items():
            if cell[field] != value:
                where = "/".join(f"{v:g}" if isinstance(v, float) else str(v) for v in key[2:])
                where += f", reader {key[0]}, judge {key[1]}" if several else ""
                out.append(f"usage.cells[{where}].{field} is {cell[field]}, the rows give {value}")
    return out


def _cell_sums(
    usage: Mapping[str, Any], reader: str, judge: str, shares: Mapping[str, float] | None = None
) -> dict[tuple[str, str], dict[str, float]]:
    """(role, method) -> tokens: the cells' shares added up (a compressor's cells by its name).

    In a run of several (reader, judge) settings each setting's cells hold a memory's whole usage and each
    judge's cells an answer's: `shares` (role -> 1 / the settings that repeat it) counts each value once."""
    shares = shares or {}
    sums: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: dict.fromkeys(_TOKENS, 0.0))
    for cell in usage.get("cells", []):
        named = (
            ("compressor", cell["compressor"]),
            ("reader", cell.get("reader", reader)),
            ("judge", cell.get("judge", judge)),
        )
        for role, name in named:
            if role == "compressor" and cell["ceiling"]:
                continue  # a bound makes no memory: its compressor share is 0
            for f in _TOKENS:
                sums[(role, name)][f] += cell["tokens"][role][f] * shares.get(role, 1.0)
    return sums


def _role_problems(
    usage: Mapping[str, Any], reader: str, judge: str, shares: Mapping[str, float] | None = None
) -> list[str]:
    out = []
    sums, tolerance = _cell_sums(usage, reader, judge, shares), _ROUNDING * (len(usage.get("cells", [])) + 1)
    for role in ROLES:
        for name, entry in usage["roles"].get(role, {}).items():
            for f in _TOKENS:
                whole = sums.get((role, name), {}).get(f, 0.0)
                if abs(entry[f] - whole) > tolerance:
                    out.append(f"usage.roles.{role}.{name}.{f} is {entry[f]}, its cells add up to {whole:g}")
            sent = usage.get("sent", {}).get(role, {}).get(name, {})
            over = [f for f in ("calls", *_TOKENS) if sent.get(f, 0) > entry[f]]
            if over:
                out.append(f"usage.sent.{role}.{name} holds more {', '.join(over)} than the whole run")
        extra = set(usage.get("sent", {}).get(role, {})) - set(usage["roles"].get(role, {}))
        if extra:
            out.append(f"usage.sent.{role} names {', '.join(sorted(extra))}, which the run's usage does not")
    for (role, name), whole in sums.items():
        if name not in usage["roles"].get(role, {}) and any(v > tolerance for v in whole.values()):
            out.append(f"usage.cells hold {role} tokens of {name}, which usage.roles does not name")
    return out


def _cost_problems(payload: Mapping[str, Any], reader: str, judge: str) -> list[str]:
    prices, cost, usage = payload.get("prices"), payload.get("cost"), payload.get("usage")
    if prices is None:
        return [] if cost is None else ["cost is recorded without the prices it was computed from"]
    expected = cost_document(usage, prices, reader, judge)
    if json.dumps(cost, sort_keys=True) != json.dumps(expected, sort_keys=True):
        total = (cost or {}).get("total")
        return [f"cost does not follow from usage and prices (total {total}; they give {expected['total']})"]
    return []


def usage_problems(payload: Mapping[str, Any], answers: Sequence[Mapping[str, Any]]) -> list[str]:
    """What in the stored `usage` and `cost` disagrees with the rows and with each other (see the module);
    empty for a sound run and for one written before usage was recorded."""
    usage = payload.get("usage")
    if not usage:
        return [] if payload.get("cost") is None else ["cost is recorded without the usage it was computed from"]
    cfg = payload["config"]
    n_readers, n_judges = (len(config_methods(cfg, role)) for role in ("reader", "judge"))
    several = n_readers * n_judges > 1  # then every cell names its reader and judge
    reader, judge = (None, None) if several else (cfg["reader"]["name"], cfg["judge"]["name"])
    shares = {"compressor": 1 / (n_readers * n_judges), "reader": 1 / n_judges}
    try:
        found = [
            *_cell_problems(usage.get("cells", []), _derived_counts(answers), several),
            *_role_problems(usage, reader, judge, shares),
        ]
        return found or _cost_problems(payload, reader, judge)  # a cost is only checked on a sound usage
    except (KeyError, TypeError, AttributeError) as exc:
        return [f"usage or cost is not in the shape gacc-hf writes ({type(exc).__name__}: {exc})"]
