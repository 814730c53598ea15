"""What a run cost: its usage (`gacc_hf.cost.tally`, `gacc_hf.cost.cells`) priced by a prices file
(`gacc_hf.cost.prices`).

Every method that sends requests to a server (`openai:`) must have a price: one missing is refused before
any work. A local method (rules, a local model) costs 0 unless the file names it. Per cell, the cost per
answered question counts the compressor's cost of a memory once, shared by the questions that read it
(`gacc_hf.cost.cells`). The break-even count of a cell is how many questions one memory must serve before
compressing once and reading the memory costs less than reading the whole source for each question:
the smallest n with C + n·R_memory < n·R_full, from reader costs only (C: the cell's mean cost of making
one memory; R: mean reader cost per answered question, R_full from the `full` ceiling's own rows).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from gacc_hf.cost.prices import Price, Prices

SERVED = "openai:"
NO_FULL = "not computable: run the full ceiling"
NEVER = "never"


def lookup_names(spec: str, name: str) -> list[str]:
    """The names a method's price is looked up by, in order: its spec as given, its name, its model."""
    model = name[len(SERVED) :] if name.startswith(SERVED) else None
    return list(dict.fromkeys(n for n in (spec, name, model) if n))


def price_methods(methods: Sequence[tuple[str, str, str]], prices: Prices) -> dict[str, Any]:
    """The prices document of a run: per role and method name, its price (None: not in the file, costs 0).

    `methods` are (role, spec, name); a served method without a price is a ValueError naming it and the
    names it was looked up by."""
    found: dict[str, dict[str, Any]] = {}
    for role, spec, name in methods:
        names = lookup_names(spec, name)
        price = prices.find(names)
        if price is None and spec.startswith(SERVED):
            raise ValueError(
                f"{prices.source}: no price for the {role} {name!r}, which sends requests to a server "
                f"(looked up as {', '.join(map(repr, names))}); add one of them under prices:"
            )
        entry = None if price is None else {"prompt": price.prompt, "completion": price.completion}
        found.setdefault(role, {})[name] = entry
    return {"source": prices.source, "currency": prices.currency, "methods": found}


def _price(prices: Mapping[str, Any], role: str, name: str) -> Price:
    entry = prices["methods"].get(role, {}).get(name)
    return Price(0.0, 0.0) if entry is None else Price(entry["prompt"], entry["completion"])


def _cost(price: Price, tokens: Mapping[str, float]) -> float:
    return price.cost(tokens["prompt_tokens"], tokens["completion_tokens"])  # type: ignore[arg-type]


def break_even(memory_cost: float, reader_cost: float, full_reader_cost: float | None) -> int | str:
    """The fewest questions a memory must serve so that C + n·R_memory < n·R_full (see the module).

    >>> break_even(1.0, 0.1, 0.35), break_even(0.0, 0.1, 0.2), break_even(1.0, 0.2, 0.2), break_even(1.0, 0.1, None)
    (5, 1, 'never', 'not computable: run the full ceiling')
    """
    if full_reader_cost is None:
        return NO_FULL
    saved = full_reader_cost - reader_cost
    if saved <= 0:
        return NEVER
    return math.floor(memory_cost / saved) + 1


def cost_document(
    usage: Mapping[str, Any], prices: Mapping[str, Any], reader: str | None, judge: str | None
) -> dict[str, Any]:
    """Costs per role and method (of the results, and of what this run sent) and per cell; `reader` and
    `judge` are the run's method names, for cells that name none (a cell of a run of several names its own)."""
    by_role = {
        section: {
            role: {name: round(_cost(_price(prices, role, name), e), 9) for name, e in by_method.items()}
            for role, by_method in usage[section].items()
        }
        for section in ("roles", "sent")
    }
    cells = [_cell_cost(c, prices, reader, judge) for c in usage.get("cells", [])]
    full: dict[Any, list[dict[str, Any]]] = {}  # per setting (a run of several readers or judges), its full cells
    for c in cells:
        if c["condition"] == "full" and c["answered"]:
            full.setdefault((c.get("reader"), c.get("judge")), []).append(c)
    for c in cells:
        if not c["ceiling"]:
            of = full.get((c.get("reader"), c.get("judge")))
            full_reader = sum(f["reader_cost"] for f in of) / sum(f["answered"] for f in of) if of else None
            c["break_even_questions"] = break_even(c["memory_cost"], c["reader_per_question"], full_reader)
    total = sum(v for by_method in by_role["roles"].values() for v in by_method.values())
    sent = sum(v for by_method in by_role["sent"].values() for v in by_method.values())
    return {
        "currency": prices["currency"],
        "total": round(total, 9),
        "sent": round(sent, 9),
        "roles": by_role["roles"],
        "sent_roles": by_role["sent"],
        "cells": cells,
    }


def _cell_cost(cell: Mapping[str, Any], prices: Mapping[str, Any], reader: str, judge: str) -> dict[str, Any]:
    compressor = _price(prices, "compressor", cell["compressor"])
    costs = {
        "compressor": _cost(compressor, cell["tokens"]["compressor"]),
        "reader": _cost(_price(prices, "reader", cell.get("reader", reader)), cell["tokens"]["reader"]),
        "judge": _cost(_price(prices, "judge", cell.get("judge", judge)), cell["tokens"]["judge"]),
    }
    answered = cell["answered"]
    total = sum(costs.values())
    return {
        **{k: cell[k] for k in ("reader", "judge") if k in cell},  # the cell's setting (schema 5)
        **{k: cell[k] for k in ("compressor", "condition", "ratio", "ceiling", "questions", "answered", "memories")},
        **{f"{role}_cost": round(v, 9) for role, v in costs.items()},
        "total": round(total, 9),
        "per_question": round(total / answered, 9) if answered else None,
        "reader_per_question": round(costs["reader"] / answered, 9) if answered else 0.0,
        "memory_cost": round(_cost(compressor, cell["memory_tokens"]) / max(1, cell["memories"]), 9),
    }
