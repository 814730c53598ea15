"""The cache's store: `Cache` (open, read, write, check) and the journal mode a file system allows; the format
and crash behaviour are those of the package (`gacc_hf.run.cache`), the keys those of `gacc_hf.keys`."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from gacc_hf.run.cache.database import APPLICATION_ID, CacheError, environment_fault, is_new_cache
from gacc_hf.run.cache.lookup import stored_texts
from gacc_hf.run.cache.values import usual_shape, value_problem
from gacc_hf.text.hygiene import encoding_problem

CACHE_FILENAME = "gacc-cache.sqlite3"
SCHEMA_VERSION = 1
JOURNAL_ENV = "GACC_CACHE_JOURNAL"
JOURNAL_MODES = ("wal", "delete")
# File systems on which SQLite's shared-memory WAL index cannot be trusted (a node-local disk is fine).
NETWORK_FILESYSTEMS = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "lustre", "gpfs", "beegfs", "ceph", "glusterfs", "9p", "afs", "ocfs2"}
    | {"gfs2", "fuse.sshfs", "fuse.glusterfs", "fuse.ceph", "fuse.s3fs", "fuse.rclone", "fuse.juicefs", "fuse.gcsfuse"}
)
_log = logging.getLogger(__name__)


def filesystem_type(path: str | Path, mounts: str | None = None) -> str | None:
    """The type of the file system holding `path` (`mounts`: the text of /proc/mounts; None: read it).

    None where it cannot be told (no /proc/mounts: not Linux).

    >>> filesystem_type("/data/c", "srv:/x /data nfs4 rw 0 0\\n/dev/sda1 / ext4 rw 0 0\\n")
    'nfs4'
    """
    if mounts is None:
        try:
            mounts = Path("/proc/mounts").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    target = os.path.realpath(path)
    best, kind = "", None
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > len(best):
            best, kind = point, fields[2]
    return kind


def journal_mode(folder: str | Path, environ: Mapping[str, str] | None = None) -> str:
    """`wal` on a local file system, `delete` on a network one; `$GACC_CACHE_JOURNAL` overrides."""
    env = os.environ if environ is None else environ
    chosen = env.get(JOURNAL_ENV, "").strip().lower()
    if chosen:
        if chosen not in JOURNAL_MODES:
            raise CacheError(f"{JOURNAL_ENV}={chosen!r}: use one of {', '.join(JOURNAL_MODES)}")
        return chosen
    return "delete" if filesystem_type(folder) in NETWORK_FILESYSTEMS else "wal"


def _set_journal(db: sqlite3.Connection, mode: str, timeout: float) -> None:
    """Switch the journal mode, waiting out other processes that open the same new file at the same moment.

    SQLite answers "database is locked" to a concurrent journal-mode switch at once, without its busy
    handler (seen with several ranks starting together), so the wait is done here.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            db.execute(f"PRAGMA journal_mode={mode.upper()}")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _readable_only(file: Path) -> bool:
    """Whether an existing cache file can be read but not written (file or folder read-only)."""
    return file.exists() and not (os.access(file, os.W_OK) and os.access(file.parent, os.W_OK))


