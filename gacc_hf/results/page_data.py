"""The data the results page embeds: per goal its source, what each memory kept of it, its questions and answers.

A results folder holds no source as such; the memory of a `full` row is the source itself (docs/protocol.md §9),
so the page shows a source where the run has the `full` condition and the memories alone elsewhere. What a memory
copies verbatim is stored as spans of its source, not as text, which keeps the page small at the release's size
(docs/performance.md); what it holds that is not in the source is stored as text, to be shown beside it.
A run of several (reader, judge) settings names each answer's setting (`settings`, `roles`), so the page lines up
the judges' verdicts on one answer; `run` names the run, the key a person's labels are kept under in the browser.

Rows of an older folder read without a column (`language`, `evidence`, `outcome`, `ceiling`) get what the
harness would give them: no language, an outcome derived from verdict and evidence flag, a ceiling by condition.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gacc_hf.protocol import is_ceiling
from gacc_hf.results.layout import RunResults
from gacc_hf.scoring.outcomes import OUTCOMES, outcome
from gacc_hf.scoring.settings import setting_label, setting_of, settings_of
from gacc_hf.text.spans import kept_spans, reference_marks

Cell = tuple[str, str, float]


def cell_of(row: Mapping[str, Any]) -> Cell:
    """The (compressor, condition, ratio) cell of an answer or memory row."""
    return (row["compressor"], row["condition"], float(row["ratio"]))


def row_outcome(row: Mapping[str, Any]) -> str | None:
    """The row's `outcome` column where it has one, else derived from its verdict and evidence flag."""
    if "outcome" in row:
        return row["outcome"]
    return outcome(row.get("correct"), row.get("evidence"))


