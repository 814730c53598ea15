"""Content-addressed store of memories, answers, verdicts and independent token counts.

Format: one SQLite file (`gacc-cache.sqlite3` in the cache directory) in WAL mode with a single table

    entries(kind TEXT, key TEXT, value TEXT, created REAL, PRIMARY KEY (kind, key))

`kind` is one of `memory`, `answer`, `verdict`, `count`; `key` is the sha256 of a canonical record of
everything the value depends on (DESIGN 1.11: content hashes of the inputs, the budget, the tokenizer
revision and the method's name and revision); `value` is JSON. Entries are immutable: a second write
of the same key is ignored, so concurrent writers of the same content agree.

Crash behaviour: every `put_many` is one SQLite transaction. A process killed mid-write leaves the
transaction uncommitted and SQLite rolls it back on the next open, so a reader sees either the whole
batch or none of it, never a partial entry. Several processes may share one file: WAL lets readers
proceed during a write, and writers wait on a busy timeout instead of failing.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

CACHE_FILENAME = "gacc-cache.sqlite3"
SCHEMA_VERSION = 1
_SELECT_CHUNK = 500


def make_key(**parts: str | int | float | bool | None) -> str:
    """sha256 over the key parts in sorted order, as `name<US>value` records joined by `<RS>`.

    Values are scalars (texts enter as their `text_hash`), so the encoding is canonical and cheap.
    """
    blob = "\x1e".join(f"{name}\x1f{parts[name]!r}" for name in sorted(parts))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=1 << 16)
def text_hash(text: str) -> str:
    """sha256 of a text, the content address used inside keys (memoised: texts repeat across a plan)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# The field every stored value of a kind carries, and its type; `count` values are plain integers.
_VALUE_FIELDS: dict[str, tuple[str, type]] = {
    "memory": ("memory", str),
    "answer": ("answer", str),
    "verdict": ("correct", bool),
}


def value_problem(kind: str, value: Any) -> str | None:
    """What is wrong with a stored value of `kind` (None: nothing). Failures are never stored, so a value
    carrying an `error` is a problem too. Kinds other than the runner's are not checked.

    >>> value_problem("verdict", {"correct": True}) is None
    True
    >>> value_problem("answer", {"error": "reader failed"})
    "a failure was stored (an 'error' field); failures are never cached"
    """
    if kind == "count":
        return None if type(value) is int and value >= 0 else f"a count must be a non-negative int, got {value!r:.80}"
    if kind not in _VALUE_FIELDS:
        return None
    if isinstance(value, dict) and "error" in value:
        return "a failure was stored (an 'error' field); failures are never cached"
    name, kind_type = _VALUE_FIELDS[kind]
    if not isinstance(value, dict) or type(value.get(name)) is not kind_type:
        return f"a {kind} value needs a {kind_type.__name__} {name!r}, got {value!r:.80}"
    return None


class CacheError(RuntimeError):
    """The cache file is unreadable or from an incompatible schema."""


def _enable_wal(db: sqlite3.Connection, timeout: float) -> None:
    """Switch to WAL, waiting out other processes that open the same new file at the same moment.

    SQLite answers "database is locked" to a concurrent journal-mode switch at once, without its busy
    handler (seen with several ranks starting together), so the wait is done here.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


class Cache:
    """A SQLite-backed content-addressed store; `Cache(None)` keeps everything in memory."""

    def __init__(self, cache_dir: str | Path | None = None, timeout: float = 60.0) -> None:
        if cache_dir is None:
            self.path: Path | None = None
            target = ":memory:"
        else:
            Path(cache_dir).mkdir(parents=True, exist_ok=True)
            self.path = Path(cache_dir) / CACHE_FILENAME
            target = str(self.path)
        try:
            self._db = sqlite3.connect(target, timeout=timeout, isolation_level=None, check_same_thread=False)
            _enable_wal(self._db, timeout)
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS entries (kind TEXT NOT NULL, key TEXT NOT NULL, "
                "value TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (kind, key)) WITHOUT ROWID"
            )
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            found = self._db.execute("SELECT value FROM meta WHERE name='schema_version'").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise CacheError(f"cannot open cache {target}: {exc}") from exc
        if found != str(SCHEMA_VERSION):
            raise CacheError(f"cache {target} has schema version {found}, this gacc-hf reads {SCHEMA_VERSION}")

    def get_many(self, kind: str, keys: Iterable[str]) -> dict[str, Any]:
        """The stored values of those keys that are present."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, Any] = {}
        for i in range(0, len(keys), _SELECT_CHUNK):
            chunk = keys[i : i + _SELECT_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(f"SELECT key, value FROM entries WHERE kind=? AND key IN ({marks})", (kind, *chunk))
            found.update((k, json.loads(v)) for k, v in rows)
        return found

    def put_many(self, kind: str, items: Mapping[str, Any]) -> None:
        """Store values atomically (one transaction); existing keys keep their first value."""
        if not items:
            return
        now = time.time()
        rows = [(kind, k, json.dumps(v, ensure_ascii=False), now) for k, v in items.items()]
        with self._transaction():
            self._db.executemany("INSERT OR IGNORE INTO entries VALUES (?, ?, ?, ?)", rows)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def count(self, kind: str | None = None) -> int:
        if kind is None:
            return self._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
        return self._db.execute("SELECT COUNT(*) FROM entries WHERE kind=?", (kind,)).fetchone()[0]

    def check(self) -> list[str]:
        """Problems found by SQLite's integrity check and by parsing and shape-checking every value
        (`value_problem`); empty: healthy. Run it after a crash to see that nothing half-written remains."""
        problems = [r[0] for r in self._db.execute("PRAGMA integrity_check") if r[0] != "ok"]
        for kind, key, value in self._db.execute("SELECT kind, key, value FROM entries"):
            try:
                problem = value_problem(kind, json.loads(value))
            except json.JSONDecodeError:
                problem = "value is not valid JSON"
            if problem:
                problems.append(f"{kind}/{key}: {problem}")
        return problems

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
