"""Calling methods through the cache: chunks, batching, call counting, timing and failure policy.

Work is done in chunks that are stored as they finish (one transaction per chunk, or per half second
of fast work): a crash loses at most that, and a rerun resumes from the cache. Each item is called at
most once per run: a method's `batch()` that raises fails its whole chunk (or stops the run), and one
that returns the wrong number of outputs is a contract error naming the method, never retried item by
item. Failures stop the run with the item named (`on_error="raise"`) or are recorded and retried by
the next run (`on_error="record"`); failures are never cached.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from tqdm.auto import tqdm

from gacc_hf.methods.registry import resolve
from gacc_hf.protocol import MethodIdentityError, method_name, revision_of
from gacc_hf.redaction import redact
from gacc_hf.run.cache import Cache
from gacc_hf.text.hygiene import encoding_problem
from gacc_hf.tokenizer import get_codec

OnError = Literal["raise", "record"]
FLUSH_SECONDS = 0.5  # most work a crash can lose; a chunk that takes longer is stored on its own
ROLES = ("compressor", "reader", "judge")
log = logging.getLogger(__name__)


class MethodError(RuntimeError):
    """A compressor, reader or judge failed, returned the wrong type, or broke the batch contract."""


@dataclass(frozen=True)
class Method:
    """A resolved method with the name and revision that enter its cache keys; `spec` is as given."""

    role: str
    fn: Any
    name: str
    revision: str
    spec: str


@dataclass
class Task:
    key: str
    item: Any
    label: str


def resolve_method(role: str, spec: Any, cached: bool) -> Method:
    """Resolve a name or callable; refuse to cache a method whose revision cannot bind its state.

    Without a persistent cache nothing can be reused, so such a method gets a revision unique to this
    run instead of an error.
    """
    fn = resolve(role, spec)  # type: ignore[arg-type]
    try:
        revision = revision_of(fn)
    except MethodIdentityError as exc:
        if cached:
            raise MethodIdentityError(f"{role}: {exc}") from exc.__cause__
        revision = f"uncached@{uuid.uuid4().hex}"
    shown = redact(spec) if isinstance(spec, str) else f"<callable {method_name(fn)}>"
    return Method(role, fn, method_name(fn), revision, shown)


def check_str(value: Any) -> str:
    """A method's text output, refused when it is not a str or cannot be stored as UTF-8 (lone surrogates)."""
    if not isinstance(value, str):
        raise TypeError(f"returned {type(value).__name__}, expected str")
    problem = encoding_problem(value)
    if problem:
        raise ValueError(f"returned text that {problem}")
    return value


def check_bool(value: Any) -> bool:
    if type(value).__name__ not in ("bool", "bool_"):
        raise TypeError(f"returned {type(value).__name__}, expected bool")
    return bool(value)


def _output_tokens(value: dict[str, Any]) -> int:
    """cl100k tokens a finished value's method generated: a compressor's output before the cut, an answer."""
    if "proposed_tokens" in value:
        return int(value["proposed_tokens"])
    if "answer" in value:
        return len(get_codec().encode(value["answer"]))
    return 0


