"""`gacc run --dry-run`: what a run would call, send and cost, found without loading a model or sending a request.

The run is validated as `run_benchmark` validates it (data, ratios, conditions, methods, prices) and planned
the same way; the cache says which calls are already done. Per role and method the plan counts the calls
still to make, the prompt tokens they send (the method's tokenizer, cl100k for served methods) and a bound
on the tokens they generate (max new tokens × calls). A reader's input is known only once its memory is,
and a judge's once its answer is: where a memory is not cached, each of its questions is counted as one
reader call whose memory fills its whole budget, and each such answer as one judge call with an answer as
long as the reader may write. Those figures are bounds (identical memories or answers share one call);
the plan says so per role, and a warm or partly warm cache makes them exact. A local model that runs on the
CPU at a measured rate (`cpu_seconds_per_prompt_token(item)`) gets an estimate of its calls' time, said in a
note when it is a minute or more: long sources and Chinese text read slowly there.

For `--max-cost` the plan also gives the largest reserve one call needs before its server has reported
any usage (`gacc_hf.cost.margin`: a served prompt at its credible ceiling), which a limit must hold, and
how many times the local prompt count the servers may bill with the run still within the limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gacc_hf.cost.costing import price_methods
from gacc_hf.cost.margin import credible_prompt
from gacc_hf.cost.prices import MILLION, Price, Prices
from gacc_hf.cost.usage import completion_limit, meters, reports_usage, token_counter
from gacc_hf.keys import text_hash
from gacc_hf.protocol import CEILINGS, JudgeInput, ReaderInput
from gacc_hf.run.benchmark import load_rows, pair_goals, validate_run
from gacc_hf.run.cache import CACHE_FILENAME, Cache
from gacc_hf.run.compress import compute_memories
from gacc_hf.run.goals import partial_choice
from gacc_hf.run.plan import MemoryPlan, plan_memories
from gacc_hf.run.read import answer_keys, asked_of, verdict_tasks
from gacc_hf.run.tasks import Method
from gacc_hf.tokenizer import get_codec

ROLES = ("compressor", "reader", "judge")
# The CPU time estimate from which a dry run says how long a local model will take (shorter goes unsaid).
LONG_ON_CPU_S = 60.0


@dataclass
class Need:
    """One method's part of the plan: calls the run needs, those cached, and what the rest send."""

    role: str
    name: str
    counter: str
    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_bound: int = 0
    bound: bool = False  # some inputs were not known: the figures are upper bounds
    price: Price | None = None
    cpu_seconds: float | None = None  # estimated CPU time of the calls to make, where the method states its rate
    served: bool = False  # its server bills its own count of the prompt (`gacc_hf.cost.margin`)
    first_reserve: float = 0.0  # the largest reserve of one call before its server reports usage

    @property
    def to_call(self) -> int:
        return self.calls - self.cached

    @property
    def cost_bound(self) -> float | None:
        return None if self.price is None else self.price.cost(self.prompt_tokens, self.completion_bound)

    @property
    def margined(self) -> bool:
        """Whether a cost limit reserves this method's prompts at a margin: served, and prompts priced."""
        return self.served and self.price is not None and self.price.prompt > 0

    def add(self, fn: Any, item: Any, cached: bool, *, extra_prompt: int = 0, bound: bool = False) -> None:
        """Count one call on `item` (already in the cache, or to be made)."""
        self.calls += 1
        self.bound = self.bound or bound
        if cached:
            self.cached += 1
            return
        prompt = fn.prompt_tokens(item) + extra_prompt if meters(fn) else 0
        completion = completion_limit(fn, item)
        self.prompt_tokens += prompt
        self.completion_bound += completion
        rate = getattr(fn, "cpu_seconds_per_prompt_token", None) if meters(fn) else None
        if callable(rate) and (per_token := rate(item)) is not None:
            self.cpu_seconds = (self.cpu_seconds or 0.0) + prompt * per_token
        if self.price is not None:
            reserved = credible_prompt(prompt) if self.margined else prompt
            self.first_reserve = max(self.first_reserve, self.price.cost(reserved, completion))

    def document(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "method": self.name,
            "calls": self.calls,
            "cached": self.cached,
            "to_call": self.to_call,
            "prompt_tokens": self.prompt_tokens,
            "completion_bound": self.completion_bound,
            "counted_by": self.counter,
            "exact": not self.bound,
            "cost_bound": self.cost_bound,
            "cpu_seconds_estimate": self.cpu_seconds,
            "first_reserve": self.first_reserve if self.price is not None else None,
        }


