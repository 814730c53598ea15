"""The three input contracts of the GACC protocol and the callable protocols that consume them.

Each input object carries exactly what its party may see (DESIGN 1.1, 1.5, 1.6): a compressor never
receives a question or gold, a reader never receives a sibling question, gold or the source. The
objects are frozen so that nothing downstream can attach extra fields to them.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class CompressorInput:
    """What a compressor sees: the source, the goal as shown (may be empty) and the token budget L."""

    context: str
    goal: str
    token_budget: int


@dataclass(frozen=True, slots=True)
class ReaderInput:
    """What a reader sees: one memory and one question."""

    memory: str
    question: str


@dataclass(frozen=True, slots=True)
class JudgeInput:
    """What a judge sees: the question, the reader's answer, the gold references and the original source."""

    question: str
    answer: str
    references: tuple[str, ...]
    source: str


@runtime_checkable
class Compressor(Protocol):
    def __call__(self, item: CompressorInput, /) -> str: ...


@runtime_checkable
class Reader(Protocol):
    def __call__(self, item: ReaderInput, /) -> str: ...


@runtime_checkable
class Judge(Protocol):
    def __call__(self, item: JudgeInput, /) -> bool: ...


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def method_name(fn: Any) -> str:
    """A short human name for a callable: its `name` attribute, else its qualified name."""
    name = getattr(fn, "name", None)
    if isinstance(name, str) and name:
        return name
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn)
    return getattr(target, "__qualname__", repr(target))


def revision_of(fn: Any) -> str:
    """The revision string that binds a callable into every cache key.

    An explicit `revision` attribute wins (models put their weights identity and settings there).
    Otherwise the revision is derived from the qualified name and source code, so editing a plain
    function invalidates its cached outputs.
    """
    rev = getattr(fn, "revision", None)
    if isinstance(rev, str) and rev:
        return rev
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn)
    qual = f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', repr(target))}"
    try:
        source = inspect.getsource(target)
    except (OSError, TypeError):
        source = ""
    return f"{qual}@{_sha(qual + chr(0) + source)[:16]}"


def call_many(fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
    """Call `fn.batch(items)` when the callable offers it, else call it once per item."""
    if not items:
        return []
    batch = getattr(fn, "batch", None)
    if callable(batch):
        out = list(batch(list(items)))
        if len(out) != len(items):
            raise ValueError(f"{method_name(fn)}.batch returned {len(out)} outputs for {len(items)} inputs")
        return out
    return [fn(item) for item in items]
