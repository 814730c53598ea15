"""Spending limits: `--max-calls N` and `--max-cost X` stop a run before the call that would pass them.

A limit counts what this run itself sends (cache hits are free), so a stopped run is resumed by the same
command: the calls it made are stored and not made again, and the limit allows as many new ones. Each
call is admitted before it is made. `--max-calls` counts it as one. `--max-cost` counts it at its reserve
until it is back, then at what its server says it cost. The reserve is the call's bound (its prompt
tokens, counted before sending, at the prompt price, plus the most it may generate at the completion
price), with the prompt of a served method taken at its margin (`gacc_hf.cost.margin`: what its server
may count over the local cl100k count, learned per method from the calls already back). A call whose
usage is counted here stays at its reserve (a local count is only an estimate of what the server bills).
So the money a run spends does not pass the limit, even with calls in flight, while each server counts
within its margin.

A stopped run stores everything finished, writes no results folder, and ends with `LimitReached` (exit 3),
saying what was done, what is left and the margins. Two stops are not cured by rerunning and are bad
input (exit 2): a call whose reserve alone is over the limit (`LimitTooLow`, naming its bound), and a
server whose usage is not credible (`UnsoundUsage`: more prompt tokens than the margin's ceiling, or
more completion tokens than the call allowed).

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
from gacc_hf.cost.margin import Margin, credible, credible_prompt
from gacc_hf.cost.prices import Price, Prices
from gacc_hf.cost.usage import completion_limit, reports_usage, usage_problem
from gacc_hf.errors import MODEL_FAILURES


class LimitReached(RuntimeError):
    """The next call would pass `--max-calls` or `--max-cost`: the run stopped, with everything done stored."""

    exit_code = MODEL_FAILURES


class LimitTooLow(ValueError):
    """One call's reserve alone is over the `--max-cost` (share): no run under this limit can make it."""


