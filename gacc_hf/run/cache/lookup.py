"""How `Cache.get_many` finds the stored texts of many keys: one scan of a kind, or a probe per key.

A warm rerun asks for (nearly) every entry of a kind that it wrote itself, and reading the kind's whole
key range once is about twice as fast as a primary-key probe per key, even with the probes sorted. A run
that asks for a few keys of a large cache (another experiment's entries beside its own) is better served
by the probes. The entries of the kind are counted first (a few milliseconds for 100,000) and the scan
is taken when the keys asked for are at least half of them, so it reads at most twice the rows it keeps.
Either way the rows come in key order, and only the rows of the keys asked for are returned, so a
damaged value that was not asked for is never read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

_SELECT_CHUNK = 500


def stored_texts(db: sqlite3.Connection, kind: str, keys: set[str]) -> Iterator[tuple[str, str]]:
    """(key, stored text) of each of `keys` that the `entries` table holds under `kind`, in key order."""
    if not keys:
        return
    stored = db.execute("SELECT COUNT(*) FROM entries WHERE kind=?", (kind,)).fetchone()[0]
    if 2 * len(keys) >= stored:
        for key, text in db.execute("SELECT key, value FROM entries WHERE kind=?", (kind,)):
            if key in keys:
                yield key, text
        return
    ordered = sorted(keys)  # neighbouring probes share pages: half the time of a large lookup
    for i in range(0, len(ordered), _SELECT_CHUNK):
        chunk = ordered[i : i + _SELECT_CHUNK]
        yield from db.execute(
            f"SELECT key, value FROM entries WHERE kind=? AND key IN ({','.join('?' * len(chunk))})", (kind, *chunk)
        )
