"""Rolling windows, pipelined judging and per-item progress, with in-process methods (no server)."""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from unittest import mock

import pytest

from gacc_hf.data.synthetic import synthetic_rows
from gacc_hf.methods.judges import ExactJudge
from gacc_hf.methods.rules import FieldsReader
from gacc_hf.progress import RoleProgress, report
from gacc_hf.run.benchmark import run_benchmark
from gacc_hf.run.cache import Cache
from gacc_hf.run.calls import Executor


class _Windowed:
    """A rule method called from `concurrency` threads at once; records the most calls it held at once."""

    def __init__(self, inner, name: str, concurrency=4, delay: float = 0.05) -> None:  # type: ignore[no-untyped-def]
        self.inner, self.name, self.revision = inner, name, f"{name}-v1"
        self.concurrency, self.delay = concurrency, delay
        self.now = self.most = 0
        self.started: list[float] = []
        self.lock = threading.Lock()

    def __call__(self, item):  # type: ignore[no-untyped-def]
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
            self.started.append(time.monotonic())
        time.sleep(self.delay)
        with self.lock:
            self.now -= 1
        return self.inner(item)


ROWS = synthetic_rows(seed=4, contexts=3, goals_per_context=2, questions_per_goal=4)  # 24 questions
KW = dict(compressor="goal-lines", ratios=[0.5], conditions=["own"], progress=False, n_bootstrap=0)


def _sequential(ex, first, second, tasks, follow):  # type: ignore[no-untyped-def]
    values = ex.run(first.method, first.kind, tasks, first.finish)
    return [values, ex.run(second.method, second.kind, follow(values), second.finish)]


def test_the_window_stays_full_past_batch_size_and_judging_is_pipelined(tmp_path):
    reader, judge = _Windowed(FieldsReader(), "w-fields"), _Windowed(ExactJudge(), "w-exact")
    got = run_benchmark(ROWS, reader=reader, judge=judge, batch_size=2, cache_dir=str(tmp_path / "a"), **KW)
    assert reader.most == 4 and judge.most == 4  # chunks of 2 would hold at most 2
    assert min(judge.started) < max(reader.started)  # a verdict began before the last answer was asked for
    assert got.calls == {"compressor": 6, "reader": 24, "judge": 24}

    with mock.patch.object(Executor, "run_chain", _sequential):
        r2, j2 = _Windowed(FieldsReader(), "w-fields"), _Windowed(ExactJudge(), "w-exact")
        apart = run_benchmark(ROWS, reader=r2, judge=j2, batch_size=2, cache_dir=str(tmp_path / "b"), **KW)
    assert min(j2.started) > max(r2.started)
    assert got.answers == apart.answers and got.scores == apart.scores  # same rows, in the same order
    with Cache(tmp_path / "a") as a, Cache(tmp_path / "b") as b:
        assert sorted(a.entries()) == sorted(b.entries())  # and the same cache contents


def test_calls_are_submitted_a_window_at_a_time(cache_dir):
    """At most twice the workers are submitted and unfinished at once; the rest wait as tasks (a future per
    call of a release's 200,000 would hold half a gigabyte)."""
    real_submit = ThreadPoolExecutor.submit
    unfinished, most, lock = 0, 0, threading.Lock()

    def submit(pool, fn, *args):  # type: ignore[no-untyped-def]
        nonlocal unfinished, most
        if fn is not reader:  # other pools of the run (the budget check beside the reading) are not counted
            return real_submit(pool, fn, *args)
        with lock:
            unfinished += 1
            most = max(most, unfinished)
        future = real_submit(pool, fn, *args)
        future.add_done_callback(lambda _: _finished())
        return future

    def _finished() -> None:
        nonlocal unfinished
        with lock:
            unfinished -= 1

    reader = _Windowed(FieldsReader(), "w-fields", concurrency=2, delay=0.1)  # no call ends while 4 are handed over
    with mock.patch.object(ThreadPoolExecutor, "submit", submit):
        got = run_benchmark(ROWS, reader=reader, judge="exact", cache_dir=cache_dir, **KW)
    assert got.calls["reader"] == 24 and reader.most == 2
    assert most == 4  # 2 workers: 2 running and 2 queued, never the 24 calls at once


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "4"])
def test_a_method_declaring_a_bad_concurrency_is_refused_before_any_call(bad, cache_dir):
    reader = _Windowed(FieldsReader(), "w-fields", concurrency=bad)
    with pytest.raises(ValueError, match=rf"reader 'w-fields': concurrency must be an integer >= 1, got {bad!r}"):
        run_benchmark(ROWS, reader=reader, judge="exact", cache_dir=cache_dir, **KW)
    assert reader.started == []
    ok = _Windowed(FieldsReader(), "w-fields", concurrency=1)
    assert run_benchmark(ROWS, reader=ok, judge="exact", cache_dir=cache_dir, **KW).calls["reader"] == 24
    assert ok.most == 1


class _Reporting:
    """A batch method that reports progress after each item, like a local model after each sub-batch."""

    name, revision = "reporting", "reporting-v1"

    def __init__(self) -> None:
        self.seen: list[int] = []
        self.bar: RoleProgress | None = None

    def __call__(self, item):  # type: ignore[no-untyped-def]
        return self.batch([item])[0]

    def batch(self, items):  # type: ignore[no-untyped-def]
        out = []
        for item in items:
            out.append(FieldsReader()(item))
            report(1)
            self.seen.append(self.bar.done if self.bar else -1)
        report(10**6)  # too much: capped at the chunk
        return out


def test_progress_moves_per_item_inside_a_batch_and_each_role_ends_with_a_summary(cache_dir, caplog):
    reader = _Reporting()
    bars: list[RoleProgress] = []
    real_init = RoleProgress.__init__

    def keep(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        real_init(self, *args, **kwargs)
        bars.append(self)
        if args[0] == "reader":
            reader.bar = self

    caplog.set_level(logging.INFO, logger="gacc_hf.progress")
    with mock.patch.object(RoleProgress, "__init__", keep):
        run_benchmark(ROWS, reader=reader, judge="exact", batch_size=8, cache_dir=cache_dir, **KW)
    assert reader.seen == list(range(1, 25))  # one step per item, across three chunks of 8
    assert reader.bar is not None and reader.bar.done == 24  # the over-report was capped
    lines = [r.getMessage() for r in caplog.records if r.name == "gacc_hf.progress"]
    assert len(lines) == 3  # compressor, reader, judge
    assert any(line.startswith("reader reporting: 24 items in ") and "items/s" in line for line in lines)
    assert any("generated tokens/s" in line for line in lines if line.startswith("reader"))