class Executor:
    """Runs tasks of one role in chunks through the cache, counting calls and time and handling failures."""

    def __init__(self, cache: Cache, on_error: OnError, batch_size: int, progress: bool) -> None:
        self.cache = cache
        self.on_error = on_error
        self.batch_size = batch_size
        self.progress = progress
        self.calls = dict.fromkeys(ROLES, 0)
        self.seconds = dict.fromkeys(ROLES, 0.0)
        self.method_seconds: dict[str, dict[str, float]] = {role: {} for role in ROLES}  # the same, per method
        self.generated_tokens = dict.fromkeys(ROLES, 0)  # cl100k tokens of the outputs this run produced
        self.errors: list[dict[str, Any]] = []
        self.fresh: set[str] = set()  # keys computed (or attempted) by this run

    def run(self, method: Method, kind: str, tasks: list[Task], finish: Callable[[Any, Any], Any]) -> dict[str, Any]:
        """Values for all task keys: cached ones read, missing ones computed and stored chunk by chunk.

        A key whose call failed under `on_error="record"` maps to an `{"error": ...}` dict (not stored).
        """
        unique = list({t.key: t for t in tasks}.values())
        values = self.cache.get_many(kind, [t.key for t in unique])
        todo = [t for t in unique if t.key not in values]
        self.fresh.update(t.key for t in todo)
        desc = f"{method.role} {method.name}"
        pending: dict[str, Any] = {}
        last_flush = time.monotonic()
        with tqdm(total=len(todo), desc=desc, unit="call", disable=not self.progress or not todo) as bar:
            for start in range(0, len(todo), self.batch_size):
                chunk = todo[start : start + self.batch_size]
                done, failures = self._call_chunk(method, chunk, finish)
                self.generated_tokens[method.role] += sum(_output_tokens(v) for v in done.values())
                pending.update(done)
                values.update(done)
                bar.update(len(chunk))
                # one transaction per FLUSH_SECONDS of work: slow models store every chunk, fast rules batch up
                if failures or start + self.batch_size >= len(todo) or time.monotonic() - last_flush > FLUSH_SECONDS:
                    self.cache.put_many(kind, pending)
                    pending, last_flush = {}, time.monotonic()
                for task, exc in failures:
                    message = f"{method.role} {method.name!r} failed on {task.label}: {type(exc).__name__}: {exc}"
                    if self.on_error == "raise":
                        raise MethodError(message) from exc
                    self.errors.append(
                        {"role": method.role, "method": method.name, "item": task.label, "error": message}
                    )
                    values[task.key] = {"error": message}
        return values

    def _call_chunk(
        self, method: Method, chunk: list[Task], finish: Callable[[Any, Any], Any]
    ) -> tuple[dict[str, Any], list[tuple[Task, Exception]]]:
        """Call a chunk once: through `batch()` when the method offers it, else item by item."""
        role = method.role
        started = time.perf_counter()
        try:
            if not callable(getattr(method.fn, "batch", None)):
                return self._one_by_one(method, chunk, finish)
            self.calls[role] += len(chunk)
            try:
                outs = list(method.fn.batch([t.item for t in chunk]))
            except Exception as exc:
                log.warning("%s %r: batch() raised on %d items", role, method.name, len(chunk), exc_info=True)
                return {}, [(t, exc) for t in (chunk[:1] if self.on_error == "raise" else chunk)]
            if len(outs) != len(chunk):
                raise MethodError(
                    f"{role} {method.name!r}: batch() returned {len(outs)} outputs for {len(chunk)} inputs "
                    f"(first item: {chunk[0].label}); batch() must return one output per input, in order"
                )
            return self._finish(chunk, outs, finish)
        finally:
            spent = time.perf_counter() - started
            self.seconds[role] += spent
            by_method = self.method_seconds[role]
            by_method[method.name] = by_method.get(method.name, 0.0) + spent

    def _one_by_one(
        self, method: Method, chunk: list[Task], finish: Callable[[Any, Any], Any]
    ) -> tuple[dict[str, Any], list[tuple[Task, Exception]]]:
        done: dict[str, Any] = {}
        failures: list[tuple[Task, Exception]] = []
        for t in chunk:
            self.calls[method.role] += 1
            try:
                done[t.key] = finish(t.item, method.fn(t.item))
            except Exception as exc:
                failures.append((t, exc))
                if self.on_error == "raise":
                    break
        return done, failures

    def _finish(
        self, chunk: list[Task], outs: list[Any], finish: Callable[[Any, Any], Any]
    ) -> tuple[dict[str, Any], list[tuple[Task, Exception]]]:
        """Finish a batch's outputs; `batch` may return an exception in place of one item's output
        (a server call that failed after retries), so that item fails alone and nothing is called twice."""
        done: dict[str, Any] = {}
        failures: list[tuple[Task, Exception]] = []
        for t, out in zip(chunk, outs, strict=True):
            try:
                if isinstance(out, Exception):
                    raise out
                done[t.key] = finish(t.item, out)
            except Exception as exc:
                failures.append((t, exc))
                if self.on_error == "raise":
                    break
        return done, failures
