"""Data files read into rows, each file once: strict JSONL parsing (every unreadable line reported), Parquet,
CSV and TSV (`gacc_hf.data.table`), and the bundled sample.

`read_file` reads a file's bytes one time and derives everything from them: the rows, the line each row
starts on, and the digest that keys the builder's cache. Validation and the build of one run use that one
read, so a file that changes during a run (a log still being appended to) cannot give the check one
content and the build another. Rows read here are not yet validated; `find_file_problems` checks several
files as one dataset, each problem located by file, row and line.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import datasets

from gacc_hf.data.schema import (
    DATA_SUFFIXES,
    SAMPLE_FILES,
    Config,
    DataSourceError,
    DataValidationError,
    Problem,
    find_problems,
    from_rows,
)
from gacc_hf.data.table import SEPARATORS, read_table


@dataclass(frozen=True)
class FileRows:
    """One data file as read: the digest of its bytes, its readable rows with their row numbers (from 0) and
    first lines (from 1; None for Parquet), and the problems of the lines that could not be read."""

    path: str
    sha256: str
    rows: list[Any]
    numbers: list[int]
    lines: list[int] | None
    problems: list[Problem]

    @property
    def origins(self) -> list[tuple[str, int]]:
        """(file, row) of each row, as `find_problems` takes them."""
        return [(self.path, n) for n in self.numbers]


def read_file(path: str | Path) -> FileRows:
    """A `.jsonl`, `.parquet`, `.csv` or `.tsv` file, read once (see the module doc).

    Raises DataSourceError when the file cannot be read at all; the lines of a JSONL file that cannot be
    read are listed in `.problems` (see `parse_json_line`). A UTF-8 byte order mark and CRLF line ends are
    accepted.
    """
    path = Path(path)
    if path.suffix not in DATA_SUFFIXES:
        raise DataSourceError(f"{path}: unsupported file type {path.suffix!r}; use {', '.join(DATA_SUFFIXES)}")
    if not path.is_file():
        raise DataSourceError(f"{path}: no such file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataSourceError(f"{path}: cannot read the file: {exc.strerror or exc}") from exc
    digest = hashlib.sha256(data).hexdigest()
    if path.suffix == ".jsonl":
        numbered, bad = parse_jsonl(data, str(path))
        rows = [row for _, _, row in numbered]
        return FileRows(str(path), digest, rows, [i for i, _, _ in numbered], [n for _, n, _ in numbered], bad)
    if path.suffix in SEPARATORS:
        rows, lines = read_table(data, str(path), path.suffix)
    else:
        rows, lines = _read_parquet(data, path), None
    return FileRows(str(path), digest, rows, list(range(len(rows))), lines, [])


def _read_parquet(data: bytes, path: Path) -> list[dict[str, Any]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_table(pa.BufferReader(data)).to_pylist()
    except (OSError, pa.ArrowException) as exc:
        raise DataSourceError(f"{path}: not a readable Parquet file: {exc}") from exc


def jsonl_bytes(rows: Iterable[Any]) -> bytes:
    """Rows as a JSONL file's bytes: one object a line, UTF-8, every character as written (`read_file` reads
    them back as they were)."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """The rows of one data file, not yet validated; DataValidationError listing every unreadable JSONL line."""
    read = read_file(path)
    if read.problems:
        raise DataValidationError(read.problems)
    return read.rows


def parse_jsonl(data: bytes, path: str) -> tuple[list[tuple[int, int, Any]], list[Problem]]:
    """The rows of a JSONL file's bytes as (row number, line, row), and the problems of its lines, without
    raising for them.

    A line that is not JSON gives a problem and no row. A line whose only fault is a key given twice gives the
    problem *and* its row (the last value kept, as JSON does), so that `gacc data validate` lists that row's
    other problems too instead of hiding them behind the repeated key.
    """
    rows: list[tuple[int, int, Any]] = []
    bad: list[Problem] = []
    index = -1  # the row number: non-blank lines counted from 0
    for n, raw in enumerate(io.BytesIO(data), 1):
        line = raw[3:] if n == 1 and raw.startswith(codecs.BOM_UTF8) else raw  # a leading BOM is allowed
        if not line.strip():
            continue
        index, repeated = index + 1, []
        try:
            row = parse_json_line(line, repeated=repeated)
        except ValueError as exc:
            bad.append(Problem(index, getattr(exc, "field", "*"), f"line {n} {exc}", file=path))
            continue
        bad += [Problem(index, name, f"line {n} {_twice(name)}", file=path) for name in repeated]
        rows.append((index, n, row))
    return rows, bad


class _LineError(ValueError):
    """Why one JSONL line cannot be read; `field` is the key at fault when one is known."""

    def __init__(self, message: str, field: str = "*") -> None:
        super().__init__(message)
        self.field = field


def _twice(name: str) -> str:
    return f"has the key {name!r} twice in one object (JSON would keep only the last)"


def _keys_once(repeated: list[str] | None) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    """The object hook: a repeated key raises, or, given a `repeated` list, is noted there and the last value kept."""

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for name, value in pairs:
            if name in obj:
                if repeated is None:
                    raise _LineError(_twice(name), name)
                repeated.append(name)
            obj[name] = value
        return obj

    return hook


def parse_json_line(line: bytes, *, repeated: list[str] | None = None) -> Any:
    """One JSONL line, strictly: UTF-8, valid JSON, no duplicate keys, bounded nesting and integers.

    Raises ValueError with a message that completes "line N ..." (e.g. "is not valid JSON: ..."). With a
    `repeated` list, a key given twice is appended there instead of raising.
    """
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _LineError(f"is not UTF-8 text ({exc.reason}: byte 0x{line[exc.start]:02x} at byte {exc.start})") from exc
    try:
        return json.loads(text, object_pairs_hook=_keys_once(repeated))
    except _LineError:
        raise
    except json.JSONDecodeError as exc:
        raise _LineError(f"is not valid JSON: {exc.msg} (column {exc.colno})") from exc
    except RecursionError as exc:
        raise _LineError("is nested too deeply to read (thousands of levels of [ or {)") from exc
    except ValueError as exc:  # Python's cap on the digits of an int (sys.get_int_max_str_digits)
        raise _LineError(f"holds an integer too long to read ({exc})") from exc


def find_file_problems(
    files: Iterable[str | Path | FileRows], require_gold: bool = True, *, forbid_gold: bool = False
) -> list[Problem]:
    """Every problem of several files (paths, or files already read) taken together as one dataset, each
    located by file, row and line.

    IDs must be unique over all the files (all splits of a dataset), as over one file.
    """
    read = [f if isinstance(f, FileRows) else read_file(f) for f in files]
    problems = [p for f in read for p in f.problems]
    problems += [Problem(0, "*", "the file has no rows", file=f.path) for f in read if not f.rows and not f.problems]
    rows = [row for f in read for row in f.rows]
    origins = [origin for f in read for origin in f.origins]
    return problems + with_lines(find_problems(rows, require_gold, forbid_gold=forbid_gold, origins=origins), read)


def with_lines(problems: Sequence[Problem], files: Iterable[FileRows]) -> list[Problem]:
    """The problems with the line of their (file, row) filled in, where the file tells lines."""
    lines = {
        (f.path, n): line for f in files if f.lines is not None for n, line in zip(f.numbers, f.lines, strict=True)
    }
    return [replace(p, line=lines.get((p.file, p.row), p.line)) if p.file is not None else p for p in problems]


SAMPLE_LANGUAGES = (*SAMPLE_FILES, "all")


def load_sample(config: Config = "judge", language: str = "en") -> datasets.Dataset:
    """The bundled sample benchmark (written for this project), as a `datasets.Dataset`: its English groups
    (`language="en"`, the default), its Chinese groups (`"zh"`) or both (`"all"`, English first).

    The default stays English because `sample` has named the English groups in every recorded run (their
    configs replay them, their fingerprints bind them); the bilingual sample is asked for by name.
    """
    if config not in ("public", "judge"):
        raise ValueError(f"config must be 'public' or 'judge', got {config!r}")
    if language not in SAMPLE_LANGUAGES:
        raise ValueError(f"the sample's languages are {', '.join(SAMPLE_LANGUAGES)}, not {language!r}")
    paths = SAMPLE_FILES.values() if language == "all" else [SAMPLE_FILES[language]]
    return from_rows([row for path in paths for row in read_rows(path)], config)