class UnsoundUsage(ValueError):
    """A server reported usage that cannot be believed: the money spent cannot be kept within `--max-cost`."""


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
    here are an estimate of what the server bills, so a call counted that way keeps its reserve."""
    found = value.get("usage") if isinstance(value, Mapping) else None
    if found is None or usage_problem(found) is not None or found["source"] != "server":
        return None
    return found["prompt_tokens"], found["completion_tokens"]


@dataclass(frozen=True)
class _Admitted:
    """A call in flight: the reserve it is counted at, its local prompt count and the most it may generate."""

    reserve: float
    prompt: int
    completion: int


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
    cost: float = 0.0  # admitted calls at their reserve, settled ones at their usage
    by_role: dict[str, int] = field(default_factory=dict)
    held: dict[str, tuple[str, int]] = field(default_factory=dict)  # role -> (method, calls not admitted)
    margins: dict[tuple[str, str], Margin] = field(default_factory=dict)  # (role, method) of served methods
    too_big: tuple[str, str, str] | None = None  # (role, key, why) of a call no run under this limit can make
    unsound: str | None = None  # the first usage report not believed
    _admitted: dict[tuple[str, str], _Admitted] = field(default_factory=dict)
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

    @property
    def halted(self) -> bool:
        """Whether a server's usage was not credible: no further call is admitted, and the run must stop."""
        return self.unsound is not None

    def price(self, method: Any) -> Price | None:
        if method.spec not in self._prices:
            prices = self.limits.prices
            self._prices[method.spec] = None if prices is None else prices.find(lookup_names(method.spec, method.name))
        return self._prices[method.spec]

    def _margin(self, method: Any, price: Price) -> Margin | None:
        """The margin of a served method whose prompts have a price (None for a method whose count is its
        own, with no server to bill more, or whose prompts cost nothing)."""
        if not reports_usage(method.fn) or price.prompt == 0:
            return None
        return self.margins.setdefault((method.role, method.name), Margin())

    def _reserve(self, method: Any, key: str, item: Any) -> _Admitted:
        """What one call on `item` is counted at until it is back (0 without a cost limit or a price)."""
        price = self.price(method) if self.max_cost is not None else None
        if price is None:
            return _Admitted(0.0, 0, 0)
        prompt, completion = prompt_tokens(method.fn, item), completion_limit(method.fn, item)
        margin = self._margin(method, price)
        reserved = prompt if margin is None else margin.prompt_reserve(prompt)
        reserve = price.cost(reserved, completion)
        if reserve > self.max_cost:  # type: ignore[operator]
            self.too_big = (method.role, key, self._too_big(method, price, prompt, completion, reserve, margin))
        return _Admitted(reserve, prompt, completion)

    def admit(self, method: Any, key: str, item: Any) -> bool:
        """Count one call on `item` (cache key `key`) if the limits allow it; False (and nothing counted)
        if it would pass one, or if a server's usage was not credible."""
        if self.halted or (self.max_calls is not None and self.calls + 1 > self.max_calls):
            return False
        admitted = self._reserve(method, key, item)
        if self.max_cost is not None and self.cost + admitted.reserve > self.max_cost:
            return False
        if self.too_big is not None and self.too_big[:2] == (method.role, key):
            self.too_big = None  # a margin learned since lets it in
        self.calls += 1
        self.cost += admitted.reserve
        self.by_role[method.role] = self.by_role.get(method.role, 0) + 1
        self._admitted[(method.role, key)] = admitted
        return True

    def settle(self, method: Any, key: str, value: Any) -> None:
        """A call finished: count it at what its server says it cost, where the `usage` its value records
        comes from the server and is credible; a report that is not credible halts the meter."""
        admitted = self._admitted.pop((method.role, key), None)
        usage = value_usage(value)
        price = self.price(method)
        if admitted is None or usage is None or price is None or self.max_cost is None:
            return
        if not credible(usage, admitted.prompt, admitted.completion):
            if self.unsound is None:
                self.unsound = (
                    f"the server of the {method.role} {method.name!r} reported {usage[0]:,} prompt and "
                    f"{usage[1]:,} completion tokens for a call counted here at {admitted.prompt:,} prompt tokens "
                    f"and allowed {admitted.completion:,} completion tokens (credible: at most "
                    f"{credible_prompt(admitted.prompt):,} and {admitted.completion:,})"
                )
            return  # not believed: the call stays at its reserve
        margin = self.margins.get((method.role, method.name))
        if margin is not None:
            margin.learn(admitted.prompt, usage[0])
        self.cost += price.cost(*usage) - admitted.reserve

    def hold(self, method: Any, count: int) -> None:
        """Record `count` calls of `method` that the limits did not let this run make."""
        name, held = self.held.get(method.role, (method.name, 0))
        self.held[method.role] = (name, held + count)

    def _currency(self) -> str:
        currency = self.limits.prices.currency if self.limits.prices else ""
        return f" {currency}" if currency else ""

    def _share(self, rank: bool = False) -> str:
        """The limits; with several processes, this rank's share (`rank`) or that each process stops at its
        share (the meter of a whole launch, `launch_meter`, whose message is the one the user reads)."""
        limits, currency = self.limits, self._currency()
        which = []
        if limits.max_calls is not None:
            which.append(f"--max-calls {limits.max_calls}")
        if limits.max_cost is not None:
            which.append(f"--max-cost {limits.max_cost:g}{currency}")
        if self.world_size > 1 and rank:
            share = [f"{self.max_calls} calls"] if self.max_calls is not None else []
            share += [f"{self.max_cost:.4g}{currency}"] if self.max_cost is not None else []
            which[-1] += f" (rank {self.rank} of {self.world_size}, whose share is {' / '.join(share)})"
        elif self.world_size > 1:
            which[-1] += f" (shared by {self.world_size} processes, each stopping at its share)"
        return " / ".join(which)

    def _too_big(
        self, method: Any, price: Price, prompt: int, completion: int, reserve: float, margin: Margin | None
    ) -> str:
        currency = self._currency()
        bound = f"its bound is {price.cost(prompt, completion):.4g}{currency} ({prompt:,} prompt tokens"
        bound += f" counted here, {completion:,} it may generate)"
        if margin is not None:
            bound += f", reserved at {reserve:.4g}{currency} with its server's margin of {margin.describe()}"
        return (
            f"{self._share(rank=True)} is below what one {method.role} call of {method.name!r} needs: {bound}; no run "
            f"under this limit can make it: raise --max-cost to at least {reserve:.4g}{currency}"
            + (" times the number of processes" if self.world_size > 1 else "")
        )

    def _spent(self) -> str:
        if self.limits.max_cost is None:
            return ""
        margins = "; ".join(f"{role} {name!r} {m.describe()}" for (role, name), m in self.margins.items())
        margins = f"; prompts of served calls reserved at their margin: {margins}" if margins else ""
        return f" (cost at most {self.cost:.4g}{self._currency()}{margins})"

    def stop(self) -> Exception:
        """The error that ends a run whose limits held calls back: what was done, what is left, how to go on."""
        done = ", ".join(f"{role} {n}" for role, n in self.by_role.items()) or "none"
        made = f"this run made {self.calls} calls{self._spent()}, all stored in the cache ({done})"
        if self.unsound is not None:
            return UnsoundUsage(
                f"{self.unsound}: its usage is not credible, so the money spent cannot be kept within "
                f"{self._share()}; the run stopped: {made}; check the server's usage reports (or run without "
                "--max-cost)"
            )
        if self.too_big is not None:
            return LimitTooLow(f"{self.too_big[2]}; {made}")
        left = "; ".join(f"{role} ({name}): {n} calls" for role, (name, n) in self.held.items())
        return LimitReached(
            f"stopped at {self._share()}: {made}; left: {left}, and the calls of the stages after them; rerun the "
            "same command to go on (stored calls are not made again, and the limits count only new calls; raise "
            "them to finish in one run; `gacc run ... --dry-run` shows what is left)"
        )


def launch_meter(meters: Sequence[Meter]) -> Meter:
    """What the ranks of one launch made, spent and held back together, as one meter (ranks in order):
    its `stop()` is the launch's one message when a rank's share held calls back, a rank's call was too big
    for its share, or a server's usage was not believed (the first rank's, in rank order)."""
    limits = meters[0].limits
    total = Meter(limits, limits.max_calls, limits.max_cost, 0, len(meters))
    for meter in meters:
        total.calls += meter.calls
        total.cost += meter.cost
        for role, n in meter.by_role.items():
            total.by_role[role] = total.by_role.get(role, 0) + n
        for role, (name, n) in meter.held.items():
            total.held[role] = (name, total.held.get(role, (name, 0))[1] + n)
        total.margins.update(meter.margins)
        total.too_big = total.too_big or meter.too_big
        total.unsound = total.unsound or meter.unsound
    return total
