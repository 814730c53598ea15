"""The GACC data schema (one row per (context, goal) group), its validation and its two views.

Validation runs before any model call (DESIGN 1.13) and reports every problem with the row number and
the field, so a user can fix a file in one pass. `public` rows lack the judge-only `gold` column.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import datasets

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
SAMPLE_PATH = Path(__file__).parent / "sample" / "sample.jsonl"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input: where (row, field) and what."""

    row: int
    field: str
    message: str
    goal_id: str | None = None

    def __str__(self) -> str:
        where = f"row {self.row}" + (f" (goal_id={self.goal_id!r})" if self.goal_id else "")
        return f"{where}, field {self.field!r}: {self.message}"


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
    """A validated (context, goal) pair with its questions and their gold references."""

    context_id: str
    source: str
    context: str
    goal_id: str
    goal: str
    questions: tuple[Question, ...]


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
        qid, text = q.get("question_id"), q.get("question")
        if not isinstance(qid, str) or not qid:
            problems.append(Problem(i, f"questions[{j}].question_id", "must be a non-empty string", gid))
        else:
            ids.append(qid)
        if not isinstance(text, str) or not text.strip():
            problems.append(Problem(i, f"questions[{j}].question", "must be a non-empty string", gid))
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
        qid, refs = g.get("question_id"), g.get("references")
        if qid not in qids:
            problems.append(Problem(i, f"gold[{j}].question_id", f"{qid!r} is not a question of this goal", gid))
        elif qid in seen:
            problems.append(Problem(i, f"gold[{j}].question_id", f"{qid!r} has a second gold entry", gid))
        seen.add(qid)  # type: ignore[arg-type]
        if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
            problems.append(Problem(i, f"gold[{j}].references", "must be a list of strings", gid))
        elif not any(r.strip() for r in refs):
            problems.append(Problem(i, f"gold[{j}].references", f"question {qid!r} has no references", gid))
    for qid in qids:
        if qid not in seen:
            problems.append(Problem(i, "gold", f"question {qid!r} has no references (no gold entry)", gid))


def find_problems(rows: Iterable[Mapping[str, Any]], require_gold: bool = True) -> list[Problem]:
    """Every schema problem of the rows, in row order (empty list: the data is valid)."""
    problems: list[Problem] = []
    goal_rows: dict[str, int] = {}
    question_rows: dict[str, int] = {}
    contexts: dict[str, tuple[int, str]] = {}
    required = (*STRING_COLUMNS, "questions", *(("gold",) if require_gold else ()))
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            problems.append(Problem(i, "*", f"row must be an object, got {type(row).__name__}"))
            continue
        gid = row.get("goal_id") if isinstance(row.get("goal_id"), str) else None
        missing = [c for c in required if c not in row]
        for col in missing:
            problems.append(Problem(i, col, "missing column", gid))
        for col in STRING_COLUMNS:
            if col in row and not isinstance(row[col], str):
                problems.append(Problem(i, col, f"must be a string, got {type(row[col]).__name__}", gid))
        for col in ("context_id", "goal_id", "context", "goal"):
            if isinstance(row.get(col), str) and not row[col].strip():
                problems.append(Problem(i, col, "must not be empty", gid))
        if gid:
            if gid in goal_rows:
                problems.append(Problem(i, "goal_id", f"duplicate goal_id, first seen in row {goal_rows[gid]}", gid))
            goal_rows.setdefault(gid, i)
        cid, ctx = row.get("context_id"), row.get("context")
        if isinstance(cid, str) and isinstance(ctx, str):
            first = contexts.setdefault(cid, (i, ctx))
            if first[1] != ctx:
                problems.append(
                    Problem(i, "context", f"differs from the text of context_id {cid!r} in row {first[0]}", gid)
                )
        qids = _check_questions(i, row, gid, problems) if "questions" in row else []
        for qid in qids:
            if qid in question_rows:
                problems.append(
                    Problem(
                        i,
                        "questions",
                        f"duplicate question_id {qid!r}, first seen in row {question_rows[qid]}",
                        gid,
                    )
                )
            question_rows.setdefault(qid, i)
        if require_gold and "gold" in row:
            _check_gold(i, row, gid, qids, problems)
    return problems


def as_rows(dataset: Any) -> list[dict[str, Any]]:
    """Rows of a `datasets.Dataset`, a list of dicts or any iterable of mappings."""
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
        groups.append(Group(row["context_id"], row["source"], row["context"], row["goal_id"], row["goal"], questions))
    return groups


def public_view(dataset: datasets.Dataset) -> datasets.Dataset:
    """The model-facing view: the same rows without the judge-only `gold` column."""
    return dataset.remove_columns([c for c in dataset.column_names if c == "gold"])


def from_rows(rows: list[dict[str, Any]], config: Config = "judge") -> datasets.Dataset:
    """Validate rows and build a typed `datasets.Dataset` in the given config."""
    validate(rows)
    ds = datasets.Dataset.from_list(rows, features=JUDGE_FEATURES)
    return ds if config == "judge" else public_view(ds)


def load_sample(config: Config = "judge") -> datasets.Dataset:
    """The bundled sample benchmark (written for this project), as a `datasets.Dataset`."""
    if config not in ("public", "judge"):
        raise ValueError(f"config must be 'public' or 'judge', got {config!r}")
    import json

    with SAMPLE_PATH.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return from_rows(rows, config)
