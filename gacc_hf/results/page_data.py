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
import functools
import hashlib
import itertools
import json
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from gacc_hf.protocol import is_ceiling
from gacc_hf.results.layout import RunResults
from gacc_hf.scoring.groups import grouped_by
from gacc_hf.scoring.outcomes import OUTCOMES, outcome
from gacc_hf.scoring.settings import SETTING, Setting, setting_label, setting_of, settings_of
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
    grid = _Grid()
    memory_cells = _Kinds(_MEMORY_KIND, grid.index).of(run.memories)
    kinds = _Kinds(_ANSWER_KIND, lambda row: (grid.index(row), *_judged(row), setting_of(row), row.get("error")))
    judged = kinds.of(run.answers)
    settings = settings_of(kinds.rows)
    several = len(settings) > 1  # then each goal lists its answers' settings (`settings`, in answer order)
    goals = _goals(run.answers, judged, sources, settings if several else None)
    kept = _memories(run.memories, memory_cells, goals, sources)
    return {
        "run": run_key(run.config),
        **({"settings": [setting_label(s) for s in settings], "roles": [list(s) for s in settings]} if several else {}),
        "cells": [[*cell, cell in grid.ceilings] for cell in grid.cells],
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


# A release-size run has some 240,000 answer rows, and a Python call per row and field was most of the page's
# time (`benchmarks/page.py`). So the rows are read a column at a time (`map` over an `operator.itemgetter`), and
# what an answer's entry holds besides its question and text is worked out once per kind of row: the columns of
# `_ANSWER_KIND` (a few hundred distinct values in a run: cells times verdicts and outcomes times settings).
_UNSET = object()  # a column a row lacks (the rows of an older folder), told apart from a None it holds
_QUESTION_KEY = operator.itemgetter("goal_id", "question_id")
_GOAL_OF = operator.itemgetter(0)  # of a question's key
#: what `cell_of` and `is_ceiling` read
_MEMORY_KIND = ("compressor", "condition", "ratio", "ceiling")
#: what an answer's cell, verdict, outcome (`row_outcome`), setting (`setting_of`) and error are read from
_ANSWER_KIND = (*_MEMORY_KIND, "outcome", "correct", "evidence", *SETTING, "error")
_CELL, _VERDICT, _OUTCOME, _SETTING, _ERROR = map(operator.itemgetter, range(5))
#: what a memory's entry is made of, besides its cell and error (a column a ledger may lack, so read apart)
_MEMORY_ROW = ("goal_id", "context_id", "memory_sha256", "memory", "retained_tokens", "budget")


def _fields(rows: Sequence[Mapping[str, Any]], names: tuple[str, ...], default: Any = None) -> list[Any]:
    """Each row's value of the one name, or tuple of values of several; `default` where a row lacks one."""
    try:
        return list(map(operator.itemgetter(*names), rows))
    except KeyError:  # a row without one of the columns: read column by column, each as fast as it can be
        if len(names) > 1:
            return list(zip(*(_fields(rows, (name,), default) for name in names), strict=True))
        return [row.get(names[0], default) for row in rows]


class _Kinds(dict[tuple[Any, ...], Any]):
    """What `work` makes of each kind of row (its values of `columns`), worked out on the kind's first lookup
    (so in first-seen order) from a row of those columns alone, without those the row lacks; `rows` holds
    those rows."""

    def __init__(self, columns: tuple[str, ...], work: Callable[[dict[str, Any]], Any]) -> None:
        super().__init__()
        self.columns, self.work, self.rows = columns, work, []

    def __missing__(self, kind: tuple[Any, ...]) -> Any:
        row = {c: v for c, v in zip(self.columns, kind, strict=True) if v is not _UNSET}
        self.rows.append(row)
        self[kind] = value = self.work(row)
        return value

    def of(self, rows: Sequence[Mapping[str, Any]]) -> list[Any]:
        """What `work` makes of each row's kind: one lookup a row, one call a kind."""
        return list(map(self.__getitem__, _fields(rows, self.columns, _UNSET)))


class _Grid:
    """The cells (`cell_of`) in first-seen order with their indexes, and those that are bounds (`is_ceiling`)."""

    def __init__(self) -> None:
        self.cells: dict[Cell, int] = {}
        self.ceilings: set[Cell] = set()

    def index(self, row: Mapping[str, Any]) -> int:
        cell = cell_of(row)
        if is_ceiling(row):
            self.ceilings.add(cell)
        return self.cells.setdefault(cell, len(self.cells))


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
    answers: Sequence[Mapping[str, Any]],
    judged: list[tuple[Any, ...]],
    sources: Mapping[str, str],
    settings: list[Setting] | None,
) -> dict[str, dict[str, Any]]:
    """The goals in the order of the answer rows, each with its questions (in first-seen order) and answers
    (`_answers`; `judged`: each row's (cell, verdict, outcome, setting, error)); with `settings` (a run of
    several), each answer's index in them."""
    questions = list(map(_QUESTION_KEY, answers))
    firsts: dict[tuple[str, str], Mapping[str, Any]] = {}
    collections.deque(map(firsts.setdefault, questions, answers), maxlen=0)  # each question's first row, in order
    goals: dict[str, dict[str, Any]] = {}
    position: dict[tuple[str, str], int] = {}
    for key, row in firsts.items():
        goal = goals.get(key[0]) or goals.setdefault(key[0], _new_goal(row, settings is not None))
        position[key] = len(goal["questions"])
        goal["questions"].append(_question(row, sources.get(row["context_id"])))
    entries = _answers(answers, map(position.__getitem__, questions), judged)
    for gid, mine in grouped_by(map(_GOAL_OF, questions), entries).items():  # each goal's, in row order
        goals[gid]["answers"] = mine
    if settings is not None:
        at = {setting: settings.index(setting) for setting in set(map(_SETTING, judged))}
        for gid, mine in grouped_by(map(_GOAL_OF, questions), map(at.__getitem__, map(_SETTING, judged))).items():
            goals[gid]["settings"] = mine
    return goals


def _question(row: Mapping[str, Any], source: str | None) -> dict[str, Any]:
    """A question as its first answer row states it, with where its references occur in the source."""
    refs = [str(r) for r in row.get("references") or []]
    marks = list(_marks(source, tuple(refs))) if source else []
    return {"id": row["question_id"], "text": row.get("question") or "", "refs": refs, "marks": marks}


@functools.lru_cache(maxsize=16_384)  # the runs of a board share their data: a question's marks are found once
def _marks(source: str, refs: tuple[str, ...]) -> tuple[int, ...]:
    """Where the references occur in the source, as `js_spans` gives them."""
    return tuple(js_spans(source, sorted({span for r in refs for span in reference_marks(source, r)})))


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
    scanned = _Kinds(("context_id", "memory"), lambda m: _kept(sources.get(m["context_id"]), m.get("memory")))
    stores = {gid: goal["memories"] for gid, goal in goals.items()}
    names = {cell: str(cell) for cell in set(cells)}
    rows = zip(_fields(memories, _MEMORY_ROW), _fields(memories, ("error",)), cells, strict=True)
    for i, ((gid, cid, sha, memory, tokens, budget), error, cell) in enumerate(rows):
        store = stores.get(gid)
        if store is None:  # a memory of a goal without answers
            continue
        key = (cid, sha or i)
        at = index.get(key)
        if at is None:
            at = index[key] = len(kept)
            kept.append(scanned[cid, memory])  # one scan of a text that several rows hold
        store[names[cell]] = [at, tokens, budget, error] if error else [at, tokens, budget]
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
