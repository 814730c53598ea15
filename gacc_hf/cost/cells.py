"""Tokens per cell (reader and judge × compressor × condition × ratio): each value's usage attributed to the
answer rows that used it.

A memory is computed once and read by every question row of every ledger row that holds it (the `none`
condition shares one memory among the goals of a context): its compressor usage is split evenly among
those question rows, so the cells' shares add up to the memory's usage once. An answer or verdict shared
by several rows (the same memory and question) is split evenly among them the same way. A cell also keeps
the whole usage of its distinct memories (`memory_tokens`, `memories`): the cost of making one memory,
which the break-even count needs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

ROLES = ("compressor", "reader", "judge")
_FIELDS = ("prompt_tokens", "completion_tokens")
_COUNTS = ("questions", "answered", "memories")


def _zero() -> dict[str, float]:
    return dict.fromkeys(_FIELDS, 0.0)


def _add(into: dict[str, float], usage: Mapping[str, Any] | None, share: float) -> None:
    if usage is not None:
        for f in _FIELDS:
            into[f] += usage[f] * share


def _cell(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        **{k: row[k] for k in ("reader", "judge") if k in row},  # the setting of a run's cell
        "compressor": row["compressor"],
        "condition": row["condition"],
        "ratio": row["ratio"],
        "ceiling": bool(row.get("ceiling")),
        **dict.fromkeys(_COUNTS, 0),
        "tokens": {role: _zero() for role in ROLES},
        "memory_tokens": _zero(),
    }


def cell_usage(
    ledger: Sequence[Mapping[str, Any]],
    memories: Mapping[str, Mapping[str, Any]],
    rows: Sequence[Mapping[str, Any]],
    kept: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """Per cell, in ledger order: question and answered rows, distinct memories, attributed tokens per role.

    `rows` are the answer rows (ledger order, then question order); `kept` holds, per row, its answer and
    verdict keys (None where there is none) and the answer and verdict values by key
    (`gacc_hf.run.read.read_and_judge`)."""
    readers = Counter()  # memory key -> question rows reading it
    for entry in ledger:
        readers[entry["memory_key"]] += entry["n_questions"]
    answer_keys, verdict_keys = kept["answer_keys"], kept["verdict_keys"]
    uses = Counter(filter(None, answer_keys)) + Counter(filter(None, verdict_keys))
    cells: dict[tuple[Any, ...], dict[str, Any]] = {}
    seen: set[tuple[tuple[Any, ...], str]] = set()
    i = 0
    for entry in ledger:
        cell_key = (entry["compressor"], entry["condition"], entry["ratio"])
        cell = cells.setdefault(cell_key, _cell(entry))
        memory = memories[entry["memory_key"]]
        if (cell_key, entry["memory_key"]) not in seen and "error" not in memory:
            seen.add((cell_key, entry["memory_key"]))
            cell["memories"] += 1
            _add(cell["memory_tokens"], memory.get("usage"), 1.0)
        share = 1.0 / readers[entry["memory_key"]] if readers[entry["memory_key"]] else 0.0
        for _ in range(entry["n_questions"]):
            cell["questions"] += 1
            cell["answered"] += rows[i]["answer"] is not None
            _add(cell["tokens"]["compressor"], memory.get("usage"), share)
            for role, key, values in (
                ("reader", answer_keys[i], kept["answers"]),
                ("judge", verdict_keys[i], kept["verdicts"]),
            ):
                if key is not None:
                    _add(cell["tokens"][role], values[key].get("usage"), 1.0 / uses[key])
            i += 1
    return [_rounded(c) for c in cells.values()]


def _rounded(cell: dict[str, Any]) -> dict[str, Any]:
    tokens = {role: {f: round(v, 6) for f, v in t.items()} for role, t in cell["tokens"].items()}
    return {**cell, "tokens": tokens, "memory_tokens": {f: round(v, 6) for f, v in cell["memory_tokens"].items()}}


def merge_cells(parts: Iterable[Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """The cells of disjoint shards of a run, added up (first-seen order)."""
    merged: dict[tuple[Any, ...], dict[str, Any]] = {}
    for cells in parts:
        for c in cells:
            key = (c.get("reader"), c.get("judge"), c["compressor"], c["condition"], c["ratio"])
            into = merged.setdefault(key, _cell(c))
            for f in _COUNTS:
                into[f] += c[f]
            for role in ROLES:
                _add(into["tokens"][role], c["tokens"][role], 1.0)
            _add(into["memory_tokens"], c["memory_tokens"], 1.0)
    return [_rounded(c) for c in merged.values()]