@dataclass
class RunPlan:
    """What a run needs, per role and method (`needs`), and the currency of its cost bound."""

    needs: list[Need]
    currency: str = ""
    priced: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def to_call(self) -> int:
        return sum(n.to_call for n in self.needs)

    @property
    def cost_bound(self) -> float | None:
        return sum(n.cost_bound or 0.0 for n in self.needs) if self.priced else None

    @property
    def first_reserve(self) -> float:
        """The largest reserve one call needs before its server reports usage: a cost limit below it is
        refused when that call comes (`gacc_hf.cost.limits.LimitTooLow`)."""
        return max((n.first_reserve for n in self.needs), default=0.0)

    def fits(self, max_calls: int | None = None, max_cost: float | None = None) -> bool:
        """Whether the calls still to make stay within `max_calls`, and their cost bound and the largest
        reserve of one call within `max_cost` (None: no limit). A limit on cost without prices cannot be
        checked: ValueError."""
        if max_cost is not None and not self.priced:
            raise ValueError("a cost limit needs --prices to check it against")
        within_calls = max_calls is None or self.to_call <= max_calls
        within_cost = max_cost is None or max(self.cost_bound or 0.0, self.first_reserve) <= max_cost
        return within_calls and within_cost

    def server_ratio(self, max_cost: float) -> float | None:
        """How many times the prompt tokens counted here the servers may bill with the cost bound still
        within `max_cost` (None: no served prompt has a price)."""
        prices = [(n.price, n.prompt_tokens) for n in self.needs if n.margined and n.price is not None]
        served = sum(price.prompt * tokens for price, tokens in prices) / MILLION
        if served == 0:
            return None
        return (max_cost - ((self.cost_bound or 0.0) - served)) / served

    def document(self) -> dict[str, Any]:
        return {
            "needs": [n.document() for n in self.needs],
            "to_call": self.to_call,
            "cost_bound": self.cost_bound,
            "currency": self.currency,
            "notes": self.notes,
        }


def dry_run(
    dataset: Any,
    *,
    compressor: Any,
    reader: Any,
    judge: Any,
    ratios: Any,
    conditions: Any,
    cache_dir: str | None,
    settings: Mapping[str, Any],
    prices: Prices | None = None,
    limit: int | float | None = None,
    columns: Mapping[str, str] | None = None,
    data_spec: str | None = None,
    goals: Any = None,
) -> RunPlan:
    """The plan of the run `run_benchmark` would make with these arguments: validated the same way (a
    ValueError names what is wrong), planned the same way, looked up in the same cache (never written).
    `settings` are the run's seed, n_bootstrap, batch_size and on_error."""
    loaded, _revision = load_rows(dataset, columns, data_spec)
    setup = validate_run(loaded, compressor, reader, judge, ratios, conditions, cache_dir, limit, settings, goals)
    codec = get_codec()
    texts = list(dict.fromkeys(g.context for g in setup.groups))
    n_tokens = dict(zip(texts, codec.count_batch(texts), strict=True))
    assigner = pair_goals(setup, settings["seed"])
    plan = plan_memories(
        setup.groups, setup.compressors, setup.conditions, setup.exact_ratios, assigner, n_tokens, codec
    )
    existing = cache_dir if cache_dir is not None and (Path(cache_dir) / CACHE_FILENAME).is_file() else None
    cache = Cache(existing)
    try:
        return plan_calls(setup, plan, setup.groups, cache, prices)
    finally:
        cache.close()


def plan_calls(setup: Any, plan: MemoryPlan, groups: list[Any], cache: Cache, prices: Prices | None = None) -> RunPlan:
    """The plan of a validated and planned run (`gacc_hf.run.benchmark`); no model is called."""
    priced = None if prices is None else price_methods([(m.role, m.spec, m.name) for m in _methods(setup)], prices)
    needs = {(m.role, m.name): Need(m.role, m.name, _counter(m.fn)) for m in _methods(setup)}
    if priced is not None:
        for (role, name), need in needs.items():
            entry = priced["methods"][role][name]
            need.price = Price(0.0, 0.0) if entry is None else Price(entry["prompt"], entry["completion"])
    for m in _methods(setup):
        needs[(m.role, m.name)].served = reports_usage(m.fn)
    memories = _memories(plan, setup.compressors, cache, needs)
    _reading(setup, plan, groups, memories, cache, needs)
    notes = [
        f"{n.role} {n.name!r}: its calls and tokens are upper bounds (inputs not yet computed were bounded)"
        for n in needs.values()
        if n.bound
    ]
    notes += [cpu_note(n) for n in needs.values() if (n.cpu_seconds or 0.0) >= LONG_ON_CPU_S]
    shown = list(needs.values())
    if set(setup.conditions) <= set(CEILINGS):  # a compressor named for a run of bounds only is never called
        shown = [n for n in shown if n.role != "compressor"]
        notes.append(f"no compressor runs: every condition is a bound ({', '.join(setup.conditions)})")
    if partial := partial_choice(getattr(setup, "chosen", None)):
        notes.append(partial)
    return RunPlan(shown, prices.currency if prices else "", prices is not None, notes)


