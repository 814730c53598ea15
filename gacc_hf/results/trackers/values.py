"""What a run gives an experiment tracker, in the one shape every tracker module logs.

A `Logged` holds, from a `results.json` document and the run's answer and memory rows: the run's config
(with versions, git revision, tokenizer and command), every number of the document as a flat scalar, the row
sections as tables, and the answers as per-sample traces. A scalar's name is its place in the document: the
section, then a row's identifying values (language, compressor, gap, condition, ratio: those it has, in that
order), then the field, joined by `/`: `scores/bm25/own/0.1/micro`, `integrity/exposures`,
`usage/roles/reader/fields/prompt_tokens`, `cost/total`. Every tracker receives the same names and values.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: The fields that name a row of a section, in the order its scalar names take them.
ID_FIELDS = ("language", "compressor", "gap", "condition", "ratio")
#: The document's sections of numbers (dicts, with lists of rows inside `usage` and `cost`).
COUNTERS = ("integrity", "calls", "generated_tokens", "seconds", "usage", "cost")
#: The document's sections of rows: each is logged as scalars and as a table.
ROWS = (
    "scores",
    "scores_by_language",
    "gaps",
    "outcomes",
    "outcomes_by_language",
    "retention",
    "auc",
    "auc_by_language",
)
#: The run's description beside `config`, logged as the tracker's config.
DESCRIPTION = ("schema_version", "command", "versions", "git_revision", "tokenizer")


@dataclass(frozen=True)
class Logged:
    """Everything one run logs: config, scalars by name, tables (columns, rows) by name, traces."""

    config: dict[str, Any]
    scalars: dict[str, float]
    tables: dict[str, tuple[list[str], list[list[Any]]]]
    traces: list[dict[str, Any]] = field(default_factory=list)


def id_part(name: str, value: Any) -> str:
    """A row's identifying value as it stands in a scalar's name: a ratio as `%g` (0.1, 0.333333)."""
    if name == "ratio" and isinstance(value, int | float):
        return f"{float(value):g}"
    return str(value)


def row_name(row: Mapping[str, Any]) -> str:
    return "/".join(id_part(k, row[k]) for k in ID_FIELDS if k in row)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def flat_scalars(prefix: str, value: Any, out: dict[str, float], *, row: bool = False) -> None:
    """Every number under `value`, named from `prefix` down: a dict's by key, a list's rows by their identifying
    values (which a `row` names, so they are not scalars of it)."""
    if _number(value):
        out[prefix] = float(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if not (row and key in ID_FIELDS):
                flat_scalars(f"{prefix}/{key}", item, out)
    elif isinstance(value, Sequence) and not isinstance(value, str):
        for item in value:
            if isinstance(item, Mapping) and any(k in item for k in ID_FIELDS):
                flat_scalars(f"{prefix}/{row_name(item)}", item, out, row=True)


def cell(value: Any) -> Any:
    """A table cell every tracker takes: numbers, text, booleans and None as they are, anything else as JSON."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def table(rows: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    """(columns in first-seen order, rows of cells), a missing field an empty cell."""
    columns = list(dict.fromkeys(k for row in rows for k in row))
    return columns, [[cell(row.get(c)) for c in columns] for row in rows]


def traces(answers: Sequence[Mapping[str, Any]], memories: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One trace per answer row: the memory the reader was given, the question, the answer, and the rest of
    the row (cell, ids, references, verdict, outcome, error) as its metadata."""
    memory_of = {m.get("memory_sha256"): m.get("memory") for m in memories}
    out = []
    for row in answers:
        memory = memory_of.get(row.get("memory_sha256"))
        messages = [{"role": "system", "content": "" if memory is None else str(memory)}]
        messages += [
            {"role": "user", "content": str(row.get("question", ""))},
            {"role": "assistant", "content": "" if row.get("answer") is None else str(row["answer"])},
        ]
        metadata = {k: cell(v) for k, v in row.items() if k not in ("question", "answer")}
        out.append({"messages": messages, "metadata": metadata})
    return out


def logged_values(
    document: Mapping[str, Any], answers: Sequence[Mapping[str, Any]], memories: Sequence[Mapping[str, Any]]
) -> Logged:
    """What a tracker logs of a run: its `results.json` document, answer rows and memory ledger."""
    config = {**document["config"], **{k: document.get(k) for k in DESCRIPTION}}
    scalars: dict[str, float] = {}
    for section in (*COUNTERS, *ROWS):
        if document.get(section) is not None:
            flat_scalars(section, document[section], scalars)
    tables = {s: table(document[s]) for s in ROWS if document.get(s)}
    for section in ("usage", "cost"):
        if (document.get(section) or {}).get("cells"):
            tables[f"{section}_cells"] = table(document[section]["cells"])
    if answers:
        tables["answers"] = table(answers)
    return Logged(config, scalars, tables, traces(answers, memories))
