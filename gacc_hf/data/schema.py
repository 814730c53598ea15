"""The GACC data schema (one row per (context, goal) group), its validation and its two views.

Validation runs before any model call (docs/protocol.md §13) and reports every problem with the row number and
the field (and the file, for data read from files), so a user can fix a file in one pass. `public` rows
lack the judge-only `gold` column. Rows are counted from 0, as in `dataset[i]`.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import datasets

from gacc_hf.data.language import canonical_tag, detect_language, language_of, script_conflict, tag_problem
from gacc_hf.text.hygiene import encoding_problem, id_key, id_problem, visible

Config = Literal["public", "judge"]

PUBLIC_FEATURES = datasets.Features(
    {
        "context_id": datasets.Value("string"),
        "source": datasets.Value("string"),
        "context": datasets.Value("string"),
        "goal_id": datasets.Value("string"),
        "goal": datasets.Value("string"),
        "questions": datasets.List({"question_id": datasets.Value("string"), "question": datasets.Value("string")}),
    }
)
JUDGE_FEATURES = datasets.Features(
    {
        **PUBLIC_FEATURES,
        "gold": datasets.List(
            {"question_id": datasets.Value("string"), "references": datasets.List(datasets.Value("string"))}
        ),
    }
)
STRING_COLUMNS = ("context_id", "source", "context", "goal_id", "goal")
_log = logging.getLogger(__name__)
# The optional `language` column (a BCP-47 tag): a dataset has it when a row declares it (null in the rows
# that do not); data without it keeps the features (and the content) it always had.
LANGUAGE_FEATURE = {"language": datasets.Value("string")}
SCHEMA_COLUMNS = (*JUDGE_FEATURES, *LANGUAGE_FEATURE)
DATA_SUFFIXES = (".jsonl", ".parquet", ".csv", ".tsv")
SAMPLE_PATH = Path(__file__).parent / "sample" / "sample.jsonl"  # the English groups
# the bundled sample by language (the Chinese rows declare `language: zh`; the English rows, older, leave it out)
SAMPLE_FILES = {"en": SAMPLE_PATH, "zh": SAMPLE_PATH.with_name("sample_zh.jsonl")}


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input: where (file, row, its line in a text file, field) and what."""

    row: int
    field: str
    message: str
    goal_id: str | None = None
    file: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = f"row {self.row}" + (f" (goal_id={self.goal_id!r})" if self.goal_id else "")
        where += f", line {self.line}" if self.line else ""
        return f"{self.file + ': ' if self.file else ''}{where}, field {self.field!r}: {self.message}"


class DataSourceError(ValueError):
    """A data file or folder cannot be read at all (missing, unsupported format, not UTF-8)."""


class DataValidationError(ValueError):
    """The dataset breaks the schema; `.problems` lists every row and field at fault."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        shown = "\n  ".join(str(p) for p in self.problems[:50])
        more = f"\n  ... and {len(self.problems) - 50} more" if len(self.problems) > 50 else ""
        super().__init__(f"{len(self.problems)} problem(s) in the dataset:\n  {shown}{more}")


@dataclass(frozen=True)
class Question:
    question_id: str
    question: str
    references: tuple[str, ...]


@dataclass(frozen=True)
class Group:
    """A validated (context, goal) pair with its questions and their gold references.

    `language` is the row's declared BCP-47 tag (canonical case), None when the row has none; `language_tag`
    is the language the harness scores it under: `language_of` the declared tag, else the one detected.
    """

    context_id: str
    source: str
    context: str
    goal_id: str
    goal: str
    questions: tuple[Question, ...]
    language: str | None = None

    @cached_property
    def language_tag(self) -> str:
        return language_of(self.language) if self.language else self.detected_language

    @cached_property
    def detected_language(self) -> str:
        """The language detection reads in the group's texts, whatever it declares."""
        return detect_language(self.context, self.goal, *(q.question for q in self.questions))

    @property
    def language_detected(self) -> bool:
        return self.language is None


#: what an empty text may hold (the matcher ignores format characters: `gacc_hf.text.hygiene.strip_format`)
_INVISIBLE = " (whitespace and invisible format characters such as U+200B do not count)"


def _check_text(i: int, field: str, value: Any, gid: str | None, problems: list[Problem], *, is_id: bool) -> bool:
    """Add the problem of a text (or ID) field that is a string; True when the value is usable."""
    problem = id_problem(value) if is_id else encoding_problem(value)
    if problem:
        problems.append(Problem(i, field, problem, gid))
    return problem is None


def _check_keys(
    i: int, field: str, obj: Mapping[str, Any], allowed: tuple[str, ...], gid: str | None, problems: list[Problem]
) -> None:
    for name in obj:
        if name not in allowed:
            problems.append(Problem(i, f"{field}.{name}", f"unknown field; an entry has {', '.join(allowed)}", gid))