class Cache:
    """A SQLite-backed content-addressed store; `Cache(None)` keeps everything in memory."""

    def __init__(self, cache_dir: str | Path | None = None, timeout: float = 60.0) -> None:
        self.read_only = False
        self.rejected: list[str] = []  # "kind/key: problem" of every stored value found unusable
        self._bad: set[tuple[str, str]] = set()
        if cache_dir is None:
            self.path: Path | None = None
            self._db = self._open(":memory:", "memory", timeout)
            return
        folder = Path(cache_dir)
        self.path = folder / CACHE_FILENAME
        if folder.exists() and not folder.is_dir():
            raise CacheError(f"cache folder {folder} is a file, not a folder: pass another --cache-dir")
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(f"cannot create the cache folder {folder}: {exc.strerror or exc}") from exc
        if _readable_only(self.path):
            self.read_only = True
            self._db = self._open_read_only(timeout)
        elif not self.path.exists() and not os.access(folder, os.W_OK):
            raise CacheError(f"cache folder {folder} is not writable and holds no cache: pass another --cache-dir")
        else:
            self._db = self._open(str(self.path), journal_mode(folder), timeout)

    def _damaged(self, exc: BaseException) -> CacheError:
        where = self.path or ":memory:"
        if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
            return CacheError(f"cache {where} stayed locked by another process: {exc}; retry when it is done")
        fault = environment_fault(exc)
        if fault:
            return CacheError(f"cache {where}: {fault}")
        return CacheError(
            f"cache {where} is damaged or not a gacc cache ({type(exc).__name__}: {exc}): move it aside or delete "
            "it and rerun (its entries are recomputed)"
        )

    def _open(self, target: str, journal: str, timeout: float) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(target, timeout=timeout, isolation_level=None, check_same_thread=False)
            if journal != "memory":
                is_new_cache(db, target)  # a foreign database is refused before anything is written to it
                _set_journal(db, journal, timeout)
            db.execute("PRAGMA synchronous=NORMAL")
            with self._transaction_of(db):  # other processes see no tables or all of them, and the mark
                if is_new_cache(db, target):
                    db.execute(
                        "CREATE TABLE entries (kind TEXT NOT NULL, key TEXT NOT NULL, "
                        "value TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (kind, key)) WITHOUT ROWID"
                    )
                    db.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
                    db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                    db.execute(f"PRAGMA application_id={APPLICATION_ID}")
        except sqlite3.Error as exc:
            raise self._damaged(exc) from exc
        filesystem = filesystem_type(target) if journal != "memory" else None
        if filesystem in NETWORK_FILESYSTEMS:
            _log.warning(
                "cache %s is on a network file system (%s), journal_mode=%s: never share it between machines "
                "(give each machine a local --cache-dir; see the README)",
                target,
                filesystem,
                journal.upper(),
            )
        self._check_schema(db)
        return db

    def _open_read_only(self, timeout: float) -> sqlite3.Connection:
        """Read-only, then (a WAL file whose folder cannot hold the -shm index) immutable: nobody can write it."""
        last: sqlite3.Error | None = None
        for flags in ("mode=ro", "mode=ro&immutable=1"):
            try:
                db = sqlite3.connect(
                    f"{self.path.absolute().as_uri()}?{flags}",  # type: ignore[union-attr]  # a URI names a whole path
                    uri=True,
                    timeout=timeout,
                    isolation_level=None,
                    check_same_thread=False,
                )
                self._check_schema(db)
                _log.info("cache %s is read-only: reading it, storing nothing", self.path)
                return db
            except sqlite3.Error as exc:
                last = exc
        raise self._damaged(last) from last  # type: ignore[arg-type]

    def _check_schema(self, db: sqlite3.Connection) -> None:
        try:
            is_new_cache(db, str(self.path))  # refuses a foreign database
            found = db.execute("SELECT value FROM meta WHERE name='schema_version'").fetchone()
            db.execute("SELECT kind, key, value FROM entries LIMIT 1").fetchall()
        except sqlite3.Error as exc:
            if isinstance(exc, sqlite3.OperationalError) and "unable to open" in str(exc):
                raise
            raise self._damaged(exc) from exc
        if found is None or found[0] != str(SCHEMA_VERSION):
            raise CacheError(
                f"cache {self.path} has schema version {found and found[0]}, this gacc-hf reads {SCHEMA_VERSION}: "
                "pass another --cache-dir (or move this one aside)"
            )

    @contextlib.contextmanager
    def _sqlite(self) -> Iterator[None]:
        """Turn SQLite failures of a running cache (corrupt pages found late, I/O errors) into CacheError."""
        try:
            yield
        except sqlite3.Error as exc:
            raise self._damaged(exc) from exc

    def get_many(self, kind: str, keys: Iterable[str]) -> dict[str, Any]:
        """The stored values of those keys that are present and usable (see the module doc), in key
        order; how they are found: `gacc_hf.run.cache.lookup`."""
        found: dict[str, Any] = {}
        usual = usual_shape(kind)
        with self._sqlite():
            for key, text in stored_texts(self._db, kind, set(keys)):
                if usual is not None:  # the common case, accepted in line; anything else goes to `_parse`
                    try:
                        value, end = _scan_value(text, 0)
                        if end == len(text) and usual(value):
                            found[key] = value
                            continue
                    except (StopIteration, ValueError, RecursionError, TypeError):
                        pass
                value, problem = _parse(kind, text)
                if problem is None:
                    found[key] = value
                else:
                    self.reject(kind, key, problem)
        return found

    def reject(self, kind: str, key: str, problem: str) -> None:
        """Mark a stored entry unusable: logged once, listed in `rejected`, replaced by the next write of its key."""
        if (kind, key) not in self._bad:
            self._bad.add((kind, key))
            self.rejected.append(f"{kind}/{key}: {problem}")
            _log.warning("cache %s: entry %s/%s is unusable (%s); recomputing it", self.path, kind, key[:16], problem)

    def put_many(self, kind: str, items: Mapping[str, Any]) -> None:
        """Store values atomically (one transaction); existing keys keep their first value, except an
        entry `get_many` found unusable, which is replaced. A value `get_many` could not read back (wrong
        shape, unencodable text) raises ValueError naming the key, and nothing of the batch is stored."""
        if not items:
            return
        if self.read_only:
            raise CacheError(
                f"cache {self.path} is read-only: cannot store {len(items)} new {kind} entries; make it writable "
                "or pass another --cache-dir (a warm rerun only reads)"
            )
        now = time.time()
        fresh, replace = [], []
        for key, value in items.items():
            try:
                text = json.dumps(value, ensure_ascii=False)
            except (TypeError, ValueError, RecursionError) as exc:
                raise ValueError(f"cannot store {kind}/{key}: not JSON-serialisable ({exc})") from exc
            problem = encoding_problem(text) or value_problem(kind, value)
            if problem:
                raise ValueError(f"cannot store {kind}/{key}: {problem}")
            (replace if (kind, key) in self._bad else fresh).append((kind, key, text, now))
        with self._sqlite(), self._transaction():
            self._db.executemany("INSERT OR IGNORE INTO entries VALUES (?, ?, ?, ?)", fresh)
            self._db.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?)", replace)
        self._bad.difference_update((kind, key) for _, key, _, _ in replace)

    def _transaction(self) -> contextlib.AbstractContextManager[None]:
        return self._transaction_of(self._db)

    @staticmethod
    @contextlib.contextmanager
    def _transaction_of(db: sqlite3.Connection) -> Iterator[None]:
        db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def count(self, kind: str | None = None) -> int:
        with self._sqlite():
            if kind is None:
                return self._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
            return self._db.execute("SELECT COUNT(*) FROM entries WHERE kind=?", (kind,)).fetchone()[0]

    def entries(self) -> Iterator[tuple[str, str, Any]]:
        """Every usable entry as (kind, key, value); unusable ones are skipped (and logged)."""
        with self._sqlite():
            for kind, key, text in self._db.execute("SELECT kind, key, value FROM entries").fetchall():
                value, problem = _parse(kind, text)
                if problem is None:
                    yield kind, key, value
                else:
                    self.reject(kind, key, problem)

    def check(self) -> list[str]:
        """Problems found by SQLite's integrity check and by parsing and shape-checking every value
        (`value_problem`); empty: healthy. Never raises: a file SQLite cannot read is one problem.
        Run it after a crash to see that nothing half-written remains."""
        try:
            problems = [f"sqlite: {r[0]}" for r in self._db.execute("PRAGMA integrity_check") if r[0] != "ok"]
            for kind, key, text in self._db.execute("SELECT kind, key, value FROM entries"):
                problem = _parse(kind, text)[1]
                if problem:
                    problems.append(f"{kind}/{key}: {problem}")
        except sqlite3.Error as exc:
            return [str(self._damaged(exc))]
        return problems

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


