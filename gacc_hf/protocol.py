"""The three input contracts of the GACC protocol, the callable protocols that consume them, and the conditions.

Each input object carries exactly what its party may see (docs/protocol.md §1, §5, §6): a compressor never
receives a question or gold, a reader never receives a sibling question, gold or the source. The
objects are frozen so that nothing downstream can attach extra fields to them. The conditions a cell runs
under, and which of them are bounds rather than methods (§8), are facts every stage reads.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import inspect
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
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


#: Every condition (docs/protocol.md §8): the goal shown is the group's own, none, or another's (`cross`);
#: the rest are bounds.
CONDITIONS = ("own", "none", "cross", "full", "oracle", "closed")
#: The bounds: the ceilings `full` and `oracle` and the floor `closed` call no compressor and are never methods.
CEILINGS = ("full", "oracle", "closed")
#: The one bound below the methods (the empty memory); the others are upper bounds, shown apart from it.
FLOOR = "closed"


def is_ceiling(row: Mapping[str, Any]) -> bool:
    """Whether a score, answer or memory row is a bound (full context, oracle, closed book), never a method;
    a row written before the `ceiling` flag existed is told by its condition."""
    return bool(row.get("ceiling", row.get("condition") in CEILINGS))


# What a method call may raise that is its failure: `sys.exit()` inside a method fails its item like any
# error, instead of ending the run with exit 0 and nothing written. KeyboardInterrupt still stops the run.
METHOD_FAULTS = (Exception, SystemExit)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def method_name(fn: Any) -> str:
    """A short human name for a callable: its `name` attribute, else its qualified name."""
    name = getattr(fn, "name", None)
    if isinstance(name, str) and name:
        return name
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn)
    return getattr(target, "__qualname__", repr(target))


class MethodIdentityError(ValueError):
    """A method's revision cannot be derived from its state, so caching it could score stale outputs."""


_SCALARS = (type(None), bool, int, float, complex, str, bytes, Fraction, Decimal)


def _canonical(value: Any, seen: frozenset[int] = frozenset()) -> str:
    """A canonical text of plain data (scalars, containers, dataclasses, enums, functions by revision).

    Raises TypeError naming the first value that is not plain data (a loaded model, a client, a lock).
    """
    if isinstance(value, _SCALARS):
        return f"{type(value).__name__}:{value!r}"
    if id(value) in seen:
        return "<cycle>"
    seen = seen | {id(value)}
    if isinstance(value, enum.Enum):
        return f"enum:{type(value).__qualname__}.{value.name}"
    if isinstance(value, list | tuple):
        return f"{type(value).__name__}[" + ",".join(_canonical(v, seen) for v in value) + "]"
    if isinstance(value, set | frozenset):
        return "set{" + ",".join(sorted(_canonical(v, seen) for v in value)) + "}"
    if isinstance(value, dict):
        items = sorted((_canonical(k, seen), _canonical(v, seen)) for k, v in value.items())
        return "dict{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
    if isinstance(value, type | types.ModuleType):
        return f"{type(value).__name__}:{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}"
    if dataclasses.is_dataclass(value):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return f"dataclass:{type(value).__qualname__}" + _canonical(fields, seen)
    if callable(value):
        return f"callable:{_derived_revision(value, seen)}"
    raise TypeError(f"a {type(value).__module__}.{type(value).__qualname__} object")


def _code_identity(target: Any) -> str:
    qual = f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', repr(target))}"
    try:
        source = inspect.getsource(target)
    except (OSError, TypeError):
        source = ""
    return qual + chr(0) + source


def _instance_state(obj: Any) -> dict[str, Any]:
    state = dict(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            if slot not in ("__dict__", "__weakref__") and hasattr(obj, slot):
                state[slot] = getattr(obj, slot)
    return state


def _derived_revision(fn: Any, seen: frozenset[int] = frozenset()) -> str:
    """Name, code and state of a callable: closure cells and defaults of a function, arguments of a
    `functools.partial`, the instance of a bound method, the attributes of a callable object."""
    explicit = getattr(fn, "revision", None)
    if isinstance(explicit, str) and explicit and not inspect.isclass(fn):
        return explicit
    if isinstance(fn, functools.partial):
        qual = "functools.partial"
        body = _derived_revision(fn.func, seen) + _canonical([fn.args, fn.keywords], seen)
    elif inspect.ismethod(fn):
        qual = f"{type(fn.__self__).__qualname__}.{fn.__func__.__qualname__}"
        body = _code_identity(fn.__func__) + _canonical(_instance_state(fn.__self__), seen)
    elif inspect.isfunction(fn):
        qual = f"{fn.__module__}.{fn.__qualname__}"
        cells = [c.cell_contents for c in fn.__closure__ or () if _cell_is_set(c)]
        body = _code_identity(fn) + _canonical([cells, fn.__defaults__, fn.__kwdefaults__], seen)
    elif inspect.isbuiltin(fn) or inspect.isclass(fn):
        qual = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
        body = _code_identity(fn)
    else:  # a callable object: its class's code and its attributes
        qual = f"{type(fn).__module__}.{type(fn).__qualname__}"
        body = _code_identity(type(fn)) + _canonical(_instance_state(fn), seen)
    return f"{qual}@{_sha(qual + chr(0) + body)[:16]}"


def _cell_is_set(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:  # an empty cell: a closure variable not bound yet
        return False
    return True


def revision_of(fn: Any) -> str:
    """The revision string that binds a callable into every cache key.

    An explicit `revision` attribute wins (models put their weights identity and settings there).
    Otherwise it is derived from the callable's name, source code and state, so editing a function,
    calling `functools.partial` with other arguments, or building an object with other settings gives
    another revision and never reuses stale outputs. State that is not plain data (a loaded model, an
    open client) cannot be hashed canonically: `MethodIdentityError` says which method and how to fix it.
    """
    rev = getattr(fn, "revision", None)
    if isinstance(rev, str) and rev:
        return rev
    if rev is not None and not inspect.isclass(fn):
        raise ValueError(
            f"method {method_name(fn)!r} has revision {rev!r:.60} ({type(rev).__name__}): a revision must be a "
            "non-empty str that changes whenever the method's outputs can change (or leave it out to derive one)"
        )
    try:
        return _derived_revision(fn)
    except (TypeError, RecursionError) as exc:
        raise MethodIdentityError(
            f"cannot derive a revision for method {method_name(fn)!r}: its state holds {exc}, which cannot be "
            "hashed canonically, so its cached outputs could be reused after its settings change. Give it a "
            "`revision` string attribute that changes whenever its outputs can change (e.g. weights hash + "
            "settings), or run without a cache."
        ) from exc


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
