"""The plan of a run: one ledger row per (compressor, group, condition, ratio), one task per distinct memory.

Memory keys bind what the protocol says can change a memory (docs/protocol.md §11): the sha256 of the context
and of the shown goal, the budget L, the tokenizer name and revision, the protocol version (the cut
rule) and the compressor's name and revision. Rows that share a key share one memory, so a memory is
computed once however many conditions or ratios need it. The bounds are planned here too, with no
compressor: `full` (memory = the source, one row per group), `oracle` (the evidence sentences cut to L,
built on the judge side: see `gacc_hf.scoring.evidence`) and `closed` (the empty memory, L = 0, one row per
group, one memory for the whole run).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from gacc_hf.budget import PROTOCOL_VERSION, token_budget
from gacc_hf.data.schema import Group
from gacc_hf.keys import make_key, text_hash
from gacc_hf.protocol import CompressorInput
from gacc_hf.run.cache.key_template import KeyTemplate
from gacc_hf.run.conditions import CEILINGS, GoalAssigner
from gacc_hf.run.tasks import Method, Task
from gacc_hf.scoring.evidence import ORACLE_REVISION
from gacc_hf.tokenizer import Codec

FULL_CONTEXT = "full-context"  # the compressor name of `full` rows: the source itself
ORACLE = "oracle"  # the compressor name of `oracle` rows: evidence sentences, an upper bound
CLOSED_BOOK = "closed-book"  # the compressor name of `closed` rows: the empty memory, the floor


@dataclass
class MemoryPlan:
    """Ledger rows (plan order) and the distinct memories they need, by key.

    A task's method is None for the ceilings, which no compressor produces.
    """

    ledger: list[dict[str, Any]]
    tasks: dict[str, tuple[Method | None, Task]]
    shown_goals: dict[str, str]  # shown goal id -> text ("" for the empty goal)


def plan_memories(
    groups: Sequence[Group],
    compressors: Sequence[Method],
    conditions: Sequence[str],
    ratios: Sequence[Fraction],
    assigner: GoalAssigner,
    n_tokens: dict[str, int],
    codec: Codec,
) -> MemoryPlan:
    tokenizer = f"{codec.name}@{codec.revision}"
    plan = MemoryPlan([], {}, {"": ""})
    methods = [c for c in conditions if c not in CEILINGS]
    memory_keys = {
        method.name: KeyTemplate(
            ("context", "goal", "budget"),
            tokenizer=tokenizer,
            protocol=PROTOCOL_VERSION,
            compressor=method.name,
            revision=method.revision,
        )
        for method in compressors
    }
    budgets_of: dict[int, list[tuple[Fraction, int]]] = {}  # per source length: (ratio, L) for every ratio
    for group in groups:
        n = n_tokens[group.context]
        ctx_hash = text_hash(group.context)
        budgets = budgets_of.get(n) or budgets_of.setdefault(n, [(r, token_budget(n, r)) for r in ratios])
        if "full" in conditions:
            key = make_key(kind="full", context=ctx_hash, tokenizer=tokenizer)
            plan.tasks.setdefault(key, (None, Task(key, group, f"context_id={group.context_id!r}")))
            plan.ledger.append(_row(group, "", "full", FULL_CONTEXT, "source", Fraction(1), n, n, key))
        if "closed" in conditions:
            key = make_key(kind="closed", tokenizer=tokenizer)
            plan.tasks.setdefault(key, (None, Task(key, group, "the empty memory (closed)")))
            plan.ledger.append(_row(group, "", "closed", CLOSED_BOOK, "empty", Fraction(0), n, 0, key))
        if "oracle" in conditions:
            for r, budget in budgets:
                key = make_key(
                    kind="oracle",
                    goal_id=group.goal_id,
                    context=ctx_hash,
                    budget=budget,
                    protocol=PROTOCOL_VERSION,
                    oracle=ORACLE_REVISION,
                )
                plan.tasks.setdefault(key, (None, Task(key, group, f"goal_id={group.goal_id!r} (oracle, L={budget})")))
                plan.ledger.append(_row(group, "", "oracle", ORACLE, ORACLE_REVISION, r, n, budget, key))
        for method in compressors:
            for cond in methods:
                shown = assigner.shown(group, cond)
                plan.shown_goals.setdefault(shown.goal_id, shown.text)
                goal_hash = text_hash(shown.text)
                for r, budget in budgets:
                    key = memory_keys[method.name](ctx_hash, goal_hash, budget)
                    if key not in plan.tasks:  # the first row of a memory names it
                        label = (
                            f"goal_id={group.goal_id!r} (context_id={group.context_id!r}, condition={cond}, "
                            f"ratio={float(r):g}, L={budget})"
                        )
                        item = CompressorInput(group.context, shown.text, budget)
                        plan.tasks[key] = (method, Task(key, item, label))
                    plan.ledger.append(
                        _row(group, shown.goal_id, cond, method.name, method.revision, r, n, budget, key)
                    )
    return plan


def _row(
    group: Group, shown: str, cond: str, name: str, rev: str, ratio: Fraction, n: int, budget: int, key: str
) -> dict[str, Any]:
    return {
        "context_id": group.context_id,
        "goal_id": group.goal_id,
        "shown_goal_id": shown,
        "condition": cond,
        "compressor": name,
        "compressor_revision": rev,
        "ratio": float(ratio),
        "ceiling": cond in CEILINGS,
        "source_tokens": n,
        "budget": budget,
        "memory_key": key,
    }
