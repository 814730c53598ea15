"""Python's cyclic garbage collector paused while a results folder's rows are built and scored.

Reading a release-size run makes some 300,000 row dicts, and scoring it several million small objects. Each
burst of allocations sets off the collector, which then walks every object still alive, the rows included, so
the work grows with the rows already read: on a run of 236,532 answers the collector took about a third of the
CPU of checking it (`benchmarks/board.py`). The rows hold no reference cycles, so nothing is left uncollected:
the pause ends with the block, and what a cycle may hold is collected then as usual.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off for the block (or the decorated call), then back as it was: a pause inside a pause,
    or one begun with the collector already off, leaves it off.

    >>> with collector_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
