"""Calling methods through the cache: windows or chunks, call counting, timing, progress and failure policy.

A method that declares `concurrency` (the served `openai:` methods) runs in a rolling window of that many
calls over the role's whole task list (`gacc_hf.run.rolling`); any other method is called in chunks of
`batch_size` items (more where the method declares a larger `chunk_size`: the local reader batches questions
across memories, so it wants many per call), through its `batch()` when it has one. Either way every output
is stored as it is finished, one transaction per chunk or per half second of work: a crash loses at most the
calls in flight and that half second, and a rerun computes only what is missing. Each item is called at most
once per run: a method's `batch()` that raises fails its whole chunk (or stops the run), and one that
returns the wrong number of outputs is a contract error naming the method, never retried item by item.
Failures stop the run with the item named (`on_error="raise"`) or are recorded and retried by the next run
(`on_error="record"`); failures are never cached. Progress moves per item (`gacc_hf.progress`) and each role
ends with a one-line summary.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from gacc_hf.cost.limits import Meter
from gacc_hf.cost.tally import UsageTally
from gacc_hf.cost.usage import fill_usage, with_usage
from gacc_hf.errors import MODEL_FAILURES
from gacc_hf.limits import MAX_ANSWER_CHARS, MAX_ERROR_CHARS, clip
from gacc_hf.methods.registry import resolve
from gacc_hf.methods.user_import import import_spec
from gacc_hf.progress import RoleProgress
from gacc_hf.protocol import METHOD_FAULTS, MethodIdentityError, method_name, revision_of
from gacc_hf.redaction import redact
from gacc_hf.run.cache import Cache
from gacc_hf.run.rolling import FLUSH_SECONDS, RollingRun
from gacc_hf.run.tasks import UNNAMED, Follow, Method, Planned, Stage, Task, concurrency_of, planned
from gacc_hf.text.hygiene import encoding_problem
from gacc_hf.tokenizer import get_codec

OnError = Literal["raise", "record"]
ROLES = ("compressor", "reader", "judge")
log = logging.getLogger(__name__)


class MethodError(RuntimeError):
    """A compressor, reader or judge failed, returned the wrong type, or broke the batch contract."""

    exit_code = MODEL_FAILURES


def chunk_size_of(fn: Any, batch_size: int) -> int:
    """Items per call of a chunked method: the run's `batch_size`, or the method's `chunk_size` if larger.

    >>> class Reader:
    ...     chunk_size = 256
    >>> chunk_size_of(Reader(), 64), chunk_size_of(Reader(), 512), chunk_size_of(object(), 64)
    (256, 512, 64)
    """
    size = getattr(fn, "chunk_size", None)
    if size is None:
        return batch_size
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"chunk_size must be an integer >= 1, got {size!r}")
    return max(batch_size, size)


def resolve_method(role: str, spec: Any, cached: bool) -> Method:
    """Resolve a name or callable; refuse to cache a method whose revision cannot bind its state.

    Without a persistent cache nothing can be reused, so such a method gets a revision unique to this
    run instead of an error.
    """
    fn = resolve(role, spec)  # type: ignore[arg-type]
    try:
        concurrency_of(fn)
        chunk_size_of(fn, 1)
    except ValueError as exc:
        raise ValueError(f"{role} {method_name(fn)!r}: {exc}") from None
    try:
        revision = revision_of(fn)
    except MethodIdentityError as exc:
        if cached:
            raise MethodIdentityError(f"{role}: {exc}") from exc.__cause__
        revision = f"uncached@{uuid.uuid4().hex}"
    shown = redact(spec) if isinstance(spec, str) else import_spec(fn) or f"{UNNAMED}{method_name(fn)}>"
    return Method(role, fn, method_name(fn), revision, shown)


def check_str(value: Any) -> str:
    """A method's text output as a plain str (a str subclass is copied to one, so it can be stored);
    refused when it is not a str or cannot be stored as UTF-8 (lone surrogates)."""
    if not isinstance(value, str):
        raise TypeError(f"returned {type(value).__name__}, expected str")
    problem = encoding_problem(value)
    if problem:
        raise ValueError(f"returned text that {problem}")
    return str.__str__(value)


def check_answer(value: Any) -> str:
    """A reader's answer: a storable str of at most MAX_ANSWER_CHARS characters (a longer one fails its item)."""
    text = check_str(value)
    if len(text) > MAX_ANSWER_CHARS:
        raise ValueError(f"returned an answer of {len(text)} characters, over the cap of {MAX_ANSWER_CHARS}")
    return text