def sources_of(memories: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Each context's source: the memory of a `full` row, where the run has one."""
    return {m["context_id"]: m["memory"] for m in memories if m["condition"] == "full" and isinstance(m["memory"], str)}


def page_data(run: RunResults) -> dict[str, Any]:
    """The JSON document of the page: cells, outcomes and one entry per goal, in the order of the answer rows."""
    sources = sources_of(run.memories)
    cells: dict[Cell, int] = {}
    ceilings: set[Cell] = set()
    for row in [*run.memories, *run.answers]:
        cells.setdefault(cell_of(row), len(cells))
        if is_ceiling(row):
            ceilings.add(cell_of(row))
    goals: dict[str, dict[str, Any]] = {}
    settings = settings_of(run.answers)
    several = len(settings) > 1  # then each goal lists its answers' settings (`settings`, in answer order)
    for row in run.answers:
        goal = goals.get(row["goal_id"]) or goals.setdefault(row["goal_id"], _new_goal(row, several))
        goal["answers"].append(_answer(row, goal, cells, sources.get(row["context_id"])))
        if several:
            goal["settings"].append(settings.index(setting_of(row)))  # type: ignore[arg-type]
    kept = _memories(run.memories, goals, cells, sources)
    for goal in goals.values():
        del goal["index"]
    return {
        "run": run_key(run.config),
        **({"settings": [setting_label(s) for s in settings], "roles": [list(s) for s in settings]} if several else {}),
        "cells": [[*cell, cell in ceilings] for cell in cells],
        "outcomes": list(OUTCOMES),
        "kept": kept,
        "sources": {cid: sources[cid] for cid in dict.fromkeys(g["context"] for g in goals.values()) if cid in sources},
        "goals": [{"id": gid, **goal} for gid, goal in goals.items()],
    }


# what makes a run the run it is (not when, where or how fast it ran): the page files a person's labels under it
_RUN_FIELDS = ("data", "compressors", "reader", "judge", "ratios", "conditions", "seed", "limit", "goals")


def run_key(config: Mapping[str, Any]) -> str:
    """16 hex digits naming the run in the browser's storage, so that labels made on one run's page are not
    offered for export on another's (every page opened from file:// shares one storage): sha256 of its data
    (with the fingerprint), methods with their revisions, ratios, conditions, seed and the part of the data kept.

    >>> run_key({"seed": 0}) == run_key({"seed": 0, "cache_dir": "/tmp"}) != run_key({"seed": 1})
    True
    """
    kept = {name: config.get(name) for name in _RUN_FIELDS}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _new_goal(row: Mapping[str, Any], several: bool = False) -> dict[str, Any]:
    return {
        "context": row["context_id"],
        "language": row.get("language") or "",
        "index": {},
        "questions": [],
        "memories": {},
        "answers": [],
        **({"settings": []} if several else {}),
    }


def _answer(row: Mapping[str, Any], goal: dict[str, Any], cells: dict[Cell, int], source: str | None) -> list[Any]:
    """[question index, cell index, answer, verdict 1/0/None, outcome index or None, (error)]."""
    index, qid = goal["index"], row["question_id"]
    if qid not in index:
        index[qid] = len(goal["questions"])
        refs = [str(r) for r in row.get("references") or []]
        marks = sorted({span for r in refs for span in reference_marks(source, r)}) if source else []
        goal["questions"].append(
            {"id": qid, "text": row.get("question") or "", "refs": refs, "marks": js_spans(source, marks)}
        )
    name = row_outcome(row)
    verdict = None if row.get("correct") is None else int(bool(row["correct"]))
    entry = [
        index[qid],
        cells[cell_of(row)],
        row.get("answer"),
        verdict,
        OUTCOMES.index(name) if name in OUTCOMES else None,
    ]
    return [*entry, row["error"]] if row.get("error") else entry


def _memories(
    memories: Sequence[Mapping[str, Any]], goals: dict[str, dict[str, Any]], cells: dict[Cell, int], sources: dict
) -> list[dict[str, Any]]:
    """What the memories kept, once per source and memory text (a goal-blind memory is shared by its context's
    goals); each goal's `memories` maps a cell to [index in that list, tokens kept, budget, (error)]."""
    kept: list[dict[str, Any]] = []
    index: dict[tuple[str, Any], int] = {}
    for i, m in enumerate(memories):
        if m["goal_id"] not in goals:
            continue
        key = (m["context_id"], m.get("memory_sha256") or i)
        if key not in index:
            index[key] = len(kept)
            kept.append(_kept(sources.get(m["context_id"]), m.get("memory")))
        entry = [index[key], m.get("retained_tokens"), m.get("budget")]
        goals[m["goal_id"]]["memories"][str(cells[cell_of(m)])] = [*entry, m["error"]] if m.get("error") else entry
    return kept


def _kept(source: str | None, memory: Any) -> dict[str, Any]:
    """`s`: the spans of the source the memory copies; `o`: its text found nowhere in the source (or all of it)."""
    if not isinstance(memory, str):
        return {"s": []}
    if source is None:
        return {"s": [], "o": memory} if memory else {"s": []}
    spans, missing = kept_spans(source, memory)
    return {"s": js_spans(source, spans), **({"o": "\n".join(missing)} if missing else {})}


def js_spans(source: str | None, spans: Iterable[tuple[int, int]]) -> list[int]:
    """Spans as one flat list of offsets in UTF-16 code units, as JavaScript indexes strings: a character beyond
    U+FFFF counts two.

    >>> js_spans("a😀b", [(2, 3)]), js_spans("数据", [(0, 1), (1, 2)])
    ([3, 4], [0, 1, 1, 2])
    """
    offsets = _utf16_offsets(source) if source else None
    if offsets is None:
        return [x for span in spans for x in span]
    return [offsets[x] for span in spans for x in span]


@functools.lru_cache(maxsize=64)  # one scan per source, not per memory of it
def _utf16_offsets(source: str) -> list[int] | None:
    """Each character's UTF-16 offset; None when every character is in the basic plane (offsets are indexes)."""
    if max(source) <= "\uffff":
        return None
    return list(itertools.accumulate((2 if c > "\uffff" else 1 for c in source), initial=0))
