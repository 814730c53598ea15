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
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from gacc_hf.protocol import is_ceiling
from gacc_hf.results.layout import RunResults
from gacc_hf.scoring.outcomes import OUTCOMES, outcome
from gacc_hf.scoring.settings import Setting, setting_label, setting_of, settings_of
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
    cells, ceilings, cell_at = _cells([*run.memories, *run.answers])
    settings = settings_of(run.answers)
    several = len(settings) > 1  # then each goal lists its answers' settings (`settings`, in answer order)
    goals = _goals(run.answers, cell_at, sources, settings if several else None)
    kept = _memories(run.memories, goals, cell_at, sources)
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


# The rows are read a column at a time (`map` over `operator` getters) and each distinct value of a column is
# worked out once: a release-size run has some 240,000 answer rows, and a call per row and field is most of the
# page's time (docs/performance.md).
_UNSET = object()  # what `get` gives for a column a row lacks, told apart from a None it holds
_CELL_KEY = operator.itemgetter("compressor", "condition", "ratio")
_QUESTION_KEY = operator.itemgetter("goal_id", "question_id")


def _column(rows: Sequence[Mapping[str, Any]], name: str, default: Any = None) -> list[Any]:
    return list(map(operator.methodcaller("get", name, default), rows))


def _each(function: Callable[[Any], Any], values: Iterable[Any]) -> list[Any]:
    """`function` of each value, called once per distinct value (a column holds few: verdicts, outcomes)."""
    values = list(values)
    try:
        once = {value: function(value) for value in set(values)}
    except TypeError:  # a value that cannot be a key: one call each
        return list(map(function, values))
    return list(map(once.__getitem__, values))


def _cells(rows: Sequence[Mapping[str, Any]]) -> tuple[dict[Cell, int], set[Cell], dict[tuple[Any, ...], int]]:
    """The cells (`cell_of`) in first-seen order with their indexes, those that are bounds (`is_ceiling`), and
    the index of each (compressor, condition, ratio) as rows hold it, to look rows up by."""
    flags = dict(
        zip(zip(map(_CELL_KEY, rows), _column(rows, "ceiling", _UNSET), strict=True), rows, strict=True)
    )  # a row of each
    cells: dict[Cell, int] = {}
    ceilings: set[Cell] = set()
    cell_at: dict[tuple[Any, ...], int] = {}
    for (key, _), row in flags.items():
        cell = cell_of(row)
        cell_at[key] = cells.setdefault(cell, len(cells))
        if is_ceiling(row):
            ceilings.add(cell)
    return cells, ceilings, cell_at


def _new_goal(row: Mapping[str, Any], several: bool = False) -> dict[str, Any]:
    return {
        "context": row["context_id"],
        "language": row.get("language") or "",
        "questions": [],
        "memories": {},
        "answers": [],
        **({"settings": []} if several else {}),
    }


def _goals(
    answers: Sequence[Mapping[str, Any]],
    cell_at: dict[tuple[Any, ...], int],
    sources: Mapping[str, str],
    settings: list[Setting] | None,
) -> dict[str, dict[str, Any]]:
    """The goals in the order of the answer rows, each with its questions (in first-seen order) and answers
    (`_answers`); with `settings` (a run of several), each answer's index in them."""
    questions = list(map(_QUESTION_KEY, answers))
    firsts = dict(
        zip(reversed(questions), reversed(answers), strict=True)
    )  # each question's first row: the last one written
    goals: dict[str, dict[str, Any]] = {}
    position: dict[tuple[str, str], int] = {}
    for key in dict.fromkeys(questions):
        row = firsts[key]
        goal = goals.get(key[0]) or goals.setdefault(key[0], _new_goal(row, settings is not None))
        position[key] = len(goal["questions"])
        goal["questions"].append(_question(row, sources.get(row["context_id"])))
    entries = _answers(answers, map(position.__getitem__, questions), cell_at)
    add = {gid: goal["answers"].append for gid, goal in goals.items()}
    for (gid, _), entry in zip(questions, entries, strict=True):
        add[gid](entry)
    if settings is not None:
        add = {gid: goal["settings"].append for gid, goal in goals.items()}
        for (gid, _), index in zip(questions, _each(settings.index, map(setting_of, answers)), strict=True):
            add[gid](index)
    return goals


def _question(row: Mapping[str, Any], source: str | None) -> dict[str, Any]:
    """A question as its first answer row states it, with where its references occur in the source."""
    refs = [str(r) for r in row.get("references") or []]
    marks = sorted({span for r in refs for span in reference_marks(source, r)}) if source else []
    return {"id": row["question_id"], "text": row.get("question") or "", "refs": refs, "marks": js_spans(source, marks)}


def _answers(
    answers: Sequence[Mapping[str, Any]], questions: Iterable[int], cell_at: dict[tuple[Any, ...], int]
) -> list[list[Any]]:
    """Per answer row [question index, cell index, answer, verdict 1/0/None, outcome index or None, (error)]."""
    corrects = _column(answers, "correct")
    outcomes = zip(_column(answers, "outcome", _UNSET), corrects, _column(answers, "evidence"), strict=True)
    entries = list(
        map(
            list,
            zip(
                questions,
                map(cell_at.__getitem__, map(_CELL_KEY, answers)),
                _column(answers, "answer"),
                _each(_verdict, corrects),
                _each(_outcome_index, outcomes),
                strict=True,
            ),
        )
    )
    for i in itertools.compress(itertools.count(), _column(answers, "error")):
        entries[i].append(answers[i]["error"])
    return entries


def _verdict(correct: Any) -> int | None:
    return None if correct is None else int(bool(correct))


def _outcome_index(recorded: tuple[Any, Any, Any]) -> int | None:
    """The index in OUTCOMES of (`outcome` column or `_UNSET`, verdict, evidence flag): `row_outcome`'s."""
    name, correct, evidence = recorded
    name = outcome(correct, evidence) if name is _UNSET else name
    return OUTCOMES.index(name) if name in OUTCOMES else None


def _memories(
    memories: Sequence[Mapping[str, Any]],
    goals: dict[str, dict[str, Any]],
    cell_at: dict[tuple[Any, ...], int],
    sources: Mapping[str, str],
) -> list[dict[str, Any]]:
    """What the memories kept, once per source and memory text (a goal-blind memory is shared by its context's
    goals); each goal's `memories` maps a cell to [index in that list, tokens kept, budget, (error)]."""
    kept: list[dict[str, Any]] = []
    index: dict[tuple[str, Any], int] = {}
    scanned: dict[tuple[str, str], dict[str, Any]] = {}  # one scan of a text that several rows hold
    names = {i: str(i) for i in cell_at.values()}
    for i, m in enumerate(memories):
        goal = goals.get(m["goal_id"])
        if goal is None:
            continue
        key = (m["context_id"], m.get("memory_sha256") or i)
        if key not in index:
            index[key] = len(kept)
            memory = m.get("memory")
            if isinstance(memory, str):
                text = (m["context_id"], memory)
                if text not in scanned:
                    scanned[text] = _kept(sources.get(m["context_id"]), memory)
                kept.append(scanned[text])
            else:
                kept.append(_kept(sources.get(m["context_id"]), memory))
        entry = [index[key], m.get("retained_tokens"), m.get("budget")]
        goal["memories"][names[cell_at[_CELL_KEY(m)]]] = [*entry, m["error"]] if m.get("error") else entry
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
