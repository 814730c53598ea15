"""Other people's layouts: a column mapping onto the schema's names, and flat (one row per question) datasets.

gacc-hf's own layout has one row per (context, goal) group, its questions and gold as lists. A release may
name the columns otherwise (`text` for `context`, `user_goal` for `goal`) and may hold one row per
*question*. `columns` maps schema names to the data's names (`{"context": "text"}`, on the command line
`--columns context=text,goal=user_goal`); a flat dataset (a `question` column instead of `questions`) is
then grouped by `goal_id` into the schema's rows, its questions in row order. Everything is checked before
any work, and every problem is said in the user's own layout: the file and row (and line) of the flat row
at fault, the field by the data's own name. Problems are a mapping to a column the data lacks, rows of one
goal (or one context) that disagree on its text, a grouped-layout field in a flat row, a column the flat
layout does not have (named with the known name it is closest to), data in neither layout (one message with
the columns found and a mapping that would fix it, `gacc_hf.data.suggest`). IDs the data lacks are derived
from its text, and a missing `source` is empty (`gacc_hf.data.derived`).

The layout is the one most rows are in: a flat file with a stray `questions` key in one row stays flat,
and that row is named. A null `language` is no declaration (the language is detected, as for a row
without the key). A `references` value may be one string, a list of strings, or a string holding a JSON
list of strings (how a CSV or TSV cell holds several references: `["4", "four"]`).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import datasets

from gacc_hf.data.derived import FLAT_IDS, clashes, complete_grouped, derive_ids, missing_kinds, needs_completion
from gacc_hf.data.jsonl import FileRows, with_lines
from gacc_hf.data.schema import (
    DataSourceError,
    DataValidationError,
    Problem,
    as_dataset,
    find_problems,
    unknown_column,
)
from gacc_hf.data.suggest import FLAT, FLAT_REQUIRED, IDS, OPTIONAL, TARGETS, layout_error
from gacc_hf.text.hygiene import id_key

_ABSENT = object()  # a column a row does not have (unequal to any value, itself included only by identity)
_SHARED = ("context_id", "context", "goal", "source", "language")  # what the rows of one goal must agree on
_NESTED = re.compile(r"^(questions|gold)\[(\d+)\](?:\.(\w+))?")
_KNOWN_FLAT = (*FLAT, *OPTIONAL)
_log = logging.getLogger(__name__)


def parse_columns(text: str) -> dict[str, str]:
    """`context=text,goal=user_goal` as a mapping; DataSourceError naming a malformed or unknown entry.

    >>> parse_columns("context=text, goal=user_goal")
    {'context': 'text', 'goal': 'user_goal'}
    """
    mapping: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",")):
        target, sep, column = (x.strip() for x in part.partition("="))
        if not sep or not target or not column:
            raise DataSourceError(f"--columns {text!r}: {part!r} is not SCHEMA_NAME=DATA_COLUMN")
        if target in mapping:
            raise DataSourceError(f"--columns {text!r}: {target} is mapped twice")
        mapping[target] = column
    check_mapping(mapping)
    return mapping


def check_mapping(columns: Mapping[str, str]) -> None:
    """Refuse a mapping onto a name the schema does not have, or two schema names onto one column."""
    for target, column in columns.items():
        if target not in TARGETS:
            raise DataSourceError(f"columns: {target!r} is not a schema column; map one of {', '.join(TARGETS)}")
        if not isinstance(column, str) or not column:
            raise DataSourceError(f"columns: {target} must map to a column name (a string), got {column!r}")
    used = [c for t, c in columns.items() if not _own_id(columns, t)]
    if len(set(used)) < len(used):
        twice = sorted({c for c in used if used.count(c) > 1})
        raise DataSourceError(f"columns: the data column(s) {twice} are mapped to two schema names")


def _own_id(columns: Mapping[str, str], target: str) -> bool:
    """Whether `target` is an ID mapped to the column of its own text (`context_id=document` beside
    `context=document`): the ID is derived from that text, as when the data has no ID column."""
    return target in IDS and columns.get(target) == columns.get(target.removesuffix("_id"))


def rename(rows: Sequence[Any], columns: Mapping[str, str]) -> list[Any]:
    """The rows with the mapped columns renamed to schema names. A mapped column the data lacks is one Problem
    (row 0); one some rows lack, or a row that has both a mapped column and the schema name, a Problem per row."""
    check_mapping(columns)
    own_ids = [t for t in columns if _own_id(columns, t)]  # derived from the text: nothing to rename
    columns = {t: c for t, c in columns.items() if t not in own_ids}
    found = found_columns(rows)
    problems = [
        Problem(
            0,
            column,
            f"columns maps {target} to {column!r}, but the data has no such column "
            f"(its columns: {', '.join(found) or '(none)'})",
        )
        for target, column in columns.items()
        if column not in found
    ]
    back = {column: target for target, column in columns.items()}
    out: list[Any] = []
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            out.append(row)  # reported by the schema check
            continue
        for target, column in columns.items():
            if column in found and column not in row:
                problems.append(Problem(i, column, f"columns maps {target} to {column!r}, a column this row lacks"))
            elif target in row and column in row and target != column:
                problems.append(Problem(i, target, f"the row has both {target!r} and {column!r}, mapped to it"))
        for target in (t for t in own_ids if t in row):
            text = columns[target.removesuffix("_id")]
            problems.append(Problem(i, target, f"the row has {target!r}, which columns derives from {text!r}"))
        out.append({back.get(k, k): v for k, v in row.items()})
    if problems:
        raise DataValidationError(problems)
    return out


def found_columns(rows: Iterable[Any]) -> list[str]:
    """The columns of the rows, in first-seen order."""
    return list(dict.fromkeys(str(k) for row in rows if isinstance(row, Mapping) for k in row))


def is_grouped(rows: Sequence[Any]) -> bool:
    """Whether the rows are in gacc-hf's own layout: more of them hold a `questions` list than a `question`."""
    lists = sum(isinstance(r, Mapping) and "questions" in r for r in rows)
    return lists > 0 and lists >= sum(isinstance(r, Mapping) and "question" in r for r in rows)


