"""The results folder of a run, on disk: write it atomically, keep every run, read it back, handle older schemas.

Layout (schema 2):

    results.json       config (with the data identity and each method's spec), the command line, seed,
                       versions, git revision, tokenizer identity, integrity, exposures, calls, scores with
                       CIs, errors, and the row count + sha256 of each parquet file
    answers.parquet    one row per question per (compressor, condition, ratio): ids, the question text, the
                       gold references (`references`), memory hash, answer, verdict
    memories.parquet   the memory ledger (DESIGN 1.9), one row per (compressor, goal, condition, ratio), with
                       the memory text (`memory`)
    report.md, *.png   derived from the above (`gacc_hf.results.report`)

Writing is all or nothing. A folder is built in a hidden temporary sibling (`.NAME.tmp-PID-HEX`) and moved
into place with one `os.rename`. Replacing an existing folder takes three steps: rename it aside
(`.NAME.old`), rename the new one in, delete the aside. A kill at any moment therefore leaves, under NAME,
either the previous complete folder or the new complete one, never a mix, and no file of the previous run
survives in the new one. The one in-between state, NAME missing and `.NAME.old` present, is the previous
complete folder: `read_folder` reads it there, and the next writer (`recover`) renames it back or, when
NAME exists, deletes it with any dead writer's temporary folder. The recorded sha256 of each parquet file
ties the files of a folder together.

Kept runs: by default each run gets its own folder `runs/<UTC start>-<data>-<compressors>` and the symlink
`runs/latest` is repointed at the newest in one `os.replace`. Schema 1 (ledger and answers embedded in
`results.json`) is still read, and rows written before a column existed read without it; anything else is
refused with a message naming the file.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import secrets
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

SCHEMA_VERSION = 2
RESULTS_FILE = "results.json"
ANSWERS_FILE = "answers.parquet"
MEMORIES_FILE = "memories.parquet"
RUNS_DIR = "runs"
LATEST = "latest"
#: Conditions whose rows are upper bounds, not methods (rows written before the `ceiling` flag existed).
CEILING_CONDITIONS = ("full", "oracle")

_STR, _F64, _I64, _BOOL = pa.string(), pa.float64(), pa.int64(), pa.bool_()
# Known column types, so an all-null column (e.g. `error` in a clean run) keeps its type in the file.
ANSWER_TYPES: dict[str, pa.DataType] = {
    "compressor": _STR,
    "condition": _STR,
    "ratio": _F64,
    "context_id": _STR,
    "goal_id": _STR,
    "shown_goal_id": _STR,
    "language": _STR,
    "question_id": _STR,
    "memory_sha256": _STR,
    "question": _STR,
    "references": pa.list_(_STR),
    "evidence": _BOOL,
    "ceiling": _BOOL,
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
    "memory": _STR,
    "evidence_hits": _I64,
    "n_questions": _I64,
    "ceiling": _BOOL,
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


def is_ceiling(row: Mapping[str, Any]) -> bool:
    """Whether a score, answer or memory row is an upper bound (full context, oracle), never a method."""
    return bool(row.get("ceiling", row.get("condition") in CEILING_CONDITIONS))


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


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _aside(out: Path) -> Path:
    return out.with_name(f".{out.name}.old")


def _target(out_dir: str | Path) -> Path:
    """The folder a path names; a symlink (`runs/latest`) names the folder it points at."""
    out = Path(out_dir)
    return out.resolve() if out.is_symlink() else out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover(out_dir: str | Path) -> None:
    """Finish or undo a replace that was interrupted, and drop the temporary folders of dead writers."""
    out = _target(out_dir)
    aside = _aside(out)
    if aside.is_dir():
        if out.exists():
            shutil.rmtree(aside)  # the new folder was moved in: the previous one is garbage
        else:
            os.rename(aside, out)  # killed between the two renames: the previous folder comes back
    for tmp in out.parent.glob(f".{out.name}.tmp-*"):
        match = re.fullmatch(rf"\.{re.escape(out.name)}\.tmp-(\d+)-[0-9a-f]+", tmp.name)
        if tmp.is_dir() and match and not _alive(int(match.group(1))):
            shutil.rmtree(tmp, ignore_errors=True)


def is_results_folder(path: str | Path) -> bool:
    """Whether `path` holds a run (its results.json, or the aside copy an interrupted replace left)."""
    out = _target(path)
    return (out / RESULTS_FILE).is_file() or (_aside(out) / RESULTS_FILE).is_file()


def check_output_dir(path: str | Path, overwrite: bool) -> None:
    """Refuse, before any work, an output folder that holds another run (unless `overwrite`) or other files."""
    _refuse_foreign(_target(path))
    if is_results_folder(path) and not overwrite:
        raise ResultsError(
            f"{path}: holds another run ({RESULTS_FILE}); pass --overwrite to replace it, or choose another "
            "--output-dir (without --output-dir every run gets its own folder under runs/)"
        )


def _refuse_foreign(out: Path) -> None:
    """Only a results folder or an empty one may be replaced: other files are never deleted."""
    if out.exists() and not is_results_folder(out) and (not out.is_dir() or any(out.iterdir())):
        raise ResultsError(f"{out}: exists and is not a results folder; refusing to replace it, choose another")


def replace_folder(out_dir: str | Path, fill: Callable[[Path], object]) -> Path:
    """Build a folder with `fill(staging_dir)` and move it into place atomically (see the module doc).

    The folder replaced must be a results folder or empty: other files are never deleted.
    """
    out = _target(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    recover(out)
    _refuse_foreign(out)
    stage = out.with_name(f".{out.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    stage.mkdir()
    try:
        fill(stage)
        _fsync_dir(stage)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    replacing = out.exists()
    if replacing:
        os.rename(out, _aside(out))
    os.rename(stage, out)
    _fsync_dir(out.parent)
    if replacing:
        shutil.rmtree(_aside(out))
    return out


def folder_files(run: RunResults) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The `results.json` document (current schema, file checksums) and the bytes of every data file."""
    data: dict[str, bytes] = {}
    files = {}
    for key, (name, types) in _TABLES.items():
        data[name] = parquet_bytes(getattr(run, key), types)
        files[key] = {"path": name, "rows": len(getattr(run, key)), "sha256": hashlib.sha256(data[name]).hexdigest()}
    payload = {**run.payload, "schema_version": SCHEMA_VERSION, "files": files}
    data[RESULTS_FILE] = json_bytes(payload)
    return payload, data


