"""Rolling windows: a method that may be called from several threads at once kept `concurrency` calls busy.

A method declares `concurrency` (an int >= 1; the served `openai:` methods do) to say that so many of its
calls may run at once, from as many threads: a server answers more requests per second the more it holds
at once. Such a method is not called in chunks that drain before the next starts (waves): every task of
the role goes into one window of `concurrency` worker threads, and a worker takes the next task as soon
as its call returns, so the window stays full until the task list runs out.

Results come back to the calling thread, which alone touches the cache: each output is finished (checked,
cut to budget) as it completes and stored with the others of the same half second (`FLUSH_SECONDS`), so
a crash loses the calls in flight and at most that half second of results, and a rerun computes only
what is missing. A chain of two stages (answers, then their verdicts) runs in one loop: when both
methods have windows, a follow-up task enters the second window as soon as the output it needs is in.
"""

from __future__ import annotations

import collections
import queue
import time
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from gacc_hf.cost.usage import call_of, fill_usage
from gacc_hf.progress import RoleProgress
from gacc_hf.protocol import METHOD_FAULTS
from gacc_hf.run.tasks import Follow, Planned, Stage, Tally, Task, concurrency_of, planned

FLUSH_SECONDS = 0.5  # most finished work a crash can lose


@dataclass
class _Lane:
    """A stage's window in a rolling run: its pool, the keys it has seen and what waits to be stored."""

    stage: Stage
    pool: ThreadPoolExecutor
    progress: RoleProgress
    window: int  # most calls submitted at once: twice the workers, so a finished worker finds its next call
    values: dict[str, Any] = field(default_factory=dict)
    pending: dict[str, Any] = field(default_factory=dict)
    waiting: collections.deque[Task] = field(default_factory=collections.deque)  # past the window or held by a limit
    known: set[str] = field(default_factory=set)
    outstanding: int = 0
    tokens: int = 0  # cl100k tokens of the outputs this lane produced
    first_call: float | None = None
    last_done: float | None = None


class RollingRun:
    """Runs one stage, or two chained stages, through windows; see the module docstring."""

    def __init__(self, ex: Tally, stages: list[Stage]) -> None:
        self.ex = ex
        self.done: queue.SimpleQueue[tuple[_Lane, Task, Future[Any]]] = queue.SimpleQueue()
        self.lanes = [self._lane(s) for s in stages]

    def _lane(self, stage: Stage) -> _Lane:
        m = stage.method
        workers = concurrency_of(m.fn) or 1
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"gacc-{m.role}")
        return _Lane(stage, pool, RoleProgress(m.role, m.name, 0, self.ex.progress), 2 * workers)

    def run(self, tasks: Iterable[Task] | Planned, follow: Follow | None = None) -> list[dict[str, Any]]:
        """Values of every lane by key; `follow` turns first-stage values into second-stage tasks."""
        first = self.lanes[0]
        last_flush = time.monotonic()
        try:
            self._chain(follow, self._feed(first, tasks))
            while any(lane.outstanding for lane in self.lanes):
                fresh = self._collect()
                self._chain(follow, fresh)
                for lane in self.lanes:
                    self._release(lane)
                if time.monotonic() - last_flush > FLUSH_SECONDS:
                    self._flush()
                    last_flush = time.monotonic()
            self._stop_if_held()
        finally:
            for lane in self.lanes:
                lane.pool.shutdown(wait=False, cancel_futures=True)
            self._flush()
            self._close()
        return [lane.values for lane in self.lanes]

    def _chain(self, follow: Follow | None, values: dict[str, Any]) -> None:
        if follow is not None and values:
            self._feed(self.lanes[1], follow(values))

    def _feed(self, lane: _Lane, tasks: Iterable[Task] | Planned) -> dict[str, Any]:
        """Start the calls of tasks not seen before and not cached; return the cached values among them."""
        plan = planned(tasks)
        new = [key for key in plan.keys if key not in lane.known]
        lane.known.update(new)
        cached = self.ex.cache.get_many(lane.stage.kind, new)
        fill_usage(lane.stage.method.fn, cached, plan.task)
        lane.values.update(cached)
        todo = [plan.task(key) for key in new if key not in cached]
        if not todo:
            return cached
        self.ex.fresh.update(t.key for t in todo)
        lane.progress.grow(len(todo))
        lane.first_call = lane.first_call or time.perf_counter()
        lane.waiting.extend(todo)
        self._release(lane)
        return cached

    def _release(self, lane: _Lane) -> None:
        """Start the lane's waiting calls, as many as its window holds and the spending limits let this run make.

        The rest wait as tasks: a submitted call costs a future, a work item and a callback, a kilobyte or more
        each, and a release's 200,000 reader calls all submitted at once held half a gigabyte."""
        fn, meter = call_of(lane.stage.method.fn), self.ex.meter  # served: output with usage
        while lane.waiting and lane.outstanding < lane.window:
            task = lane.waiting[0]
            if meter is not None and not meter.admit(lane.stage.method, task.key, task.item):
                return
            lane.waiting.popleft()
            future = lane.pool.submit(fn, task.item)
            future.add_done_callback(lambda f, t=task: self.done.put((lane, t, f)))
            lane.outstanding += 1

    def _stop_if_held(self) -> None:
        """End the run when a spending limit held calls back, or a server's usage was not credible
        (everything finished is stored first)."""
        held = [lane for lane in self.lanes if lane.waiting]
        if self.ex.meter is not None and (held or self.ex.meter.halted):
            for lane in held:
                self.ex.meter.hold(lane.stage.method, len(lane.waiting))
            raise self.ex.meter.stop()

    def _collect(self) -> dict[str, Any]:
        """Finish the calls that completed (waiting up to half a second for one); the first stage's values."""
        try:
            batch = [self.done.get(timeout=FLUSH_SECONDS)]
        except queue.Empty:
            return {}
        while not self.done.empty():
            batch.append(self.done.get_nowait())
        fresh: dict[str, Any] = {}
        for lane, task, future in batch:
            lane.outstanding -= 1
            lane.last_done = time.perf_counter()
            method = lane.stage.method
            self.ex.calls[method.role] += 1
            try:
                value = lane.stage.finish(task.item, future.result())
            except METHOD_FAULTS as exc:  # on_error="raise": the finally of `run` stores what finished, then stops
                value = self.ex.failure(method, task, exc)
            else:
                lane.pending[task.key] = value
                lane.tokens += self.ex.output_tokens(value)
                if self.ex.meter is not None:
                    self.ex.meter.settle(method, task.key, value)
            lane.values[task.key] = value
            lane.progress.advance(1)
            if lane is self.lanes[0]:
                fresh[task.key] = value
        return fresh

    def _flush(self) -> None:
        for lane in self.lanes:
            if lane.pending:
                self.ex.cache.put_many(lane.stage.kind, lane.pending)
                lane.pending = {}

    def _close(self) -> None:
        for lane in self.lanes:
            method = lane.stage.method
            self.ex.generated_tokens[method.role] += lane.tokens
            if lane.first_call is not None:
                self.ex.add_seconds(method, (lane.last_done or time.perf_counter()) - lane.first_call)
            lane.progress.close(lane.tokens)
