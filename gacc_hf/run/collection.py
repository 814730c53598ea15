"""Fewer garbage-collector passes while a run builds its rows.

A large run holds hundreds of thousands of live row dicts. CPython starts a collection every 700
allocations of container objects, and every so many of those walks everything alive, so a warm rerun of
108,000 question rows spent a quarter of its time collecting (measured: `benchmarks/harness.py`,
docs/performance.md) and found nothing to free: the rows are kept, not cycles. While a run is in
progress the first-generation threshold is raised, so collections still happen (memory held by real
cycles is still freed) but a hundred times less often; the caller's thresholds come back afterwards.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

RUN_THRESHOLD = 70_000  # container allocations between first-generation collections during a run

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, int, int] | None = None


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the collector's first threshold (never lower it) for the block; restore it when the last
    of nested or concurrent blocks ends.

    >>> before = gc.get_threshold()
    >>> with fewer_collections():
    ...     gc.get_threshold()[0] >= RUN_THRESHOLD
    True
    >>> gc.get_threshold() == before
    True
    """
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            first, *rest = _saved
            gc.set_threshold(max(first, RUN_THRESHOLD), *rest)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                _saved = None