def write_folder(
    run: RunResults, out_dir: str | Path, extra: Callable[[RunResults, Path], object] | None = None
) -> Path:
    """Write a whole results folder atomically: the data files, then `extra(run, staging_dir)` (report, plots).

    `run.payload` is updated to the document written. Returns the path of results.json.
    """
    run.payload, data = folder_files(run)

    def fill(stage: Path) -> None:
        for name, content in data.items():
            write_atomic(stage / name, content)
        if extra is not None:
            extra(run, stage)

    return replace_folder(out_dir, fill) / RESULTS_FILE


def _slug(part: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+_-]+", "_", part).strip("._-")


def new_run_dir(started: datetime, parts: Sequence[str], root: str | Path = RUNS_DIR) -> Path:
    """A fresh folder name `<root>/<UTC start>-<parts...>` (lm-eval style), unique under `root`."""
    stamp = started.strftime("%Y%m%dT%H%M%SZ")
    name = "-".join(filter(None, [stamp, *(_slug(p)[:40] for p in parts)]))
    path, n = Path(root) / name, 1
    while path.exists() or _aside(path).exists():
        n += 1
        path = Path(root) / f"{name}-{n}"
    return path


def point_latest(run_dir: str | Path) -> Path:
    """Repoint `<parent>/latest` at `run_dir` in one step (a temporary symlink moved over it).

    A real folder left there by an older gacc-hf is kept, renamed to a run folder of its own.
    """
    target = Path(run_dir)
    link = target.parent / LATEST
    if link.is_dir() and not link.is_symlink():
        os.rename(link, new_run_dir(datetime.fromtimestamp(link.stat().st_mtime, UTC), ["earlier"], link.parent))
    tmp = link.with_name(f".{LATEST}.tmp-{os.getpid()}")
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    os.symlink(target.name, tmp)
    os.replace(tmp, link)
    return link


def read_folder(run_dir: str | Path) -> RunResults:
    """Read a results folder of schema 1 or 2; raise ResultsError naming the file at fault.

    A folder caught between the two renames of a replace is read from its aside copy (the previous run).
    """
    root = Path(run_dir)
    if not root.is_dir() and _aside(_target(root)).is_dir():
        root = _aside(_target(root))
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
