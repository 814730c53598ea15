"""Data files read into rows: strict JSONL parsing (every unreadable line reported), Parquet, and the bundled sample.

Rows read here are not yet validated; `find_file_problems` checks several files as one dataset, each problem
located by file and row.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterable
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
    rows, bad = read_lines(path)
    if bad:
        raise DataValidationError(bad)
    return [row for _, row in rows]


def read_lines(path: Path) -> tuple[list[tuple[int, Any]], list[Problem]]:
    """The rows of a JSONL file with their row number, and the problems of its lines, without raising for them.

    A line that is not JSON gives a problem and no row. A line whose only fault is a key given twice gives the
    problem *and* its row (the last value kept, as JSON does), so that `gacc data validate` lists that row's
    other problems too instead of hiding them behind the repeated key.
    """
    rows: list[tuple[int, Any]] = []
    bad: list[Problem] = []
    index = -1  # the row number: non-blank lines counted from 0
    try:
        with path.open("rb") as fh:
            for n, raw in enumerate(fh, 1):
                line = raw[3:] if n == 1 and raw.startswith(codecs.BOM_UTF8) else raw  # a leading BOM is allowed
                if not line.strip():
                    continue
                index, repeated = index + 1, []
                try:
                    row = parse_json_line(line, repeated=repeated)
                except ValueError as exc:
                    bad.append(Problem(index, getattr(exc, "field", "*"), f"line {n} {exc}", file=str(path)))
                    continue
                bad += [Problem(index, name, f"line {n} {_twice(name)}", file=str(path)) for name in repeated]
                rows.append((index, row))
    except OSError as exc:
        raise DataSourceError(f"{path}: cannot read the file: {exc.strerror or exc}") from exc
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
    files: Iterable[str | Path], require_gold: bool = True, *, forbid_gold: bool = False
) -> list[Problem]:
    """Every problem of several files taken together as one dataset, each located by file and row.

    IDs must be unique over all the files (all splits of a dataset), as over one file.
    """
    problems: list[Problem] = []
    rows: list[dict[str, Any]] = []
    origins: list[tuple[str, int]] = []
    for path in files:
        if Path(path).suffix == ".jsonl" and Path(path).is_file():
            numbered, bad = read_lines(Path(path))
        else:
            numbered, bad = list(enumerate(read_rows(path))), []
        problems.extend(bad)
        if not numbered and not bad:
            problems.append(Problem(0, "*", "the file has no rows", file=str(path)))
        rows.extend(row for _, row in numbered)
        origins.extend((str(path), i) for i, _ in numbered)
    return problems + find_problems(rows, require_gold, forbid_gold=forbid_gold, origins=origins)


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