def _check_questions(i: int, row: Mapping[str, Any], gid: str | None, problems: list[Problem]) -> list[str]:
    ids: list[str] = []
    questions = row.get("questions")
    if not isinstance(questions, list) or not questions:
        problems.append(Problem(i, "questions", "must be a non-empty list of {question_id, question}", gid))
        return ids
    for j, q in enumerate(questions):
        if not isinstance(q, Mapping):
            problems.append(Problem(i, f"questions[{j}]", f"must be an object, got {type(q).__name__}", gid))
            continue
        _check_keys(i, f"questions[{j}]", q, ("question_id", "question"), gid, problems)
        qid, text = q.get("question_id"), q.get("question")
        field = f"questions[{j}].question_id"
        if not isinstance(qid, str) or not qid:
            problems.append(Problem(i, field, "must be a non-empty string", gid))
        elif _check_text(i, field, qid, gid, problems, is_id=True):
            ids.append(qid)
        if not isinstance(text, str) or not visible(text):
            problems.append(Problem(i, f"questions[{j}].question", f"must be a non-empty string{_INVISIBLE}", gid))
        else:
            _check_text(i, f"questions[{j}].question", text, gid, problems, is_id=False)
    return ids


def _check_gold(i: int, row: Mapping[str, Any], gid: str | None, qids: list[str], problems: list[Problem]) -> None:
    gold = row.get("gold")
    if not isinstance(gold, list):
        problems.append(Problem(i, "gold", "must be a list of {question_id, references}", gid))
        return
    seen: set[str] = set()
    for j, g in enumerate(gold):
        if not isinstance(g, Mapping):
            problems.append(Problem(i, f"gold[{j}]", f"must be an object, got {type(g).__name__}", gid))
            continue
        _check_keys(i, f"gold[{j}]", g, ("question_id", "references"), gid, problems)
        qid, refs = g.get("question_id"), g.get("references")
        if not isinstance(qid, str) or qid not in qids:
            problems.append(Problem(i, f"gold[{j}].question_id", f"{_short(qid)} is not a question of this goal", gid))
        elif qid in seen:
            problems.append(Problem(i, f"gold[{j}].question_id", f"{qid!r} has a second gold entry", gid))
        else:
            seen.add(qid)
        if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
            problems.append(Problem(i, f"gold[{j}].references", "must be a list of strings", gid))
            continue
        for k, ref in enumerate(refs):
            if ref.strip() and not visible(ref):  # a blank reference is left out; an invisible one is a mistake
                problems.append(Problem(i, f"gold[{j}].references[{k}]", f"must not be empty{_INVISIBLE}", gid))
            else:
                _check_text(i, f"gold[{j}].references[{k}]", ref, gid, problems, is_id=False)
        if not any(r.strip() for r in refs):
            problems.append(Problem(i, f"gold[{j}].references", f"question {_short(qid)} has no references", gid))
    for qid in qids:
        if qid not in seen:
            problems.append(Problem(i, "gold", f"question {qid!r} has no references (no gold entry)", gid))


PUBLIC_VIEW = (
    "this is the public view of a GACC dataset (no 'gold' column: no references to score answers against); "
    "load the judge view instead: load_dataset(repo, 'judge'), gacc_hf.load_sample('judge') or "
    "gacc_hf.data.loading.load_any(spec, 'judge')"
)


def is_public_view(problems: Sequence[Problem]) -> bool:
    """Whether `problems` is the one problem of public-view rows checked as judge rows."""
    return len(problems) == 1 and problems[0].message == PUBLIC_VIEW


def _short(value: Any, limit: int = 80) -> str:
    """A repr for messages, cut to `limit` characters (values may be huge or deeply nested)."""
    try:
        text = repr(value)
    except RecursionError:
        text = f"<a deeply nested {type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _IdRegistry:
    """First row of every ID of one kind, exactly and up to case / Unicode normalisation (`id_key`)."""

    def __init__(self, kind: str, where: Any) -> None:
        self.kind, self.where = kind, where
        self.exact: dict[str, int] = {}
        self.folded: dict[str, tuple[int, str]] = {}

    def collision(self, i: int, identifier: str) -> str | None:
        """Register an ID seen in row `i`; the message of a case/normalisation collision, if any.
        (Exact repeats are left to the caller, which knows whether a repeat is allowed.)"""
        first_row, first = self.folded.setdefault(id_key(identifier), (i, identifier))
        self.exact.setdefault(identifier, i)
        if first != identifier:
            return (
                f"{self.kind} {identifier!r} differs from {first!r} in {self.where(first_row)} only by case or "
                "Unicode normalisation; IDs must stay distinct when compared that way"
            )
        return None


