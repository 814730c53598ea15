"""The GACC data schema (one row per (context, goal) group), its validation and its two views.

Validation runs before any model call (docs/protocol.md §13) and reports every problem with the row number and
the field (and the file, for data read from files), so a user can fix a file in one pass. `public` rows
lack the judge-only `gold` column. Rows are counted from 0, as in `dataset[i]`.
"""

from __future__ import annotations

import codecs
import json
import math
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import datasets

from gacc_hf.text.hygiene import encoding_problem, id_key, id_problem

if TYPE_CHECKING:
    from gacc_hf.tokenizer import Codec

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
SCHEMA_COLUMNS = tuple(JUDGE_FEATURES)
DATA_SUFFIXES = (".jsonl", ".parquet")
SAMPLE_PATH = Path(__file__).parent / "sample" / "sample.jsonl"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input: where (file, row, field) and what."""

    row: int
    field: str
    message: str
    goal_id: str | None = None
    file: str | None = None

    def __str__(self) -> str:
        where = f"row {self.row}" + (f" (goal_id={self.goal_id!r})" if self.goal_id else "")
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
    """A validated (context, goal) pair with its questions and their gold references."""

    context_id: str
    source: str
    context: str
    goal_id: str
    goal: str
    questions: tuple[Question, ...]


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
        if not isinstance(text, str) or not text.strip():
            problems.append(Problem(i, f"questions[{j}].question", "must be a non-empty string", gid))
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
    goal_ids = _IdRegistry("goal_id", where)
    question_ids = _IdRegistry("question_id", where)
    context_ids = _IdRegistry("context_id", where)
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
        if forbid_gold and "gold" in row:
            problems.append(Problem(i, "gold", "judge-only column in public data (a leak)", gid))
        for col in row:
            if col not in SCHEMA_COLUMNS:
                problems.append(
                    Problem(i, str(col), f"unknown column; the schema has {', '.join(SCHEMA_COLUMNS)}", gid)
                )
        usable: dict[str, str] = {}
        for col in STRING_COLUMNS:
            value = row.get(col)
            if col not in row:
                continue
            if not isinstance(value, str):
                problems.append(Problem(i, col, f"must be a string, got {type(value).__name__}", gid))
            elif col in ("context_id", "goal_id", "context", "goal") and not value.strip():
                problems.append(Problem(i, col, "must not be empty", gid))
            elif _check_text(i, col, value, gid, problems, is_id=col.endswith("_id")):
                usable[col] = value
        gid = usable.get("goal_id")
        if gid:
            if gid in goal_ids.exact:
                problems.append(
                    Problem(i, "goal_id", f"duplicate goal_id, first seen in {where(goal_ids.exact[gid])}", gid)
                )
            elif message := goal_ids.collision(i, gid):
                problems.append(Problem(i, "goal_id", message, gid))
        cid, ctx = usable.get("context_id"), row.get("context")
        if cid is not None:
            if message := context_ids.collision(i, cid):
                problems.append(Problem(i, "context_id", message, gid))
            elif isinstance(ctx, str):
                first = contexts.setdefault(cid, (i, ctx))
                if first[1] != ctx:
                    problems.append(
                        Problem(i, "context", f"differs from the text of context_id {cid!r} in {where(first[0])}", gid)
                    )
        qids = _check_questions(i, row, gid, problems) if "questions" in row else []
        for qid in qids:
            if qid in question_ids.exact:
                problems.append(
                    Problem(
                        i,
                        "questions",
                        f"duplicate question_id {qid!r}, first seen in {where(question_ids.exact[qid])}",
                        gid,
                    )
                )
            elif message := question_ids.collision(i, qid):
                problems.append(Problem(i, "questions", message, gid))
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
    return from_rows(read_rows(SAMPLE_PATH), config)


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """The rows of one `.jsonl` or `.parquet` file, not yet validated.

    Raises DataSourceError when the file cannot be read at all, and DataValidationError listing every
    line of a JSONL file that cannot be read (see `parse_json_line`). A UTF-8 byte order mark at the start
    of the file and CRLF line ends are accepted.
    """
    path = Path(path)
    if path.suffix not in DATA_SUFFIXES:
        raise DataSourceError(f"{path}: unsupported file type {path.suffix!r}; use {' or '.join(DATA_SUFFIXES)}")
    if not path.is_file():
        raise DataSourceError(f"{path}: no such file")
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return pq.read_table(path).to_pylist()
        except (OSError, pa.ArrowException) as exc:
            raise DataSourceError(f"{path}: not a readable Parquet file: {exc}") from exc
    rows: list[Any] = []
    bad: list[Problem] = []
    try:
        with path.open("rb") as fh:
            for n, raw in enumerate(fh, 1):
                line = raw[3:] if n == 1 and raw.startswith(codecs.BOM_UTF8) else raw  # a leading BOM is allowed
                if not line.strip():
                    continue
                try:
                    rows.append(parse_json_line(line))
                except ValueError as exc:
                    bad.append(Problem(len(rows) + len(bad), getattr(exc, "field", "*"), f"line {n} {exc}"))
    except OSError as exc:
        raise DataSourceError(f"{path}: cannot read the file: {exc.strerror or exc}") from exc
    if bad:
        raise DataValidationError([replace(p, file=str(path)) for p in bad])
    return rows


class _LineError(ValueError):
    """Why one JSONL line cannot be read; `field` is the key at fault when one is known."""

    def __init__(self, message: str, field: str = "*") -> None:
        super().__init__(message)
        self.field = field


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for name, value in pairs:
        if name in obj:
            raise _LineError(f"has the key {name!r} twice in one object (JSON would keep only the last)", name)
        obj[name] = value
    return obj


def parse_json_line(line: bytes) -> Any:
    """One JSONL line, strictly: UTF-8, valid JSON, no duplicate keys, bounded nesting and integers.

    Raises ValueError with a message that completes "line N ..." (e.g. "is not valid JSON: ...").
    """
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _LineError(f"is not UTF-8 text ({exc.reason}: byte 0x{line[exc.start]:02x} at byte {exc.start})") from exc
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except _LineError:
        raise
    except json.JSONDecodeError as exc:
        raise _LineError(f"is not valid JSON: {exc.msg} (column {exc.colno})") from exc
    except RecursionError as exc:
        raise _LineError("is nested too deeply to read (thousands of levels of [ or {)") from exc
    except ValueError as exc:  # Python's cap on the digits of an int (sys.get_int_max_str_digits)
        raise _LineError(f"holds an integer too long to read ({exc})") from exc


def find_file_problems(
    files: Iterable[str | Path], require_gold: bool = True, *, forbid_gold: bool = False
) -> list[Problem]:
    """Every problem of several files taken together as one dataset, each located by file and row.

    IDs must be unique over all the files (all splits of a dataset), as over one file.
    """
    problems: list[Problem] = []
    rows: list[dict[str, Any]] = []
    origins: list[tuple[str, int]] = []
    for path in files:
        try:
            file_rows = read_rows(path)
        except DataValidationError as exc:
            problems.extend(exc.problems)
            continue
        if not file_rows:
            problems.append(Problem(0, "*", "the file has no rows", file=str(path)))
        rows.extend(file_rows)
        origins.extend((str(path), i) for i in range(len(file_rows)))
    return problems + find_problems(rows, require_gold, forbid_gold=forbid_gold, origins=origins)


def _quartiles(values: Sequence[int]) -> tuple[float, float, float]:
    if len(values) == 1:
        return (values[0],) * 3  # type: ignore[return-value]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def _bin_width(low: int, high: int, max_bins: int = 10) -> int:
    """The smallest width of the 1-2-5 series that covers [low, high] in at most `max_bins` bins."""
    exponent = 0
    while True:
        for step in (1, 2, 5):
            width = step * 10**exponent
            if (high // width - low // width) + 1 <= max_bins:
                return width
        exponent += 1


@dataclass(frozen=True)
class DataStats:
    """Counts and cl100k_base token lengths of a dataset: what `gacc data stats` prints and the card shows.

    Token lengths are per distinct context, per question, and per canonical answer (the first reference;
    empty for data without gold).
    """

    contexts: int
    goals: int
    questions: int
    sources: dict[str, int]
    goals_per_context: tuple[int, int]
    questions_per_goal: tuple[int, int]
    context_tokens: tuple[int, ...]
    question_tokens: tuple[int, ...]
    answer_tokens: tuple[int, ...]

    def histogram(self) -> list[tuple[int, int, int]]:
        """Context token lengths in equal bins: (low, high exclusive, count), no empty edge bins."""
        lo, hi = min(self.context_tokens), max(self.context_tokens)
        width = _bin_width(lo, hi)
        counts = Counter(n // width for n in self.context_tokens)
        return [(b * width, (b + 1) * width, counts[b]) for b in range(lo // width, hi // width + 1)]

    def text(self) -> str:
        """A plain-text report."""
        sources = ", ".join(f"{name} {n}" for name, n in sorted(self.sources.items()))
        lines = [
            f"contexts:  {self.contexts} from {len(self.sources)} sources ({sources})",
            f"goals:     {self.goals} ({_span(self.goals_per_context)} per context)",
            f"questions: {self.questions} ({_span(self.questions_per_goal)} per goal)",
            "",
            "context tokens (cl100k_base), one per context:",
            "  " + _summary(self.context_tokens),
        ]
        bar_scale = max(c for _, _, c in self.histogram())
        for low, high, count in self.histogram():
            bar = "#" * math.ceil(30 * count / bar_scale) if count else ""
            lines.append(f"  {low:>6}-{high - 1:<6} {count:>4} {bar}".rstrip())
        lines += ["", "question tokens: " + _summary(self.question_tokens)]
        if self.answer_tokens:
            lines.append("answer tokens (first reference): " + _summary(self.answer_tokens))
        return "\n".join(lines)


def _span(bounds: tuple[int, int]) -> str:
    return str(bounds[0]) if bounds[0] == bounds[1] else f"{bounds[0]}-{bounds[1]}"


def _summary(values: Sequence[int]) -> str:
    q1, q2, q3 = _quartiles(values)
    return (
        f"min {min(values)}, p25 {q1:g}, median {q2:g}, p75 {q3:g}, max {max(values)}, "
        f"mean {statistics.fmean(values):.1f}, total {sum(values)}"
    )


def data_stats(dataset: Any, codec: Codec | None = None) -> DataStats:
    """Stats of valid rows (judge or public config); token lengths with the project's verified codec."""
    if codec is None:
        from gacc_hf.tokenizer import get_codec

        codec = get_codec()
    rows = as_rows(dataset)
    if not rows:
        raise DataValidationError([Problem(0, "*", "the dataset has no rows")])
    contexts = {r["context_id"]: (r["source"], r["context"]) for r in rows}
    goals = Counter(r["context_id"] for r in rows)
    per_goal = [len(r["questions"]) for r in rows]
    questions = [q["question"] for r in rows for q in r["questions"]]
    answers = [g["references"][0] for r in rows for g in r.get("gold") or [] if g["references"]]
    return DataStats(
        contexts=len(contexts),
        goals=len(rows),
        questions=len(questions),
        sources=dict(Counter(source for source, _ in contexts.values())),
        goals_per_context=(min(goals.values()), max(goals.values())),
        questions_per_goal=(min(per_goal), max(per_goal)),
        context_tokens=tuple(sorted(len(ids) for ids in codec.encode_batch([c for _, c in contexts.values()]))),
        question_tokens=tuple(sorted(len(ids) for ids in codec.encode_batch(questions))),
        answer_tokens=tuple(sorted(len(ids) for ids in codec.encode_batch(answers))),
    )
