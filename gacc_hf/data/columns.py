"""Other people's layouts: a column mapping onto the schema's names, and flat (one row per question) datasets.

gacc-hf's own layout has one row per (context, goal) group, its questions and gold as lists. A release may
name the columns otherwise (`text` for `context`, `user_goal` for `goal`) and may hold one row per
*question*. `columns` maps schema names to the data's names (`{"context": "text"}`, on the command line
`--columns context=text,goal=user_goal`); a flat dataset (a `question` column instead of `questions`) is
then grouped by `goal_id` into the schema's rows, its questions in row order. Everything is checked before
any work, and every problem names the row and the field: a mapping to a column the data lacks, rows of one
goal (or one context) that disagree on its text, data in neither layout (one message with the columns found
and a mapping that would fix it).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import datasets

from gacc_hf.data.schema import DataSourceError, DataValidationError, Problem, as_dataset, find_problems

GROUPED = ("context_id", "source", "context", "goal_id", "goal", "questions", "gold")
FLAT = ("context_id", "context", "goal_id", "goal", "question_id", "question", "references")
OPTIONAL = ("source", "language")  # a flat row may lack them (source: empty; language: detected)
_ABSENT = object()  # a column a row does not have (unequal to any value, itself included only by identity)
TARGETS = tuple(dict.fromkeys((*GROUPED, *FLAT, *OPTIONAL)))
# what other datasets commonly call a schema column, for the suggested mapping
_SYNONYMS: dict[str, tuple[str, ...]] = {
    "context": ("text", "passage", "document", "doc", "source_text", "article", "content"),
    "goal": ("user_goal", "intent", "task", "objective", "instruction"),
    "question": ("query", "q", "prompt"),
    "references": ("answers", "answer", "gold_answers", "reference", "gold", "targets"),
    "context_id": ("doc_id", "text_id", "passage_id", "document_id", "cid"),
    "goal_id": ("task_id", "intent_id", "gid"),
    "question_id": ("qid", "query_id", "id"),
    "source": ("domain", "genre", "kind", "category"),
    "language": ("lang", "locale"),
}


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
    used = [c for c in columns.values()]
    if len(set(used)) < len(used):
        twice = sorted({c for c in used if used.count(c) > 1})
        raise DataSourceError(f"columns: the data column(s) {twice} are mapped to two schema names")


def rename(rows: Sequence[Any], columns: Mapping[str, str]) -> list[Any]:
    """The rows with the mapped columns renamed to schema names. A mapped column the data lacks is one Problem
    (row 0); one some rows lack, or a row that has both a mapped column and the schema name, a Problem per row."""
    check_mapping(columns)
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
        out.append({back.get(k, k): v for k, v in row.items()})
    if problems:
        raise DataValidationError(problems)
    return out


def found_columns(rows: Iterable[Any]) -> list[str]:
    """The columns of the rows, in first-seen order."""
    return list(dict.fromkeys(str(k) for row in rows if isinstance(row, Mapping) for k in row))


def suggested_mapping(found: Sequence[str], layout: Sequence[str]) -> dict[str, str]:
    """For each column of `layout` the data lacks, the data column that most likely holds it."""
    free = [c for c in found if c not in TARGETS]
    mapping: dict[str, str] = {}
    for target in (t for t in layout if t not in found):
        names = [c for c in free if c.lower() in _SYNONYMS.get(target, ())]
        names = names or difflib.get_close_matches(target, free, n=1, cutoff=0.6)
        if names:
            mapping[target] = names[0]
            free.remove(names[0])
    return mapping


def layout_error(found: Sequence[str]) -> DataSourceError:
    """The one message for data in neither layout: the columns found and the mapping that would fix it."""
    flat_like = "question" in found or any(c.lower() in _SYNONYMS["question"] for c in found)
    layout = FLAT if flat_like else GROUPED
    mapping = suggested_mapping(found, layout)
    missing = [t for t in layout if t not in found and t not in mapping]
    fix = ",".join(f"{t}={c}" for t, c in mapping.items())
    fix += "".join(f",{t}=<column>" for t in missing) if fix else ",".join(f"{t}=<column>" for t in missing)
    kind = "one row per question" if flat_like else "one row per (context, goal) group"
    return DataSourceError(
        f"unrecognised layout: the data has the columns {', '.join(found) or '(none)'}; gacc-hf reads "
        f"{', '.join(GROUPED)} (one row per group) or {', '.join(FLAT)} (one row per question). For "
        f"{kind}, map the data's names: --columns {fix} (columns={{...}} in load_any)"
    )


def is_flat(found: Sequence[str]) -> bool:
    """Whether the columns are the flat layout's; DataSourceError (`layout_error`) when in neither layout."""
    if "questions" in found:
        return False
    if all(c in found for c in FLAT):
        return True
    raise layout_error(found)


