"""Fewer garbage-collector passes while a run builds its rows.

A large run holds hundreds of thousands of live row dicts. CPython starts a young-generation collection
every 700 (net) allocations of container objects and walks the middle generation every 10 of those, so
a warm rerun of 108,000 question rows spent a quarter of its time collecting (measured with
`benchmarks/harness.py`, CHANGELOG.md) and found nothing to free: the rows are kept, they are not
cycles. While a run is in progress the first two thresholds are raised: young collections still run
(short-lived cycles are still freed), about 140 times less often, and the middle generation is walked
five times less often per young collection. The caller's thresholds come back afterwards.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

# During a run: container allocations (net) between young-generation collections, and young collections
# between middle-generation ones (so the middle generation, where the rows pile up, is walked rarely).
RUN_THRESHOLDS = (100_000, 50)

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, int, int] | None = None


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the collector's first two thresholds (never lower them) for the block; restore them when the
    last of nested or concurrent blocks ends.

    >>> before = gc.get_threshold()
    >>> with fewer_collections():
    ...     gc.get_threshold()[:2] == RUN_THRESHOLDS
    True
    >>> gc.get_threshold() == before
    True
    """
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            first, second, third = _saved
            gc.set_threshold(max(first, RUN_THRESHOLDS[0]), max(second, RUN_THRESHOLDS[1]), third)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                _saved = None
