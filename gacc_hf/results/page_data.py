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

import collections
import contextlib
import functools
import gc
import hashlib
import itertools
import json
import operator
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from gacc_hf.protocol import is_ceiling
from gacc_hf.results.layout import RunResults
from gacc_hf.scoring.outcomes import OUTCOMES, outcome
from gacc_hf.scoring.settings import SETTING, setting_label, setting_of, settings_of
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
    with collector_paused():
        sources = sources_of(run.memories)
        memory_kinds, memory_rows = _kinds(run.memories, _MEMORY_KIND)
        answer_kinds, answer_rows = _kinds(run.answers, _ANSWER_KIND)
        cells, ceilings, cell_index = _cells([*memory_rows.values(), *answer_rows.values()])
        settings = settings_of(answer_rows.values())
        several = len(settings) > 1  # then each goal lists its answers' settings (`settings`, in answer order)
        judged = {
            kind: (cell, *_judged(row), settings.index(setting_of(row)) if several else None, row.get("error"))  # type: ignore[arg-type]
            for (kind, row), cell in zip(answer_rows.items(), cell_index[len(memory_rows) :], strict=True)
        }
        goals = _goals(run.answers, list(map(judged.__getitem__, answer_kinds)), sources, several)
        at = dict(zip(memory_rows, cell_index[: len(memory_rows)], strict=True))
        kept = _memories(run.memories, list(map(at.__getitem__, memory_kinds)), goals, sources)
        return {
            "run": run_key(run.config),
            **(
                {"settings": [setting_label(s) for s in settings], "roles": [list(s) for s in settings]}
                if several
                else {}
            ),
            "cells": [[*cell, cell in ceilings] for cell in cells],
            "outcomes": list(OUTCOMES),
            "kept": kept,
            "sources": {
                cid: sources[cid] for cid in dict.fromkeys(g["context"] for g in goals.values()) if cid in sources
            },
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


# A release-size run has some 240,000 answer rows, and a Python call per row and field was most of the page's
# time (docs/performance.md). So the rows are read a column at a time (`map` over an `operator.itemgetter`), and
# what an answer's entry holds besides its question and text is worked out once per kind of row: the columns of
# `_ANSWER_KIND` (a few hundred distinct values in a run: cells times verdicts and outcomes times settings).
_UNSET = object()  # a column a row lacks (the rows of an older folder), told apart from a None it holds
_QUESTION_KEY = operator.itemgetter("goal_id", "question_id")
#: what `cell_of` and `is_ceiling` read
_MEMORY_KIND = ("compressor", "condition", "ratio", "ceiling")
#: what an answer's cell, verdict, outcome (`row_outcome`), setting (`setting_of`) and error are read from
_ANSWER_KIND = (*_MEMORY_KIND, "outcome", "correct", "evidence", *SETTING, "error")
_CELL, _VERDICT, _OUTCOME, _SETTING, _ERROR = map(operator.itemgetter, range(5))


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while the page's data are built (and written): they are some 300,000 new
    lists that hold no cycle, and each full collection their making sets off walks every object of the run's
    rows, which at the release's size took longer than building the data. Nested use is fine: the outermost
    turns the collector back on, and only where it was on."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _fields(rows: Sequence[Mapping[str, Any]], names: tuple[str, ...], default: Any = None) -> list[Any]:
    """Each row's value of the one name, or tuple of values of several; `default` where a row lacks one."""
    try:
        return list(map(operator.itemgetter(*names), rows))
    except KeyError:  # a row without one of the columns
        if len(names) == 1:
            return [row.get(names[0], default) for row in rows]
        return [tuple(row.get(name, default) for name in names) for row in rows]


def _kinds(
    rows: Sequence[Mapping[str, Any]], columns: tuple[str, ...]
) -> tuple[list[tuple[Any, ...]], dict[tuple[Any, ...], dict[str, Any]]]:
    """Each row's values of `columns` (its kind), and each distinct kind in first-seen order as a row of those
    columns alone (without those a row lacks), for the functions that read only them."""
    kinds = _fields(rows, columns, _UNSET)
    return kinds, {k: {c: v for c, v in zip(columns, k, strict=True) if v is not _UNSET} for k in dict.fromkeys(kinds)}


def _cells(rows: Iterable[Mapping[str, Any]]) -> tuple[dict[Cell, int], set[Cell], list[int]]:
    """The cells (`cell_of`) of the rows in first-seen order with their indexes, those that are bounds
    (`is_ceiling`), and each row's cell index."""
    cells: dict[Cell, int] = {}
    ceilings: set[Cell] = set()
    index = []
    for row in rows:
        cell = cell_of(row)
        index.append(cells.setdefault(cell, len(cells)))
        if is_ceiling(row):
            ceilings.add(cell)
    return cells, ceilings, index


def _judged(row: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """An answer's verdict 1/0/None and index in OUTCOMES (`row_outcome`) or None."""
    name = row_outcome(row)
    return None if row.get("correct") is None else int(bool(row["correct"])), OUTCOMES.index(
        name
    ) if name in OUTCOMES else None


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
    answers: Sequence[Mapping[str, Any]], judged: list[tuple[Any, ...]], sources: Mapping[str, str], several: bool
) -> dict[str, dict[str, Any]]:
    """The goals in the order of the answer rows, each with its questions (in first-seen order) and answers
    (`_answers`; `judged`: each row's (cell, verdict, outcome, setting, error)); in a run of `several` settings,
    each answer's setting."""
    questions = list(map(_QUESTION_KEY, answers))
    firsts: dict[tuple[str, str], Mapping[str, Any]] = {}
    collections.deque(map(firsts.setdefault, questions, answers), maxlen=0)  # each question's first row, in order
    goals: dict[str, dict[str, Any]] = {}
    position: dict[tuple[str, str], int] = {}
    for key, row in firsts.items():
        goal = goals.get(key[0]) or goals.setdefault(key[0], _new_goal(row, several))
        position[key] = len(goal["questions"])
        goal["questions"].append(_question(row, sources.get(row["context_id"])))
    add = {gid: goal["answers"].append for gid, goal in goals.items()}
    for (gid, _), entry in zip(questions, _answers(answers, map(position.__getitem__, questions), judged), strict=True):
        add[gid](entry)
    if several:
        add = {gid: goal["settings"].append for gid, goal in goals.items()}
        for (gid, _), index in zip(questions, map(_SETTING, judged), strict=True):
            add[gid](index)
    return goals


def _question(row: Mapping[str, Any], source: str | None) -> dict[str, Any]:
    """A question as its first answer row states it, with where its references occur in the source."""
    refs = [str(r) for r in row.get("references") or []]
    marks = sorted({span for r in refs for span in reference_marks(source, r)}) if source else []
    return {"id": row["question_id"], "text": row.get("question") or "", "refs": refs, "marks": js_spans(source, marks)}


def _answers(
    answers: Sequence[Mapping[str, Any]], questions: Iterable[int], judged: list[tuple[Any, ...]]
) -> list[list[Any]]:
    """Per answer row [question index, cell index, answer, verdict 1/0/None, outcome index or None, (error)]."""
    texts = _fields(answers, ("answer",))
    columns = zip(questions, map(_CELL, judged), texts, map(_VERDICT, judged), map(_OUTCOME, judged), strict=True)
    entries = list(map(list, columns))
    for i in itertools.compress(itertools.count(), map(_ERROR, judged)):
        entries[i].append(judged[i][4])
    return entries


def _memories(
    memories: Sequence[Mapping[str, Any]],
    cells: list[int],
    goals: dict[str, dict[str, Any]],
    sources: Mapping[str, str],
) -> list[dict[str, Any]]:
    """What the memories kept, once per source and memory text (a goal-blind memory is shared by its context's
    goals); each goal's `memories` maps a cell (`cells`: each row's index) to [index in that list, tokens kept,
    budget, (error)]."""
    kept: list[dict[str, Any]] = []
    index: dict[tuple[str, Any], int] = {}
    scanned: dict[tuple[str, str], dict[str, Any]] = {}  # one scan of a text that several rows hold
    names = {cell: str(cell) for cell in set(cells)}
    for i, (m, cell) in enumerate(zip(memories, cells, strict=True)):
        goal = goals.get(m["goal_id"])
        if goal is None:
            continue
        key = (m["context_id"], m.get("memory_sha256") or i)
        at = index.get(key)
        if at is None:
            at = index[key] = len(kept)
            memory = m.get("memory")
            if isinstance(memory, str):
                text = (m["context_id"], memory)
                if text not in scanned:
                    scanned[text] = _kept(sources.get(m["context_id"]), memory)
                kept.append(scanned[text])
            else:
                kept.append(_kept(sources.get(m["context_id"]), memory))
        entry = [at, m.get("retained_tokens"), m.get("budget")]
        if m.get("error"):
            entry.append(m["error"])
        goal["memories"][names[cell]] = entry
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