def needs_mapping(rows: Sequence[Any]) -> bool:
    """Whether data with these rows is in another layout than gacc-hf's own, one row per group, or lacks
    a field that is derived or defaulted (`gacc_hf.data.derived`)."""
    if not any(isinstance(r, Mapping) for r in rows):
        return False
    return not is_grouped(rows) or needs_completion(rows)


@dataclass
class _Groups:
    """Flat rows grouped: the schema rows, the flat row of each group's questions, and what was wrong."""

    rows: list[dict[str, Any]]
    members: list[list[int]]
    problems: list[Problem]
    derived: Sequence[str] = ()  # the ID kinds derived from the content


def _references(value: Any) -> Any:
    """A flat row's references as a list: one string, a list, or a string holding a JSON list of strings."""
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            parsed = json.loads(value)
        except ValueError:
            return [value]
        return parsed if isinstance(parsed, list) and all(isinstance(r, str) for r in parsed) else [value]
    return [value] if isinstance(value, str) else value


def _missing(column: str) -> str:
    """The message of a column a flat row lacks; an ID other rows declare is derived only when none does."""
    if column in IDS:
        return f"missing column (other rows have {column}: give it in every row, or in none to derive it)"
    return "missing column"


def _row_problems(
    i: int, row: Mapping[str, Any], label: str | None, qids: dict[str, tuple[int, str]], derived: Sequence[str]
) -> list[Problem]:
    """What is wrong with one flat row by itself (and its question_id against those before); `derived`: the
    ID kinds derived from the content."""
    problems = [Problem(i, c, _missing(c), label) for c in FLAT if c not in row and c not in derived]
    problems += [
        Problem(
            i,
            key,
            "a field of the grouped layout in a flat row (one question per row: question_id, question, "
            "references); remove it",
            label,
        )
        for key in ("questions", "gold")
        if key in row
    ]
    if "goal_id" in row and label is None:
        problems.append(Problem(i, "goal_id", f"must be a string, got {type(row['goal_id']).__name__}"))
    qid = row.get("question_id")
    if isinstance(qid, str):
        first_row, first = qids.setdefault(id_key(qid), (i, qid))
        if first_row != i and "question_id" in derived:
            message = f"the same question as row {first_row}, under the same goal (their derived question_id {qid!r})"
            problems.append(Problem(i, "question", message, label))
        elif first_row != i:
            same = "" if first == qid else f" ({qid!r} differs from {first!r} only by case or Unicode normalisation)"
            problems.append(
                Problem(i, "question_id", f"duplicate question_id, first seen in row {first_row}{same}", label)
            )
    refs = _references(row.get("references", ""))
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        problems.append(Problem(i, "references", "must be a string or a list of strings", label))
    return problems


