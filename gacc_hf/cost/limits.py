"""Spending limits: `--max-calls N` and `--max-cost X` stop a run before the call that would pass them.

A limit counts what this run itself sends (cache hits are free), so a stopped run is resumed by the same
command: the calls it made are stored and not made again, and the limit allows as many new ones. Each
call is admitted before it is made. `--max-calls` counts it as one. `--max-cost` counts it at its bound
(its prompt tokens, counted before sending, at the prompt price, plus the most it may generate at the
completion price) until its server's usage is known, then at what it really cost; so the money a run
spends never passes the limit, even with calls in flight (a call the server sends no usage for stays at
its bound: a local count is only an estimate of what the server bills). A stopped run stores everything
finished, writes no results folder, and ends with `LimitReached` (exit 3), saying what was done and what
is left.

With `--num-processes P` each rank gets its share of the limits (`Meter.for_rank`), so the run as a whole stays
within them; a rank that reaches its share waits for the others, and the launch ends with one message,
from the ranks' meters together (`launch_meter`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gacc_hf.cost.costing import lookup_names
from gacc_hf.cost.prices import Price, Prices
from gacc_hf.cost.usage import completion_limit, usage_problem


class LimitReached(RuntimeError):
    """The next call would pass `--max-calls` or `--max-cost`: the run stopped, with everything done stored."""


@dataclass(frozen=True)
class SpendingLimits:
    """The limits of one run (None: no limit) and the prices `max_cost` is counted with."""

    max_calls: int | None = None
    max_cost: float | None = None
    prices: Prices | None = None

    def __post_init__(self) -> None:
        calls = self.max_calls
        if calls is not None and (isinstance(calls, bool) or not isinstance(calls, int) or calls < 1):
            raise ValueError(f"--max-calls must be an integer >= 1 (the model calls this run may make), got {calls!r}")
        cost = self.max_cost
        if cost is not None:
            if isinstance(cost, bool) or not isinstance(cost, int | float) or not math.isfinite(cost) or cost <= 0:
                raise ValueError(f"--max-cost must be a number > 0, got {cost!r}")
            if self.prices is None:
                raise ValueError(
                    "--max-cost needs --prices FILE: the cost of a call is its tokens at the prices the file gives"
                )

    @property
    def active(self) -> bool:
        return self.max_calls is not None or self.max_cost is not None


def prompt_tokens(fn: Any, item: Any) -> int:
    """The prompt tokens one call of `fn` on `item` sends: the method's own count (model methods offer
    `prompt_tokens`), else 0 (a rule method sends no prompt)."""
    counter = getattr(fn, "prompt_tokens", None)
    return int(counter(item)) if callable(counter) else 0


def value_usage(value: Any) -> tuple[int, int] | None:
    """(prompt, completion) tokens a finished value records as its server's `usage`, or None: tokens counted
    here are an estimate of what the server bills, so a call counted that way keeps its bound."""
    found = value.get("usage") if isinstance(value, Mapping) else None
    if found is None or usage_problem(found) is not None or found["source"] != "server":
        return None
    return found["prompt_tokens"], found["completion_tokens"]


@dataclass
class Meter:
    """What a run (or one rank of it) has spent against its limits; the runner admits each call first.

    `max_calls` / `max_cost` are this process's part of the limits (`for_rank`). Used from the runner's
    own thread only (windows submit and collect there), so it needs no lock.
    """

    limits: SpendingLimits
    max_calls: int | None = None
    max_cost: float | None = None
    rank: int = 0
    world_size: int = 1
    calls: int = 0
    cost: float = 0.0  # admitted calls at their bound, settled ones at their usage
    by_role: dict[str, int] = field(default_factory=dict)
    held: dict[str, tuple[str, int]] = field(default_factory=dict)  # role -> (method, calls not admitted)
    _bounds: dict[tuple[str, str], float] = field(default_factory=dict)
    _prices: dict[str, Price | None] = field(default_factory=dict)

    @classmethod
    def for_rank(cls, limits: SpendingLimits, rank: int = 0, world_size: int = 1) -> Meter:
        """The meter of rank `rank` of `world_size`: calls split as evenly as whole numbers allow (the
        first ranks take the remainder; a rank may get 0), cost split evenly."""
        calls = None
        if limits.max_calls is not None:
            calls = limits.max_calls // world_size + (rank < limits.max_calls % world_size)
        cost = None if limits.max_cost is None else limits.max_cost / world_size
        return cls(limits, calls, cost, rank, world_size)

    def price(self, method: Any) -> Price | None:
        if method.spec not in self._prices:
            prices = self.limits.prices
            self._prices[method.spec] = None if prices is None else prices.find(lookup_names(method.spec, method.name))
        return self._prices[method.spec]

    def bound(self, method: Any, item: Any) -> float:
        """The most one call may cost: its prompt and the most it may generate, at the method's price."""
        price = self.price(method)
        if price is None:
            return 0.0
        return price.cost(prompt_tokens(method.fn, item), completion_limit(method.fn, item))

    def admit(self, method: Any, key: str, item: Any) -> bool:
        """Count one call on `item` (cache key `key`) if the limits allow it; False (and nothing counted)
        if it would pass one."""
        if self.max_calls is not None and self.calls + 1 > self.max_calls:
            return False
        cost = self.bound(method, item) if self.max_cost is not None else 0.0
        if self.max_cost is not None and self.cost + cost > self.max_cost:
            return False
        self.calls += 1
        self.cost += cost
        self.by_role[method.role] = self.by_role.get(method.role, 0) + 1
        self._bounds[(method.role, key)] = cost
        return True

    def settle(self, method: Any, key: str, value: Any) -> None:
        """A call finished: count it at what it cost, from the `usage` its value records, where it does."""
        bound = self._bounds.pop((method.role, key), None)
        usage = value_usage(value)
        price = self.price(method)
        if bound is not None and usage is not None and price is not None:
            self.cost += min(price.cost(*usage), bound) - bound

    def hold(self, method: Any, count: int) -> None:
        """Record `count` calls of `method` that the limits did not let this run make."""
        name, held = self.held.get(method.role, (method.name, 0))
        self.held[method.role] = (name, held + count)

    def stop(self) -> LimitReached:
        """The error that ends a run whose limits held calls back: what was done, what is left, how to go on."""
        limits, currency = self.limits, (self.limits.prices.currency if self.limits.prices else "")
        which = []
        if limits.max_calls is not None:
            which.append(f"--max-calls {limits.max_calls}")
        if limits.max_cost is not None:
            which.append(f"--max-cost {limits.max_cost:g}{' ' + currency if currency else ''}")
        if self.world_size > 1:  # the meter of a whole launch (`launch_meter`)
            which[-1] += f" (shared by {self.world_size} processes, each stopping at its share)"
        done = ", ".join(f"{role} {n}" for role, n in self.by_role.items()) or "none"
        spent = f" (cost at most {self.cost:.4g}{' ' + currency if currency else ''})" if limits.max_cost else ""
        left = "; ".join(f"{role} ({name}): {n} calls" for role, (name, n) in self.held.items())
        return LimitReached(
            f"stopped at {' / '.join(which)}: this run made {self.calls} calls{spent}, all stored in the cache "
            f"({done}); left: {left}, and the calls of the stages after them; rerun the same command to go on "
            "(stored calls are not made again, and the limits count only new calls; raise them to finish in "
            "one run; `gacc run ... --dry-run` shows what is left)"
        )


def launch_meter(meters: Sequence[Meter]) -> Meter:
    """What the ranks of one launch made, spent and held back together, as one meter (ranks in order):
    its `stop()` is the launch's one message when a rank's share held calls back."""
    limits = meters[0].limits
    total = Meter(limits, limits.max_calls, limits.max_cost, 0, len(meters))
    for meter in meters:
        total.calls += meter.calls
        total.cost += meter.cost
        for role, n in meter.by_role.items():
            total.by_role[role] = total.by_role.get(role, 0) + n
        for role, (name, n) in meter.held.items():
            total.held[role] = (name, total.held.get(role, (name, 0))[1] + n)
    return total
