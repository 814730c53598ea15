"""`gacc run --dry-run`: print the plan of a run (`gacc_hf.run.dry_run`) as a table or one JSON document."""

from __future__ import annotations

import argparse
from typing import Any

from gacc_hf import errors, strict_json
from gacc_hf.results.usage_report import money
from gacc_hf.run.dry_run import RunPlan

HEAD = ("role", "method", "calls", "cached", "to call", "prompt tokens", "max completion", "counted by", "exact")


def plan_text(plan: RunPlan) -> str:
    """The plan as a fixed-width table, its notes and its totals."""
    rows = [
        [
            n.role,
            n.name,
            n.calls,
            n.cached,
            n.to_call,
            n.prompt_tokens,
            n.completion_bound,
            n.counter,
            "yes" if not n.bound else "bound",
        ]
        + ([money(n.cost_bound, plan.currency)] if plan.priced else [])
        for n in plan.needs
    ]
    head = [*HEAD, *(["cost bound"] if plan.priced else [])]
    widths = [max(len(str(c)) for c in column) for column in zip(head, *rows, strict=True)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in [head, *rows]]
    lines += [f"note: {note}" for note in plan.notes]
    total = f"calls to make: {plan.to_call}"
    if plan.priced:
        total += f"; cost bound: {money(plan.cost_bound, plan.currency)}"
    return "\n".join(["dry run: no model loaded, no request sent", *lines, total])


def limits_answer(plan: RunPlan, args: argparse.Namespace) -> dict[str, Any] | None:
    """Whether the `--max-calls` / `--max-cost` given let the run finish (None when neither is given)."""
    max_calls, max_cost = getattr(args, "max_calls", None), getattr(args, "max_cost", None)
    if max_calls is None and max_cost is None:
        return None
    return {"max_calls": max_calls, "max_cost": max_cost, "fits": plan.fits(max_calls, max_cost)}


def print_plan(plan: RunPlan, args: argparse.Namespace) -> int:
    """Print the plan in `args.format`, with the limits' answer where limits are given; exit 0."""
    limits = limits_answer(plan, args)
    if args.format == "json":
        document = {**plan.document(), "limits": limits}
        print(strict_json.dumps(document, "the dry run's plan", indent=2, ensure_ascii=False))
        return errors.OK
    print(plan_text(plan))
    if limits is not None:
        verdict = "the run fits within" if limits["fits"] else "the run does NOT fit within"
        given = ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in limits.items() if k != "fits" and v is not None)
        print(f"{verdict} {given}")
    return errors.OK