def _unknown_columns(rows: Sequence[Any]) -> list[Problem]:
    """Each column the flat layout does not have, named once, in the first row that has it."""
    first: dict[str, int] = {}
    for i, row in enumerate(rows):
        for name in row if isinstance(row, Mapping) else ():
            if name not in (*_KNOWN_FLAT, "questions", "gold"):  # a grouped field: said by `_row_problems`
                first.setdefault(str(name), i)
    return [Problem(i, name, unknown_column(name, _KNOWN_FLAT, "the flat layout")) for name, i in first.items()]


def _group(rows: Sequence[Any]) -> _Groups:
    """Group flat rows by `goal_id`, questions in row order, deriving the IDs no row has from the content.
    Every problem names the flat row; a row with a problem of its own is left out of the groups, so what is
    said about the groups is about the other rows."""
    derived = missing_kinds(rows, FLAT_IDS)
    rows, collisions = derive_ids(rows, derived)
    out = _Groups([], [], [*_unknown_columns(rows), *collisions], derived)
    by_goal: dict[str, int] = {}
    first_of_context: dict[Any, tuple[int, Any]] = {}
    qids: dict[str, tuple[int, str]] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            out.problems.append(Problem(i, "*", f"row must be an object, got {type(row).__name__}"))
            continue
        row = {k: v for k, v in row.items() if not (k == "language" and v is None)}  # null: no declaration
        label = row.get("goal_id") if isinstance(row.get("goal_id"), str) else None
        own = _row_problems(i, row, label, qids, derived)
        out.problems += own
        if own:
            continue
        cid, context = row["context_id"], row["context"]
        first_row, first_text = first_of_context.setdefault(cid, (i, context))
        if first_text != context:
            message = f"differs from the text of context_id {cid!r} in row {first_row}"
            out.problems.append(Problem(i, "context", message, label))
            continue
        out.problems += _join(i, row, rows, by_goal, out)
    return out


def _join(i: int, row: Mapping[str, Any], rows: Sequence[Any], by_goal: dict[str, int], out: _Groups) -> list[Problem]:
    """Add flat row `i` to its goal's group (a new one for a new goal_id); the fields it disagrees on."""
    gid = row["goal_id"]
    if gid not in by_goal:
        by_goal[gid] = len(out.rows)
        shared = {c: row[c] for c in _SHARED if c in row} | {"source": row.get("source", "")}
        out.rows.append(shared | {"goal_id": gid, "questions": [], "gold": []})
        out.members.append([])
    g = by_goal[gid]
    first = out.members[g][0] if out.members[g] else i
    first_row = {k: v for k, v in rows[first].items() if not (k == "language" and v is None)}
    differ = [f for f in _SHARED if f != "context" and row.get(f, _ABSENT) != first_row.get(f, _ABSENT)]
    if differ:
        return [
            Problem(
                i, f, f"differs from the {f} of goal_id {gid!r} in row {first}; the rows of one goal must agree", gid
            )
            for f in differ
        ]
    group = out.rows[g]
    group["questions"].append({"question_id": row["question_id"], "question": row["question"]})
    group["gold"].append({"question_id": row["question_id"], "references": _references(row["references"])})
    out.members[g].append(i)
    return []


def _flat(rows: Sequence[Any]) -> bool:
    """Whether the rows are flat; DataSourceError (`layout_error`) when in neither layout."""
    if is_grouped(rows):
        return False
    found = found_columns(rows)
    if all(c in found for c in FLAT_REQUIRED):
        return True
    raise layout_error(found)


def group_flat(rows: Sequence[Any]) -> list[dict[str, Any]]:
    """Group flat rows into schema rows by `goal_id`, questions in row order; every disagreement of the rows of
    one goal on its context, goal, source or language, or of one context on its text, is a Problem."""
    grouped = _group(rows)
    if grouped.problems:
        raise DataValidationError(grouped.problems)
    return grouped.rows


def to_schema_rows(rows: Sequence[Any], columns: Mapping[str, str] | None = None) -> list[Any]:
    """Rows in gacc-hf's own layout: mapped (`columns`), then grouped when flat; grouped rows get their defaults
    and derived IDs (`gacc_hf.data.derived`) and are otherwise left as they are for the schema check."""
    rows = rename(rows, columns) if columns else list(rows)
    if _flat(rows):
        return group_flat(rows)
    completed, _kinds, collisions = complete_grouped(rows)
    if collisions:
        raise DataValidationError(collisions)
    return completed