def check_bool(value: Any) -> bool:
    if type(value).__name__ not in ("bool", "bool_"):
        raise TypeError(f"returned {type(value).__name__}, expected bool")
    return bool(value)


class Executor:
    """Runs tasks of one role through the cache (a window or chunks), counting calls and time, handling failures."""

    def __init__(
        self, cache: Cache, on_error: OnError, batch_size: int, progress: bool, meter: Meter | None = None
    ) -> None:
        self.cache = cache
        self.meter = meter  # the run's spending limits (`gacc_hf.cost.limits`), None: no limit
        self.on_error = on_error
        self.batch_size = batch_size
        self.progress = progress
        self.calls = dict.fromkeys(ROLES, 0)
        self.seconds = dict.fromkeys(ROLES, 0.0)
        self.method_seconds: dict[str, dict[str, float]] = {role: {} for role in ROLES}  # the same, per method
        self.generated_tokens = dict.fromkeys(ROLES, 0)  # cl100k tokens of the outputs this run produced
        self.errors: list[dict[str, Any]] = []
        self.fresh: set[str] = set()  # keys computed (or attempted) by this run
        self.usage = UsageTally()  # tokens per role and method: of the values used, of the calls sent

    def run(
        self, method: Method, kind: str, tasks: list[Task] | Planned, finish: Callable[[Any, Any], Any]
    ) -> dict[str, Any]:
        """Values for all task keys: cached ones read, missing ones computed and stored as they finish.

        A key whose call failed under `on_error="record"` maps to an `{"error": ...}` dict (not stored).
        Tasks given as `Planned` are built only for the keys the cache does not hold. Values of model
        methods carry their call's usage (`gacc_hf.cost.usage`), counted into `usage`.
        """
        finish = with_usage(method.fn, finish)
        if concurrency_of(method.fn) is not None:
            return self._tallied(method, RollingRun(self, [Stage(method, kind, finish)]).run(tasks)[0])
        plan = planned(tasks)
        values = self.cache.get_many(kind, plan.keys)
        fill_usage(method.fn, values, plan.task)
        todo = [plan.task(key) for key in plan.keys if key not in values]
        self.fresh.update(t.key for t in todo)
        progress = RoleProgress(method.role, method.name, len(todo), self.progress)
        tokens, pending, last_flush = 0, {}, time.monotonic()
        size = chunk_size_of(method.fn, self.batch_size)
        stopped = False
        for start in range(0, len(todo), size):
            chunk = todo[start : start + size]
            if self.meter is not None and (allowed := self._admitted(method, chunk)) < len(chunk):
                self.meter.hold(method, len(todo) - start - allowed)
                chunk, stopped = chunk[:allowed], True
            with progress.reporting(len(chunk)):
                done, failures = self._call_chunk(method, chunk, finish) if chunk else ({}, [])
            if self.meter is not None:
                for key, value in done.items():
                    self.meter.settle(method, key, value)
                if self.meter.halted and not stopped:  # a server's usage was not credible: stop here
                    self.meter.hold(method, len(todo) - start - len(chunk))
                    stopped = True
            tokens += sum(self.output_tokens(v) for v in done.values())
            pending.update(done)
            values.update(done)
            # one transaction per FLUSH_SECONDS of work: slow models store every chunk, fast rules batch up
            if stopped or failures or start + size >= len(todo) or time.monotonic() - last_flush > FLUSH_SECONDS:
                self.cache.put_many(kind, pending)
                pending, last_flush = {}, time.monotonic()
            for task, exc in failures:
                values[task.key] = self.failure(method, task, exc)
            if stopped:
                break
        self.generated_tokens[method.role] += tokens
        progress.close(tokens)
        if stopped:
            raise self.meter.stop()  # type: ignore[union-attr]
        return self._tallied(method, values)

    def _tallied(self, method: Method, values: dict[str, Any]) -> dict[str, Any]:
        self.usage.add(method.role, method.name, values, self.fresh)
        return values

    def _admitted(self, method: Method, chunk: list[Task]) -> int:
        """How many of the chunk's calls, from its start, the spending limits let this run make."""
        for n, task in enumerate(chunk):
            if not self.meter.admit(method, task.key, task.item):  # type: ignore[union-attr]
                return n
        return len(chunk)

    def run_chain(
        self, first: Stage, second: Stage, tasks: list[Task] | Planned, follow: Follow
    ) -> list[dict[str, Any]]:
        """The values of `first` over `tasks`, and of `second` over the tasks `follow` derives from them.

        When both methods have windows, the second's calls start as soon as the values they need are in
        (one loop, both windows full); otherwise the stages run one after the other. `follow` is given
        values in batches, each key once, and returns the second stage's tasks for them.
        """
        if concurrency_of(first.method.fn) is not None and concurrency_of(second.method.fn) is not None:
            stages = [Stage(s.method, s.kind, with_usage(s.method.fn, s.finish)) for s in (first, second)]
            values = RollingRun(self, stages).run(tasks, follow)
            return [self._tallied(s.method, v) for s, v in zip(stages, values, strict=True)]
        values = self.run(first.method, first.kind, tasks, first.finish)
        return [values, self.run(second.method, second.kind, follow(values), second.finish)]

    def failure(self, method: Method, task: Task, exc: BaseException) -> dict[str, Any]:
        """Stop the run naming the item (`on_error="raise"`), or record the failure and return its value."""
        problem = clip(f"{type(exc).__name__}: {exc}", MAX_ERROR_CHARS)
        message = f"{method.role} {method.name!r} failed on {task.label}: {problem}"
        if self.on_error == "raise":
            raise MethodError(message) from exc
        self.errors.append({"role": method.role, "method": method.name, "item": task.label, "error": message})
        return {"error": message}

    def add_seconds(self, method: Method, spent: float) -> None:
        self.seconds[method.role] += spent
        by_method = self.method_seconds[method.role]
        by_method[method.name] = by_method.get(method.name, 0.0) + spent

    @staticmethod
    def output_tokens(value: dict[str, Any]) -> int:
        """cl100k tokens a finished value's method generated: a compressor's output before the cut, an answer."""
        if "proposed_tokens" in value:
            return int(value["proposed_tokens"])
        if "answer" in value:
            return len(get_codec().encode(value["answer"]))
        return 0

    def _call_chunk(
        self, method: Method, chunk: list[Task], finish: Callable[[Any, Any], Any]
    ) -> tuple[dict[str, Any], list[tuple[Task, BaseException]]]:
        """Call a chunk once: through `batch()` when the method offers it, else item by item."""
        role = method.role
        started = time.perf_counter()
        try:
            if not callable(getattr(method.fn, "batch", None)):
                return self._one_by_one(method, chunk, finish)
            self.calls[role] += len(chunk)
            try:
                returned = method.fn.batch([t.item for t in chunk])
            except METHOD_FAULTS as exc:
                log.warning("%s %r: batch() raised on %d items", role, method.name, len(chunk), exc_info=True)
                return {}, [(t, exc) for t in (chunk[:1] if self.on_error == "raise" else chunk)]
            if not isinstance(returned, Iterable) or isinstance(returned, str | bytes | Mapping):
                raise MethodError(
                    f"{role} {method.name!r}: batch() returned {type(returned).__name__} for {len(chunk)} inputs "
                    f"(first item: {chunk[0].label}); batch() must return a list of one output per input, in order"
                )
            outs = list(returned)
            if len(outs) != len(chunk):
                raise MethodError(
                    f"{role} {method.name!r}: batch() returned {len(outs)} outputs for {len(chunk)} inputs "
                    f"(first item: {chunk[0].label}); batch() must return one output per input, in order"
                )
            return self._finish(chunk, outs, finish)
        finally:
            self.add_seconds(method, time.perf_counter() - started)

    def _one_by_one(
        self, method: Method, chunk: list[Task], finish: Callable[[Any, Any], Any]
    ) -> tuple[dict[str, Any], list[tuple[Task, BaseException]]]:
        done: dict[str, Any] = {}
        failures: list[tuple[Task, BaseException]] = []
        for t in chunk:
            self.calls[method.role] += 1
            try:
                done[t.key] = finish(t.item, method.fn(t.item))
            except METHOD_FAULTS as exc:
                failures.append((t, exc))
                if self.on_error == "raise":
                    break
        return done, failures

    def _finish(
        self, chunk: list[Task], outs: list[Any], finish: Callable[[Any, Any], Any]
    ) -> tuple[dict[str, Any], list[tuple[Task, BaseException]]]:
        """Finish a batch's outputs; `batch` may return an exception in place of one item's output
        (a server call that failed after retries), so that item fails alone and nothing is called twice."""
        done: dict[str, Any] = {}
        failures: list[tuple[Task, BaseException]] = []
        for t, out in zip(chunk, outs, strict=True):
            try:
                if isinstance(out, Exception):
                    raise out
                done[t.key] = finish(t.item, out)
            except METHOD_FAULTS as exc:
                failures.append((t, exc))
                if self.on_error == "raise":
                    break
        return done, failures