def unknown_column(name: str, known: Sequence[str], layout: str) -> str:
    """The message for a column a layout does not have, with the known name it is closest to (a misspelled
    optional column would otherwise be dropped without a word).

    >>> unknown_column("langauge", ("context", "language"), "the flat layout")
    "unknown column (did you mean 'language'?); the flat layout has context, language"
    """
    near = difflib.get_close_matches(name, known, n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return f"unknown column{hint}; {layout} has {', '.join(known)}"


def _check_columns(
    i: int, row: Mapping[str, Any], required: tuple[str, ...], forbid_gold: bool, gid: str | None
) -> list[Problem]:
    """Missing, leaked and unknown columns of one row."""
    problems = [Problem(i, col, "missing column", gid) for col in required if col not in row]
    if forbid_gold and "gold" in row:
        problems.append(Problem(i, "gold", "judge-only column in public data (a leak)", gid))
    problems += [
        Problem(i, str(col), unknown_column(str(col), SCHEMA_COLUMNS, "the schema"), gid)
        for col in row
        if col not in SCHEMA_COLUMNS
    ]
    if row.get("language") is not None and (problem := tag_problem(row["language"])):
        problems.append(Problem(i, "language", problem, gid))  # null: no tag (a Dataset's untagged rows)
    return problems


def _check_strings(i: int, row: Mapping[str, Any], gid: str | None, problems: list[Problem]) -> dict[str, str]:
    """Check the string columns of one row; those usable for the ID checks that follow."""
    usable: dict[str, str] = {}
    for col in STRING_COLUMNS:
        value = row.get(col)
        if col not in row:
            continue
        if not isinstance(value, str):
            problems.append(Problem(i, col, f"must be a string, got {type(value).__name__}", gid))
        elif col in ("context_id", "goal_id", "context", "goal") and not visible(value):
            problems.append(Problem(i, col, f"must not be empty{_INVISIBLE}", gid))
        elif _check_text(i, col, value, gid, problems, is_id=col.endswith("_id")):
            usable[col] = value
    return usable


class _Seen:
    """The IDs and context texts of the rows before: what each row's IDs must not repeat or contradict."""

    def __init__(self, where: Callable[[int], str]) -> None:
        self.where = where
        self.goal_ids = _IdRegistry("goal_id", where)
        self.question_ids = _IdRegistry("question_id", where)
        self.context_ids = _IdRegistry("context_id", where)
        self.contexts: dict[str, tuple[int, str]] = {}

    def check_goal(self, i: int, gid: str, problems: list[Problem]) -> None:
        if gid in self.goal_ids.exact:
            first = self.where(self.goal_ids.exact[gid])
            problems.append(Problem(i, "goal_id", f"duplicate goal_id, first seen in {first}", gid))
        elif message := self.goal_ids.collision(i, gid):
            problems.append(Problem(i, "goal_id", message, gid))

    def check_context(self, i: int, cid: str, ctx: Any, gid: str | None, problems: list[Problem]) -> None:
        """A context_id names one text: the same in every row that repeats it."""
        if message := self.context_ids.collision(i, cid):
            problems.append(Problem(i, "context_id", message, gid))
        elif isinstance(ctx, str):
            first = self.contexts.setdefault(cid, (i, ctx))
            if first[1] != ctx:
                message = f"differs from the text of context_id {cid!r} in {self.where(first[0])}"
                problems.append(Problem(i, "context", message, gid))

    def check_questions(self, i: int, qids: list[str], gid: str | None, problems: list[Problem]) -> None:
        for qid in qids:
            if qid in self.question_ids.exact:
                first = self.where(self.question_ids.exact[qid])
                problems.append(Problem(i, "questions", f"duplicate question_id {qid!r}, first seen in {first}", gid))
            elif message := self.question_ids.collision(i, qid):
                problems.append(Problem(i, "questions", message, gid))


def find_problems(
    rows: Iterable[Mapping[str, Any]],
    require_gold: bool = True,
    *,
    forbid_gold: bool = False,
    origins: Sequence[tuple[str, int]] | None = None,
) -> list[Problem]:
    """Every schema problem of the rows, in row order (empty list: the data is valid).

    `forbid_gold` is for data that declares itself public: a `gold` column there is a leak. `origins[i]`
    names the (file, row in that file) that row `i` was read from, so that problems of rows read from
    several files point into the right file.
    """

    def where(i: int) -> str:
        return f"row {i}" if origins is None else f"{origins[i][0]} row {origins[i][1]}"

    rows = list(rows)
    problems: list[Problem] = []
    if require_gold and rows and all(isinstance(r, Mapping) and "gold" not in r for r in rows):
        rows = []  # one message for the whole view, not one missing column per row
        problems.append(Problem(0, "gold", PUBLIC_VIEW))
    seen = _Seen(where)
    required = (*STRING_COLUMNS, "questions", *(("gold",) if require_gold else ()))
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            problems.append(Problem(i, "*", f"row must be an object, got {type(row).__name__}"))
            continue
        raw_gid = row.get("goal_id") if isinstance(row.get("goal_id"), str) else None
        problems += _check_columns(i, row, required, forbid_gold, raw_gid)
        usable = _check_strings(i, row, raw_gid, problems)
        gid = usable.get("goal_id")
        if gid:
            seen.check_goal(i, gid, problems)
        if "context_id" in usable:
            seen.check_context(i, usable["context_id"], row.get("context"), gid, problems)
        qids = _check_questions(i, row, gid, problems) if "questions" in row else []
        seen.check_questions(i, qids, gid, problems)
        if require_gold and "gold" in row:
            _check_gold(i, row, gid, qids, problems)
    if origins is not None:
        problems = [replace(p, file=origins[p.row][0], row=origins[p.row][1]) for p in problems]
    return problems


def as_rows(dataset: Any) -> list[dict[str, Any]]:
    """Rows of a `datasets.Dataset` (or a `DatasetDict` of one split), a list of dicts or any iterable of mappings."""
    if isinstance(dataset, datasets.DatasetDict) and len(dataset) == 1:
        dataset = next(iter(dataset.values()))
    if isinstance(dataset, datasets.DatasetDict):
        raise DataValidationError(
            [Problem(0, "*", f"got a DatasetDict with splits {list(dataset)}; pass one split, e.g. ds['test']")]
        )
    if isinstance(dataset, datasets.Dataset):
        return dataset.to_list()
    return [dict(r) if isinstance(r, Mapping) else r for r in dataset]


def validate(dataset: Any) -> list[Group]:
    """Validate judge-config rows and return them as groups; raise DataValidationError listing every problem."""
    rows = as_rows(dataset)
    if not rows:
        raise DataValidationError([Problem(0, "*", "the dataset has no rows")])
    problems = find_problems(rows)
    if problems:
        raise DataValidationError(problems)
    groups = []
    for row in rows:
        refs = {g["question_id"]: tuple(r for r in g["references"] if r.strip()) for g in row["gold"]}
        questions = tuple(Question(q["question_id"], q["question"], refs[q["question_id"]]) for q in row["questions"])
        language = canonical_tag(row["language"]) if row.get("language") is not None else None
        groups.append(
            Group(row["context_id"], row["source"], row["context"], row["goal_id"], row["goal"], questions, language)
        )
    _warn_script_conflicts(groups)
    return groups


def _warn_script_conflicts(groups: Sequence[Group]) -> None:
    """One warning for the goals whose declared `en`/`zh` tag their text's script contradicts (kept as declared)."""
    conflicts = [g for g in groups if g.language and script_conflict(g.language, g.detected_language)]
    if conflicts:
        first = conflicts[0]
        _log.warning(
            "data: %d goal(s) declare a language their text's script contradicts (first: goal %s declares %r, its "
            "text reads as %s); scored under the declared tag",
            len(conflicts),
            first.goal_id,
            first.language,
            first.detected_language,
        )


def public_view(dataset: datasets.Dataset) -> datasets.Dataset:
    """The model-facing view: the same rows without the judge-only `gold` column."""
    return dataset.remove_columns([c for c in dataset.column_names if c == "gold"])


def declares_language(rows: Iterable[Any]) -> bool:
    """Whether a row declares its language (then the dataset has the column, null where a row has none)."""
    return any(isinstance(r, Mapping) and r.get("language") is not None for r in rows)


def features(config: Config, language: bool) -> datasets.Features:
    """The features of a view, with the `language` column or without it."""
    base = JUDGE_FEATURES if config == "judge" else PUBLIC_FEATURES
    return datasets.Features({**base, **LANGUAGE_FEATURE}) if language else base


def as_dataset(rows: list[dict[str, Any]]) -> datasets.Dataset:
    """Valid judge rows as a typed Dataset (the `language` column when a row declares one; a null
    `language` is no declaration, so rows that are all null get no column)."""
    if not declares_language(rows):
        untagged = [{k: v for k, v in r.items() if k != "language"} for r in rows]
        return datasets.Dataset.from_list(untagged, features=JUDGE_FEATURES)
    return datasets.Dataset.from_list(
        [{**r, "language": r.get("language")} for r in rows], features("judge", language=True)
    )


def from_rows(rows: list[dict[str, Any]], config: Config = "judge") -> datasets.Dataset:
    """Validate rows and build a typed `datasets.Dataset` in the given config."""
    validate(rows)
    ds = as_dataset(rows)
    return ds if config == "judge" else public_view(ds)