# The C scanner behind `json.loads`, called directly: for a text that starts with a value and ends where it
# ends (all the cache writes) it gives what `json.loads` gives, without loads' per-call Python layers.
_scan_value = json.JSONDecoder().scan_once


def _parse(kind: str, text: Any) -> tuple[Any, str | None]:
    """A stored value and its problem (None: usable)."""
    if not isinstance(text, str):
        return None, f"value is stored as {type(text).__name__}, not JSON text"
    try:
        value, end = _scan_value(text, 0)
        if end == len(text):
            return value, value_problem(kind, value)
    except (StopIteration, ValueError, RecursionError):
        pass  # not the plain shape: `json.loads` decides, and names the problem
    try:
        value = json.loads(text)
    except ValueError:
        return None, "value is not valid JSON"
    except RecursionError:
        return None, "value is JSON nested too deeply to read"
    return value, value_problem(kind, value)


def check_cache(cache_dir: str | Path) -> list[str]:
    """Every problem of the cache in a folder, including a file that cannot be opened; never raises."""
    try:
        cache = Cache(cache_dir)
    except CacheError as exc:
        return [str(exc)]
    with cache:
        return cache.check()


def merge_caches(target: str | Path, sources: Iterable[str | Path]) -> int:
    """Copy every usable entry of the source caches into the target cache; the number of new entries.

    Entries are content-addressed and immutable, so the union of per-machine caches is the cache one
    shared file would have held; keys the target already has keep their value.
    """
    added = 0
    with Cache(target) as dest:
        for source in sources:
            with Cache(source) as src:
                by_kind: dict[str, dict[str, Any]] = {}
                for kind, key, value in src.entries():
                    by_kind.setdefault(kind, {})[key] = value
            for kind, values in by_kind.items():
                dest.get_many(kind, values)  # marks unusable target entries, which these values then replace
                before = dest.count(kind)
                dest.put_many(kind, values)
                added += dest.count(kind) - before
    return added
