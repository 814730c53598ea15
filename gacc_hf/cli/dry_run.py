"""`gacc run --dry-run`: print the plan of a run (`gacc_hf.run.dry_run`) as a table or one JSON document."""

from __future__ import annotations

import argparse
from typing import Any

from gacc_hf import errors, strict_json
from gacc_hf.cost.margin import CREDIBLE_RATIO, TEMPLATE_TOKENS
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
    """Whether the `--max-calls` / `--max-cost` given let the run finish (None when neither is given), and for
    `--max-cost` the largest reserve of one call and how many times the local prompt count the servers may
    bill (`RunPlan.server_ratio`; None: no served prompt has a price)."""
    max_calls, max_cost = getattr(args, "max_calls", None), getattr(args, "max_cost", None)
    if max_calls is None and max_cost is None:
        return None
    answer = {"max_calls": max_calls, "max_cost": max_cost, "fits": plan.fits(max_calls, max_cost)}
    if max_cost is not None:
        answer |= {"first_reserve": plan.first_reserve, "server_ratio": plan.server_ratio(max_cost)}
    return answer


def limits_text(plan: RunPlan, limits: dict[str, Any]) -> str:
    """The limits' answer in words: fits or not, and why, for a cost limit."""
    given = ", ".join(f"--{k}".replace("_", "-") + f" {limits[k]}" for k in ("max_calls", "max_cost") if limits[k])
    line = f"{'the run fits within' if limits['fits'] else 'the run does NOT fit within'} {given}"
    max_cost = limits["max_cost"]
    if max_cost is None:
        return line
    reserve, ratio = money(limits["first_reserve"], plan.currency), limits["server_ratio"]
    if limits["first_reserve"] > max_cost:
        return f"{line}: one call is reserved at {reserve} before its server reports usage (refused, exit 2)"
    if ratio is not None and limits["fits"]:
        line += f" while its servers bill at most {ratio:.3g} x the prompt tokens counted here"
        line += f" (a served prompt is reserved at {CREDIBLE_RATIO} x that count + {TEMPLATE_TOKENS} tokens until"
        line += " its server reports usage, then at the largest ratio seen)"
    return line


def print_plan(plan: RunPlan, args: argparse.Namespace) -> int:
    """Print the plan in `args.format`, with the limits' answer where limits are given; exit 0. The JSON is
    strict (no NaN or Infinity: prices are bounded, so no cost is ever one)."""
    limits = limits_answer(plan, args)
    if args.format == "json":
        document = {**plan.document(), "limits": limits}
        print(strict_json.dumps(document, "the dry run's plan", indent=2, ensure_ascii=False))
        return errors.OK
    print(plan_text(plan))
    if limits is not None:
        print(limits_text(plan, limits))
    return errors.OK
