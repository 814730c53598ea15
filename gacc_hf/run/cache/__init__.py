"""The cache: a content-addressed store of memories, answers, verdicts, what the matcher found and
independent token counts.

Format: one SQLite file (`gacc-cache.sqlite3` in the cache directory) whose entries are the table

    entries(kind TEXT, key TEXT, value TEXT, created REAL, PRIMARY KEY (kind, key))

beside a `meta` table of the cache's schema version (`database`). `kind` is one of `memory`, `answer`,
`verdict`, `matches`, `matches-inputs`, `text` (`matches`), `count`; `key` is the sha256 of a canonical
record of everything the value depends on (docs/protocol.md §11: content hashes of the inputs, the budget,
the tokenizer revision and the method's name and revision); `value` is JSON.
Entries are immutable: a second write of the same key is ignored, so concurrent writers of the same
content agree.

Crash behaviour: every `put_many` is one SQLite transaction. A process killed mid-write leaves the
transaction uncommitted and SQLite rolls it back on the next open, so a reader sees either the whole
batch or none of it, never a partial entry. Several processes of ONE machine may share one file: WAL
lets readers proceed during a write, and writers wait on a busy timeout instead of failing.

Faults: a file that SQLite cannot read (random bytes, corrupt pages, a truncated file) raises `CacheError`
naming the file and the remedy; a single stored value that is not JSON or has the wrong shape is never
used: it is logged, treated as missing (so it is recomputed) and replaced by the next write of its key.
`check()` lists every problem and never raises. A cache whose file or folder is read-only is opened for
reading (a warm rerun needs nothing else); storing into it raises `CacheError`.

Network file systems: WAL needs memory shared by every process that opens the file, so it works only
among the processes of one machine, and on NFS / Lustre / SMB even that is unsafe. On such a file system
the cache uses `journal_mode=DELETE` and warns; `GACC_CACHE_JOURNAL=wal|delete` overrides the choice.
Several machines should not share one cache file at all: give each machine its own local cache folder
(the work is sharded by context, so each machine's rerun finds its own entries) and, if one cache is
wanted afterwards, combine them with `merge_caches`.

Modules: `store` (the `Cache` itself, journal mode, `check_cache`, `merge_caches`), `database` (what
a gacc cache file is; faults of the disk), `lookup` (how many keys are read at once), `values` (the shape a
stored value of each kind must have), `key_template` (many keys of one shape, fast), `matches` (the
matcher's findings per memory, with the texts they came from) and `matches_check` (their recomputation by
`gacc cache check`).
"""

from gacc_hf.run.cache.database import CacheError
from gacc_hf.run.cache.store import CACHE_FILENAME, Cache, check_cache, merge_caches

__all__ = ["CACHE_FILENAME", "Cache", "CacheError", "check_cache", "merge_caches"]
