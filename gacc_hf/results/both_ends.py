"""One job per item of a list, worked from both ends: fresh processes take the items from the first on, this
process from the last back, and each item is claimed once, so the two meet where the work is done.

Checking a run of a board is seconds of CPU; a fresh process spends about half a second importing gacc-hf before
its first item, while this one starts at once. Each item is claimed under one lock shared by every process
(`multiprocessing.Array`): a process that finds its next item claimed by the other end stops there, and the pool's
items queued ahead of a worker cost it nothing once this process has claimed them. No item waits in one process
while another sits idle.

Crash behaviour: a job that raises in a fresh process is raised here when this process next looks (after each
of its own items, then as they end), and the items not yet started are dropped; nothing is written here.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from typing import Any, TypeVar

T = TypeVar("T")
Job = Callable[..., T]

_claims: Any = None  # in a fresh process: the flags of the items claimed, shared with every other (`_share`)


def both_ends(job: Job[T], items: Sequence[tuple[Any, ...]], workers: int, ended: Callable[[], None]) -> list[T]:
    """`job(*item)` of every item, in the order given, on this process and `workers` fresh ones (spawned: no copy
    of this process's threads); `ended()` after each item ends, wherever it ran."""
    context = multiprocessing.get_context("spawn")
    claims = context.Array("b", len(items))  # 1: an item some process has taken
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_share, initargs=(claims,)) as pool:
        futures = [pool.submit(_claimed, job, i, item) for i, item in enumerate(items)]
        try:
            here: dict[int, T] = {}
            counted: set[Future[tuple[bool, T | None]]] = set()  # futures whose item `ended` has counted
            for i in reversed(range(len(items))):
                if not _claim(claims, i):
                    break
                here[i] = job(*items[i])
                ended()
                _count([f for f in futures if f.done() and f not in counted], counted, ended)
            _count(as_completed(f for f in futures if f not in counted), counted, ended)
            return [here[i] if i in here else f.result()[1] for i, f in enumerate(futures)]  # type: ignore[misc]
        except BaseException:
            pool.shutdown(cancel_futures=True)
            raise


def _count(done: Any, counted: set[Future[tuple[bool, Any]]], ended: Callable[[], None]) -> None:
    """`ended()` for each finished future that did its item (one that found it claimed here did none); a job
    that raised is raised."""
    for future in done:
        counted.add(future)
        if future.result()[0]:
            ended()


def _share(claims: Any) -> None:
    global _claims
    _claims = claims


def _claim(claims: Any, i: int) -> bool:
    """Take item `i` for the calling process: False where another process took it first."""
    with claims.get_lock():
        if claims[i]:
            return False
        claims[i] = 1
        return True


def _claimed(job: Job[T], i: int, item: tuple[Any, ...]) -> tuple[bool, T | None]:
    """In a fresh process: (True, `job(*item)`), or (False, None) where this process found item `i` taken."""
    return (True, job(*item)) if _claim(_claims, i) else (False, None)
