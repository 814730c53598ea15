"""The results folder of a run, on disk: write it atomically, read it back, handle older schemas.

Layout (schema 2):

    results.json       config, seed, versions, git revision, tokenizer identity, integrity, calls,
                       scores with CIs, errors, and the row count + sha256 of each parquet file
    answers.parquet    one row per question per (compressor, condition, ratio): ids, memory hash,
                       answer, verdict
    memories.parquet   the memory ledger (DESIGN 1.9), one row per (compressor, goal, condition, ratio)

Every file is written to a temporary name and renamed into place, and `results.json` is written last,
so a crash leaves the previous folder or a complete new one, never a mix that reads as valid: the
recorded sha256 of each parquet file ties the three together. Schema 1 (ledger and answers embedded in
`results.json`) is still read; anything else is refused with a message naming the file.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

SCHEMA_VERSION = 2
RESULTS_FILE = "results.json"
ANSWERS_FILE = "answers.parquet"
MEMORIES_FILE = "memories.parquet"

_STR, _F64, _I64, _BOOL = pa.string(), pa.float64(), pa.int64(), pa.bool_()
# Known column types, so an all-null column (e.g. `error` in a clean run) keeps its type in the file.
ANSWER_TYPES: dict[str, pa.DataType] = {
    "compressor": _STR,
    "condition": _STR,
    "ratio": _F64,
    "context_id": _STR,
    "goal_id": _STR,
    "shown_goal_id": _STR,
    "question_id": _STR,
    "memory_sha256": _STR,
    "answer": _STR,
    "correct": _BOOL,
    "error": _STR,
}
MEMORY_TYPES: dict[str, pa.DataType] = {
    "context_id": _STR,
    "goal_id": _STR,
    "shown_goal_id": _STR,
    "condition": _STR,
    "compressor": _STR,
    "compressor_revision": _STR,
    "ratio": _F64,
    "source_tokens": _I64,
    "budget": _I64,
    "memory_key": _STR,
    "proposed_tokens": _I64,
    "retained_tokens": _I64,
    "unused_budget": _I64,
    "reencoded_tokens": _I64,
    "padding_tokens": _I64,
    "truncated": _BOOL,
    "compressor_called": _BOOL,
    "cached": _BOOL,
    "memory_sha256": _STR,
    "error": _STR,
}
_TABLES = {"answers": (ANSWERS_FILE, ANSWER_TYPES), "memories": (MEMORIES_FILE, MEMORY_TYPES)}


class ResultsError(ValueError):
    """A results folder cannot be read: the message names the file and what is wrong with it."""


@dataclass
class RunResults:
    """A results folder in memory: the `results.json` document plus the answer and ledger rows."""

    payload: dict[str, Any]
    answers: list[dict[str, Any]]
    memories: list[dict[str, Any]]

    @property
    def config(self) -> dict[str, Any]:
        return self.payload["config"]

    @property
    def scores(self) -> list[dict[str, Any]]:
        return self.payload["scores"]


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file renamed into place (readers never see a partial file)."""
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)


