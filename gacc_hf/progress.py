"""Progress of one role's calls: a bar that moves per item (with rate and ETA) and a one-line summary.

The executor advances the bar as each item's output is in. A method that answers a whole chunk in one
`batch()` call (a local model) can still move it item by item: while the executor runs its `batch()`,
`report(n)` (called by the method after each sub-batch it finishes) advances the bar by `n` items; the
executor settles the exact count when `batch()` returns, so a method that reports nothing, or too
much, never leaves the bar wrong. At the end, `close` logs `role name: items, seconds, items/s` and
the generated tokens per second when the outputs' tokens are known.

In a run of several processes every rank shows its own bars and summaries, labelled `rank r/N` and kept
on a line of their own (`show_rank`), so the work of every rank is seen, not only rank 0's.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar

from tqdm.auto import tqdm

log = logging.getLogger(__name__)
_reporter: ContextVar[Callable[[int], None] | None] = ContextVar("gacc_progress_reporter", default=None)
_rank = {"label": "", "position": 0}  # this process's place among the ranks of a launch


def show_rank(rank: int, world_size: int) -> None:
    """Label this process's bars and summaries with its rank and give them line `rank` of the terminal."""
    _rank["label"] = f"rank {rank}/{world_size}: " if world_size > 1 else ""
    _rank["position"] = rank if world_size > 1 else 0


def report(n: int) -> None:
    """Tell the running executor that `n` more items of the current `batch()` call are done (else nothing)."""
    callback = _reporter.get()
    if callback is not None:
        callback(n)


class RoleProgress:
    """The bar and the clock of one role's run over `total` items to compute (thread-safe `advance`)."""

    def __init__(self, role: str, name: str, total: int, enabled: bool) -> None:
        self.label = f"{_rank['label']}{role} {name}"
        self.total = total
        self.done = 0
        self.started = time.perf_counter()
        self.enabled = enabled
        self._lock = threading.Lock()
        self._bar = self._new_bar(total, disable=not enabled or not total)

    def _new_bar(self, total: int, disable: bool) -> tqdm:
        return tqdm(
            total=total, desc=self.label, unit="item", disable=disable, smoothing=0.1, position=_rank["position"]
        )

    def grow(self, n: int) -> None:
        """`n` more items to compute (a chained stage learns its work as the previous one finishes)."""
        with self._lock:
            self.total += n
            self._bar.total = self.total
            if self._bar.disable and self.enabled:
                self._bar = self._new_bar(self.total, disable=False)
                self._bar.update(self.done)
            self._bar.refresh()

    def advance(self, n: int = 1) -> None:
        with self._lock:
            n = max(0, min(n, self.total - self.done))
            self.done += n
            self._bar.update(n)

    def settle(self, done: int) -> None:
        """Set the count of finished items to `done` (after a `batch()` whose reports were approximate)."""
        with self._lock:
            self._bar.update(done - self.done)
            self.done = done

    @contextlib.contextmanager
    def reporting(self, limit: int) -> Iterator[None]:
        """While inside, `report(n)` advances this bar, by at most `limit` items in all (one chunk)."""
        start = self.done

        def callback(n: int) -> None:
            self.advance(min(n, start + limit - self.done))

        token = _reporter.set(callback)
        try:
            yield
        finally:
            _reporter.reset(token)
            self.settle(start + limit)

    def close(self, generated_tokens: int | None = None) -> str:
        """Close the bar; log and return the summary line (nothing is logged for a role with no work)."""
        self._bar.close()
        seconds = time.perf_counter() - self.started
        line = summary(self.label, self.done, seconds, generated_tokens)
        if self.total:
            log.info(line)
        return line


def summary(label: str, items: int, seconds: float, generated_tokens: int | None) -> str:
    """
    >>> summary("reader openai:m", 120, 4.0, 600)
    'reader openai:m: 120 items in 4.0 s, 30.0 items/s, 150.0 generated tokens/s'
    >>> summary("judge exact", 0, 0.0, None)
    'judge exact: 0 items in 0.0 s, 0.0 items/s'
    """
    rate = items / seconds if seconds > 0 else 0.0
    line = f"{label}: {items} items in {seconds:.1f} s, {rate:.1f} items/s"
    if generated_tokens:
        line += f", {generated_tokens / seconds if seconds > 0 else 0.0:.1f} generated tokens/s"
    return line
