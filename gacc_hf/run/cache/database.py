"""What a cache file is and what went wrong with it: gacc's mark on its database, and faults of the disk.

A gacc cache holds exactly the tables `entries` and `meta`; a new one is also marked with SQLite's
`application_id` (caches written before the mark have 0 there and stay readable). A database that holds
other tables, or carries another application's mark, is refused: gacc never adds its tables to it.

A full disk or an I/O error is not damage: SQLite rolls the unfinished write back, so the entries stored
before it are intact, and the message says so instead of advising to delete the cache.
"""

from __future__ import annotations

import sqlite3

APPLICATION_ID = 0x67616363  # "gacc" in ASCII, in the database header
TABLES = frozenset({"entries", "meta"})


class CacheError(RuntimeError):
    """The cache cannot be used as it is: unreadable or damaged file, other schema, read-only, locked."""


def is_new_cache(db: sqlite3.Connection, where: str) -> bool:
    """Whether the database is empty (gacc's tables are to be created); CacheError when it is not a gacc cache."""
    mark = db.execute("PRAGMA application_id").fetchone()[0]
    rows = db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")
    tables = {row[0] for row in rows}
    if mark == APPLICATION_ID or (mark == 0 and tables == TABLES):
        return False
    if mark == 0 and not tables:
        return True
    held = f"tables {', '.join(sorted(tables)[:5])}" if tables else "no tables"
    raise CacheError(
        f"cache {where} is not a gacc cache (a SQLite database with {held}, application_id {mark}): gacc never "
        "writes into another database; pass another --cache-dir, or move that file away"
    )


def environment_fault(exc: BaseException) -> str | None:
    """What a full disk or an I/O error means for the cache (None: another kind of failure)."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name == "SQLITE_FULL":
        cause = "the disk is full"
        remedy = "free some space (or pass a --cache-dir on another disk)"
    elif name.startswith("SQLITE_IOERR"):
        cause = "an I/O error"
        remedy = "check the disk, and that nothing moved or deleted the cache's -wal/-shm files while it was open"
    else:
        return None
    return (
        f"{cause} ({name}: {exc}); the entries stored before it are intact (an unfinished write is rolled back, "
        f"`gacc cache check` verifies them): {remedy}, then rerun the same command"
    )