def cpu_note(need: Need) -> str:
    """One line: how long a local model's calls will take on the CPU, and from what.

    >>> cpu_note(Need("reader", "smollm2", "-", prompt_tokens=422_067, cpu_seconds=4_220.0))
    "reader 'smollm2' runs on the CPU: about 1 h 10 min for 422,067 prompt tokens (its measured rate per token)"
    """
    minutes = round((need.cpu_seconds or 0.0) / 60)
    took = f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{max(minutes, 1)} min"
    return (
        f"{need.role} {need.name!r} runs on the CPU: about {took} for {need.prompt_tokens:,} prompt tokens "
        "(its measured rate per token)"
    )


def _counter(fn: Any) -> str:
    return token_counter(fn) if meters(fn) else "-"


def _methods(setup: Any) -> list[Method]:
    return list(setup.methods)


def _memories(
    plan: MemoryPlan, compressors: list[Method], cache: Cache, needs: Mapping[tuple[str, str], Need]
) -> dict[str, dict[str, Any]]:
    """The memories known without a call (bounds, cached ones); the others count as compressor calls."""
    values = compute_memories(plan, [], None, get_codec())  # type: ignore[arg-type]  # bounds only: no call
    for method in compressors:
        todo = [t for m, t in plan.tasks.values() if m is method and t.key not in values]
        cached = cache.get_many("memory", [t.key for t in todo])
        values.update(cached)
        need = needs[("compressor", method.name)]
        for task in todo:
            need.add(method.fn, task.item, task.key in cached)
    return values


def _reading(
    setup: Any,
    plan: MemoryPlan,
    groups: list[Any],
    memories: dict[str, dict[str, Any]],
    cache: Cache,
    needs: Mapping[tuple[str, str], Need],
) -> None:
    """Count reader and judge calls: exact where memories (and answers) are known, bounded elsewhere; each
    reader reads the run's memories once, each judge judges each reader's answers (`read_and_judge`)."""
    unknown = {"error": "not computed yet"}
    known = {key: memories.get(key, unknown) for key in {row["memory_key"] for row in plan.ledger}}
    ledger = [{**row, "memory_sha256": _sha(known[row["memory_key"]])} for row in plan.ledger]
    questions = {g.goal_id: asked_of(g) for g in groups}
    by_goal = {g.goal_id: g for g in groups}
    for read in setup.readers:
        reader = needs[("reader", read.name)]
        keys, asked, tasks = answer_keys(ledger, known, questions, read)
        answers = cache.get_many("answer", tasks.keys)
        for key in tasks.keys:
            reader.add(read.fn, tasks.task(key).item, key in answers)
        answer_limit = completion_limit(read.fn, ReaderInput("", ""))
        unread: list[tuple[Any, Any]] = []  # (question, group) of each distinct read of a memory not yet made
        seen: set[tuple[str, str]] = set()
        for row in ledger:
            if "error" not in known[row["memory_key"]]:
                continue
            group = by_goal[row["goal_id"]]
            for q in group.questions:
                if (row["memory_key"], q.question) in seen:
                    continue
                seen.add((row["memory_key"], q.question))
                reader.add(read.fn, ReaderInput("", q.question), False, extra_prompt=row["budget"], bound=True)
                unread.append((q, group))
        for judged in setup.judges:
            judge = needs[("judge", judged.name)]
            for q, group in unread:
                item = JudgeInput(q.question, "", q.references, group.context)
                judge.add(judged.fn, item, False, bound=True, extra_prompt=answer_limit)
            _judging(keys, asked, answers, judged, cache, judge, answer_limit)


def _judging(
    keys: list[str | None],
    asked: list[Any],
    answers: dict[str, Any],
    judged: Method,
    cache: Cache,
    judge: Need,
    answer_limit: int,
) -> None:
    """Judge calls of the answers the reader must still give (bounded) and of those cached (exact)."""
    follow = verdict_tasks(list(keys), asked, judged)
    verdicts = follow(answers)
    cached = cache.get_many("verdict", verdicts.keys)
    for key in verdicts.keys:
        judge.add(judged.fn, verdicts.task(key).item, key in cached)
    first: dict[str, int] = {}
    for i, key in enumerate(keys):
        if key is not None and key not in answers:
            first.setdefault(key, i)
    for i in first.values():
        question, group = asked[i][0], asked[i][1]
        item = JudgeInput(question.question, "", question.references, group.context)
        judge.add(judged.fn, item, False, bound=True, extra_prompt=answer_limit)


def _sha(value: Mapping[str, Any]) -> str | None:
    return text_hash(value["memory"]) if "memory" in value else None
