"""What the runners of calls share: a resolved method, a task, a planned task list, a stage of a run, a
method's window size, and the tally a runner reports its calls to (`gacc_hf.run.calls.Executor`).

They live apart from both runners (chunks in `gacc_hf.run.calls`, windows in `gacc_hf.run.rolling`) so
that each runner depends on them and neither on the other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from gacc_hf.cost.limits import Meter
    from gacc_hf.run.cache import Cache

# how a method given as a callable that no `import:` spec reaches is named in a result's config (`<callable f>`)
UNNAMED = "<callable "


@dataclass(frozen=True)
class Method:
    """A resolved method with the name and revision that enter its cache keys; `spec` is as given (a callable:
    its `import:` spec, else `<callable NAME>`)."""

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


@dataclass(frozen=True)
class Planned:
    """Tasks named by their distinct keys, in order; `task(key)` builds a key's task. A runner builds only
    the tasks whose keys the cache does not hold: a warm rerun, which finds nearly all of them, then builds
    no method input or label it would not use."""

    keys: list[str]
    task: Callable[[str], Task]


def planned(tasks: Iterable[Task] | Planned) -> Planned:
    """Tasks as `Planned`: a list's keys in first-seen order, each with the last task given for it."""
    if isinstance(tasks, Planned):
        return tasks
    by_key = {t.key: t for t in tasks}
    return Planned(list(by_key), by_key.__getitem__)


Follow = Callable[[dict[str, Any]], "list[Task] | Planned"]


def concurrency_of(fn: Any) -> int | None:
    """The number of calls a method allows at once (None: it has no window and is called in chunks)."""
    size = getattr(fn, "concurrency", None)
    if size is None:
        return None
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"concurrency must be an integer >= 1, got {size!r}")
    return size


@dataclass(frozen=True)
class Stage:
    """One role's part of a run: its method, the cache kind of its values and how an output is finished."""

    method: Method
    kind: str
    finish: Callable[[Any, Any], Any]


class Tally(Protocol):
    """What a runner reads and reports to: the cache, the spending limits, the progress switch, the counts
    of calls, tokens and time, the keys computed by this run, and the failure policy."""

    cache: Cache
    meter: Meter | None
    progress: bool
    fresh: set[str]
    calls: dict[str, int]
    generated_tokens: dict[str, int]

    def failure(self, method: Method, task: Task, exc: BaseException) -> dict[str, Any]: ...

    def output_tokens(self, value: dict[str, Any]) -> int: ...

    def add_seconds(self, method: Method, spent: float) -> None: ...
