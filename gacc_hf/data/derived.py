"""IDs derived from content, for data that has no ID columns, and the defaults of the other optional fields.

Many releases have only the texts: a context, a goal, a question, its answers. The schema's IDs are then
derived from the content, the same way in every run and file, so a rerun hits the same cache entries and a
row keeps its ID wherever it is stored:

- `context_id`: `ctx-` and the first `ID_HEX` hex digits of the sha256 of the context text;
- `goal_id`: `goal-` and those of the context and goal texts together (one goal text under two contexts is
  two goals);
- `question_id` (one row per question only; a grouped row's gold names its questions by their IDs):
  `q-` and those of the goal's ID and the question text.

An ID kind is derived for the rows of a split when none of them has it (`context_id=document` mapped beside
`context=document` means the same). IDs are row content: they enter the data's fingerprint like any text.
Two different texts whose short hashes agree would merge two contexts (or goals) without a word, so that
is refused naming both rows; so is a derived ID that equals one declared in another split
(`clashes`). A missing `source` is the empty string, in both layouts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gacc_hf.data.schema import Problem

ID_HEX = 16  # 64 bits: a collision among a million texts has odds of about 3 in 100 million, and is refused
PREFIXES = {"context_id": "ctx-", "goal_id": "goal-", "question_id": "q-"}
# what each derived ID hashes, and the field named when two different contents share a short hash
HASHED = {"context_id": ("context",), "goal_id": ("context", "goal"), "question_id": ("goal_id", "question")}
GROUPED_IDS = ("context_id", "goal_id")
FLAT_IDS = (*GROUPED_IDS, "question_id")


def content_id(kind: str, *parts: Any) -> str:
    """The ID of `kind` derived from the texts `parts` (a value that is not text is hashed by its repr; the
    schema check refuses it anyway).

    >>> content_id("context_id", "Movers pack up to four boxes per person.")
    'ctx-b2b405054932aeb6'
    """
    text = json.dumps([p if isinstance(p, str) else repr(p) for p in parts], ensure_ascii=False)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return PREFIXES[kind] + digest[:ID_HEX]


def missing_kinds(rows: Sequence[Any], kinds: Sequence[str]) -> list[str]:
    """The ID kinds no row has: those to derive."""
    return [k for k in kinds if not any(isinstance(r, Mapping) and k in r for r in rows)]


class _Seen:
    """The content behind each derived ID so far: a second content under one ID is a short-hash collision."""

    def __init__(self) -> None:
        self.first: dict[tuple[str, str], tuple[int, tuple[Any, ...]]] = {}

    def problem(self, i: int, kind: str, identifier: str, parts: tuple[Any, ...]) -> Problem | None:
        first_row, first = self.first.setdefault((kind, identifier), (i, parts))
        if first == parts:
            return None
        what = " and ".join(HASHED[kind])
        return Problem(
            i,
            HASHED[kind][-1],
            f"its derived {kind} {identifier!r} is also the one derived from a different {what} in row "
            f"{first_row}: two texts share a short hash ({ID_HEX} hex digits of sha256); give these rows "
            f"{kind}s of your own",
        )


def derive_ids(rows: Sequence[Any], kinds: Sequence[str]) -> tuple[list[Any], list[Problem]]:
    """The rows with the IDs of `kinds` derived from their content (in `FLAT_IDS` order, so a question's ID
    hashes its goal's), and the short-hash collisions found, each naming both rows."""
    seen, problems, out = _Seen(), [], []
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            out.append(row)
            continue
        row = dict(row)
        for kind in (k for k in FLAT_IDS if k in kinds):
            parts = tuple(row.get(f) for f in HASHED[kind])
            if any(f not in row for f in HASHED[kind]):
                continue  # a missing text: the row's own problem, reported where it is checked
            row[kind] = content_id(kind, *parts)
            if problem := seen.problem(i, kind, row[kind], parts):
                problems.append(problem)
        out.append(row)
    return out, problems


def complete_grouped(rows: Sequence[Any]) -> tuple[list[Any], list[str], list[Problem]]:
    """Grouped rows with a missing `source` made empty and the ID kinds no row has derived; the kinds derived
    and the short-hash collisions."""
    kinds = missing_kinds(rows, GROUPED_IDS)
    sourced = [{"source": "", **r} if isinstance(r, Mapping) else r for r in rows]
    derived, problems = derive_ids(sourced, kinds)
    return derived, kinds, problems


def needs_completion(rows: Sequence[Any]) -> bool:
    """Whether some grouped row lacks a field this module fills in."""
    return any(isinstance(r, Mapping) and any(f not in r for f in ("source", *GROUPED_IDS)) for r in rows)


def _ids(row: Mapping[str, Any], kind: str) -> list[tuple[str, str]]:
    """(field, ID) of one kind in a grouped row: its own, or each of its questions'."""
    if kind != "question_id":
        return [(kind, row[kind])] if isinstance(row.get(kind), str) else []
    questions = row.get("questions")
    entries = questions if isinstance(questions, list) else []
    return [
        (f"questions[{j}].question_id", q["question_id"])
        for j, q in enumerate(entries)
        if isinstance(q, Mapping) and isinstance(q.get("question_id"), str)
    ]


def clashes(
    rows: Sequence[Mapping[str, Any]], derived: Sequence[Sequence[str]], where: Callable[[int], str]
) -> list[Problem]:
    """A derived ID equal to a declared one (splits may differ in which IDs they declare): a Problem on the
    derived row, naming the declaring row. `derived[i]` are the kinds derived for row `i`."""
    declared: dict[tuple[str, str], int] = {}
    for i, row in enumerate(rows):
        for kind in (k for k in FLAT_IDS if k not in derived[i]):
            for _field, identifier in _ids(row, kind):
                declared.setdefault((kind, identifier), i)
    problems = []
    for i, row in enumerate(rows):
        for kind in derived[i]:
            for field, identifier in _ids(row, kind):
                if (kind, identifier) in declared:
                    first = where(declared[(kind, identifier)])
                    message = (
                        f"its {kind} {identifier!r}, derived from its content, equals the {kind} declared in "
                        f"{first}; declare {kind}s in every split or in none"
                    )
                    problems.append(Problem(i, field, message))
    return problems