def json_bytes(payload: Mapping[str, Any]) -> bytes:
    """The canonical bytes of `results.json` (stable: rebuilding a folder reproduces them exactly)."""
    return (json.dumps(payload, indent=1, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def parquet_bytes(rows: list[dict[str, Any]], types: Mapping[str, pa.DataType]) -> bytes:
    """Rows as Parquet; known columns get their declared type, unknown ones are inferred."""
    names = list(dict.fromkeys(k for row in rows for k in row)) or list(types)
    columns = [pa.array([row.get(n) for row in rows], type=types.get(n)) for n in names]
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_arrays(columns, names=names), buf)
    return buf.getvalue()


def write_folder(run: RunResults, out_dir: str | Path) -> Path:
    """Write the three files of a results folder (parquet first, `results.json` last); returns results.json.

    `run.payload` is updated to the document written (current schema version, file checksums).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    for key, (name, types) in _TABLES.items():
        data = parquet_bytes(getattr(run, key), types)
        write_atomic(out / name, data)
        files[key] = {"path": name, "rows": len(getattr(run, key)), "sha256": hashlib.sha256(data).hexdigest()}
    run.payload = {**run.payload, "schema_version": SCHEMA_VERSION, "files": files}
    write_atomic(out / RESULTS_FILE, json_bytes(run.payload))
    return out / RESULTS_FILE


def read_folder(run_dir: str | Path) -> RunResults:
    """Read a results folder of schema 1 or 2; raise ResultsError naming the file at fault."""
    root = Path(run_dir)
    if not root.is_dir():
        raise ResultsError(f"{root}: not a results folder (no such directory)")
    payload = _read_json(root / RESULTS_FILE)
    version = payload.get("schema_version")
    if version == 1:
        return _from_schema_1(root / RESULTS_FILE, payload)
    if version != SCHEMA_VERSION:
        if isinstance(version, int) and version > SCHEMA_VERSION:
            raise ResultsError(
                f"{root / RESULTS_FILE}: schema_version {version} was written by a newer gacc-hf; "
                f"this one reads schema 1 to {SCHEMA_VERSION}: upgrade gacc-hf"
            )
        raise ResultsError(
            f"{root / RESULTS_FILE}: unknown schema_version {version!r}; this gacc-hf reads 1 to {SCHEMA_VERSION}"
        )
    _require(root / RESULTS_FILE, payload, ("config", "scores", "integrity", "calls", "tokenizer", "files"))
    tables = {key: _read_table(root, key, payload["files"]) for key in _TABLES}
    return RunResults(payload, tables["answers"], tables["memories"])


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ResultsError(f"{path}: missing; a results folder holds {RESULTS_FILE}, {ANSWERS_FILE}, {MEMORIES_FILE}")
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{path}: not valid JSON (truncated or corrupted?): {exc}") from exc
    if not isinstance(payload, dict):
        raise ResultsError(f"{path}: expected a JSON object, got {type(payload).__name__}")
    if "schema_version" not in payload:
        raise ResultsError(f"{path}: no schema_version; not a gacc-hf results file")
    return payload


def _require(path: Path, payload: Mapping[str, Any], keys: tuple[str, ...]) -> None:
    missing = [k for k in keys if k not in payload]
    if missing:
        raise ResultsError(f"{path}: missing field(s) {', '.join(missing)}")


def _read_table(root: Path, key: str, files: Any) -> list[dict[str, Any]]:
    name = _TABLES[key][0]
    path = root / name
    entry = files.get(key) if isinstance(files, Mapping) else None
    if not isinstance(entry, Mapping) or not {"rows", "sha256"} <= entry.keys():
        raise ResultsError(f"{root / RESULTS_FILE}: field files.{key} must record the rows and sha256 of {name}")
    if not path.is_file():
        raise ResultsError(f"{path}: missing (results.json lists it with {entry['rows']} rows)")
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise ResultsError(
            f"{path}: content does not match the sha256 recorded in {RESULTS_FILE} (truncated or replaced?)"
        )
    try:
        rows = pq.read_table(io.BytesIO(data)).to_pylist()
    except (pa.ArrowException, OSError) as exc:
        raise ResultsError(f"{path}: not a readable parquet file: {exc}") from exc
    if len(rows) != entry["rows"]:
        raise ResultsError(f"{path}: {len(rows)} rows, but {RESULTS_FILE} records {entry['rows']}")
    return rows


def _from_schema_1(path: Path, payload: dict[str, Any]) -> RunResults:
    """Schema 1 kept the ledger and answers inside results.json and had no top-level seed."""
    _require(path, payload, ("config", "scores", "integrity", "calls", "tokenizer", "memories", "answers"))
    rest = {k: v for k, v in payload.items() if k not in ("schema_version", "memories", "answers")}
    body = {"schema_version": SCHEMA_VERSION, "seed": payload["config"].get("seed"), **rest}
    return RunResults(body, list(payload["answers"]), list(payload["memories"]))