def group_flat(rows: Sequence[Any]) -> list[dict[str, Any]]:
    """Group flat rows into schema rows by `goal_id`, questions in row order; every disagreement of the rows of
    one goal on its context, goal, source or language, or of one context on its text, is a Problem."""
    problems: list[Problem] = []
    groups: dict[str, dict[str, Any]] = {}
    first_of_goal: dict[str, int] = {}
    first_of_context: dict[Any, tuple[int, Any]] = {}
    shared = ("context_id", "context", "goal", "source", "language")
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            problems.append(Problem(i, "*", f"row must be an object, got {type(row).__name__}"))
            continue
        gid = row.get("goal_id")
        label = gid if isinstance(gid, str) else None
        missing = [c for c in FLAT if c not in row]
        problems += [Problem(i, c, "missing column", label) for c in missing]
        if missing or not isinstance(gid, str):
            problems += [] if missing else [Problem(i, "goal_id", f"must be a string, got {type(gid).__name__}")]
            continue
        refs = row["references"]
        refs = [refs] if isinstance(refs, str) else refs
        if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
            problems.append(Problem(i, "references", "must be a string or a list of strings", label))
        cid, context = row["context_id"], row["context"]
        first_row, first_text = first_of_context.setdefault(cid, (i, context))
        if first_text != context:
            problems.append(
                Problem(i, "context", f"differs from the text of context_id {cid!r} in row {first_row}", label)
            )
        if gid not in groups:
            first_of_goal[gid] = i
            groups[gid] = {c: row[c] for c in shared if c in row} | {"source": row.get("source", "")}
            groups[gid] |= {"goal_id": gid, "questions": [], "gold": []}
        group, first = groups[gid], first_of_goal[gid]
        for field in (f for f in shared if f != "context"):  # a context's text is checked by its context_id
            if row.get(field, _ABSENT) != rows[first].get(field, _ABSENT):
                message = f"differs from the {field} of goal_id {gid!r} in row {first}; the rows of one goal must agree"
                problems.append(Problem(i, field, message, label))
        group["questions"].append({"question_id": row["question_id"], "question": row["question"]})
        group["gold"].append({"question_id": row["question_id"], "references": refs})
    if problems:
        raise DataValidationError(problems)
    order = ("context_id", "source", "language", "context", "goal_id", "goal", "questions", "gold")
    return [{k: g[k] for k in order if k in g} for g in groups.values()]


def to_schema_rows(rows: Sequence[Any], columns: Mapping[str, str] | None = None) -> list[Any]:
    """Rows in gacc-hf's own layout: mapped (`columns`), then grouped when flat; grouped rows are left as they are
    for the schema check."""
    rows = rename(rows, columns) if columns else list(rows)
    return group_flat(rows) if is_flat(found_columns(rows)) else rows


def needs_mapping(found: Sequence[str]) -> bool:
    """Whether data with these columns is in another layout than gacc-hf's own, one row per group."""
    return bool(found) and "questions" not in found


def mapped_splits(
    splits: Mapping[str, Sequence[Any]], columns: Mapping[str, str] | None, where: str
) -> datasets.DatasetDict:
    """Rows by split put in gacc-hf's layout (`to_schema_rows`) and checked against the schema (IDs unique over
    all splits), as a DatasetDict; each problem names its split's rows (`where [split]`)."""
    grouped: dict[str, list[Any]] = {}
    for split, rows in splits.items():
        try:
            grouped[split] = to_schema_rows(rows, columns)
        except DataValidationError as exc:
            raise DataValidationError([replace(p, file=f"{where} [{split}]") for p in exc.problems]) from None
        except DataSourceError as exc:
            raise DataSourceError(f"{where} [{split}]: {exc}") from None
    origins = [(f"{where} [{split}]", i) for split, rows in grouped.items() for i in range(len(rows))]
    problems = find_problems([row for rows in grouped.values() for row in rows], origins=origins)
    if problems:
        raise DataValidationError(problems)
    return datasets.DatasetDict({split: as_dataset(rows) for split, rows in grouped.items()})


def mapping_problems(
    splits: Mapping[str, Sequence[Any]], columns: Mapping[str, str] | None, where: str
) -> list[Problem]:
    """What `mapped_splits` would refuse, as a list (`gacc data validate`): rows and fields, or the layout."""
    try:
        mapped_splits(splits, columns, where)
    except DataValidationError as exc:
        return exc.problems
    except DataSourceError as exc:
        return [Problem(0, "*", str(exc), file=where)]
    return []