def _in_user_terms(p: Problem, members: Sequence[tuple[str, int]] | None, columns: Mapping[str, str]) -> Problem:
    """A problem of a schema row said in the data's own layout: a question's field in its flat row (`members`:
    the (file, row) of each question of the group; None for grouped data), every field by the data's name."""
    nested = _NESTED.match(p.field)
    if nested is None:
        return replace(p, field=columns.get(p.field, p.field))
    if members is None:
        return p
    kind, j, leaf = nested.group(1), int(nested.group(2)), nested.group(3)
    field = "question_id" if leaf == "question_id" else "question" if kind == "questions" else "references"
    file, row = members[j]
    return replace(p, file=file, row=row, field=columns.get(field, field))


def _located(problems: Iterable[Problem], origins: Sequence[tuple[str, int]]) -> list[Problem]:
    """Problems of rows counted over a split, put in the file (and the file's row) each row came from."""
    return [replace(p, file=origins[p.row][0], row=origins[p.row][1]) for p in problems]


def _split_rows(
    files: Sequence[FileRows], columns: Mapping[str, str]
) -> tuple[list[Any], list[list[tuple[str, int]] | None], list[Problem], Sequence[str]]:
    """One split's rows in the schema's layout, the (file, row) of each group's questions (None for grouped
    data), the problems of the renaming and grouping, located in the files, and the ID kinds derived."""
    rows = [r for f in files for r in f.rows]
    origins = [o for f in files for o in f.origins]
    try:
        renamed = rename(rows, columns) if columns else rows
    except DataValidationError as exc:
        return [], [], _located(exc.problems, origins), ()
    if not _flat(renamed):
        completed, kinds, collisions = complete_grouped(renamed)
        problems = [_in_user_terms(p, None, columns) for p in _located(collisions, origins)]
        return completed, [None] * len(completed), problems, kinds
    grouped = _group(renamed)
    problems = [_in_user_terms(p, None, columns) for p in _located(grouped.problems, origins)]
    return grouped.rows, [[origins[i] for i in m] for m in grouped.members], problems, grouped.derived


def mapped_splits(read: Mapping[str, Sequence[FileRows]], columns: Mapping[str, str] | None) -> datasets.DatasetDict:
    """Rows by split put in gacc-hf's layout (`to_schema_rows`, IDs derived where a split has none) and checked
    against the schema (IDs unique over all splits), as a DatasetDict. Every problem is said in the data's own
    layout (`_in_user_terms`): its file, row, line and column."""
    columns = columns or {}
    rows: dict[str, list[Any]] = {}
    problems: list[Problem] = []
    origins: list[tuple[str, int]] = []
    members: dict[tuple[str, int], list[tuple[str, int]] | None] = {}
    derived: list[Sequence[str]] = []
    for split, files in read.items():
        try:
            rows[split], groups, found, kinds = _split_rows(files, columns)
        except DataSourceError as exc:
            raise type(exc)(f"{', '.join(f.path for f in files)}: {exc}") from None
        problems += found
        own = [o for f in files for o in f.origins]
        for g, group in enumerate(groups):
            origins.append(group[0] if group else own[g])
            members[origins[-1]] = group
            derived.append(kinds)
    every = [r for split in rows.values() for r in split]
    checked = clashes(every, derived, lambda i: f"{origins[i][0]} row {origins[i][1]}")
    checked = [replace(p, file=origins[p.row][0], row=origins[p.row][1]) for p in checked]
    clashing = {(p.file, p.row, p.field) for p in checked}
    found = find_problems(every, origins=origins)
    checked += [p for p in found if (p.file, p.row, p.field) not in clashing]  # a clash is no duplicate too
    problems += [_in_user_terms(p, members.get((p.file or "", p.row)), columns) for p in checked]
    problems = with_lines(problems, [f for files in read.values() for f in files])
    if problems:
        raise DataValidationError(problems)
    _say_derived(sorted({k for kinds in derived for k in kinds}, key=FLAT_IDS.index))
    return datasets.DatasetDict({split: as_dataset(r) for split, r in rows.items()})


def _say_derived(kinds: Sequence[str]) -> None:
    """The one line saying which IDs were derived from the content (none: nothing said)."""
    if kinds:
        _log.info(
            "data: no %s in the data: derived from the content (a short sha256 of the texts, the same in every "
            "run and file; docs/data.md)",
            ", ".join(kinds),
        )


def mapping_problems(read: Mapping[str, Sequence[FileRows]], columns: Mapping[str, str] | None) -> list[Problem]:
    """What `mapped_splits` would refuse, as a list (`gacc data validate`): rows and fields, or the layout."""
    try:
        mapped_splits(read, columns)
    except DataValidationError as exc:
        return exc.problems
    except DataSourceError as exc:
        return [Problem(0, "*", str(exc))]
    return []
