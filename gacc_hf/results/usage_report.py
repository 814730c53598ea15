"""Usage and cost as text: the tables of `report.md`, the model card's, and the one-line summary `gacc run`
prints, all from the `usage` and `cost` fields of `results.json` (`gacc_hf.cost`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gacc_hf.results.reading_report import md_table

NOT_RECORDED = "not recorded (a results folder written before gacc-hf recorded usage)"
RESCORED = (
    "not counted: these answers were judged again (`gacc rescore`); their tokens are those of the run named in "
    "config.rescored_from"
)


def not_recorded(payload: Mapping[str, Any]) -> str:
    """Why a results document has no usage: written before usage was recorded, or rescored from another run."""
    return RESCORED if (payload.get("config") or {}).get("rescored_from") else NOT_RECORDED


def money(value: float | None, currency: str) -> str:
    """A cost with its currency, to six significant digits ("0.00123 USD").

    >>> money(0.001234567, "USD"), money(2.5, ""), money(None, "USD")
    ('0.00123457 USD', '2.5', 'n/a')
    """
    if value is None:
        return "n/a"
    return f"{value:.6g}" + (f" {currency}" if currency else "")


def usage_table(
    usage: Mapping[str, Any] | None, cost: Mapping[str, Any] | None = None, missing: str = NOT_RECORDED
) -> str:
    """Per role and method: calls, prompt and completion tokens, where the counts came from, what this run
    sent; and the cost of each when the run was priced. `missing` says why there is no usage."""
    if not usage:
        return missing
    head = ["role", "method", "calls", "prompt tokens", "completion tokens", "counted by", "sent by this run"]
    head += ["cost", "cost sent"] if cost else []
    rows = []
    for role, by_method in usage["roles"].items():
        for name, e in by_method.items():
            sent = usage["sent"].get(role, {}).get(name, {})
            counter = usage.get("counters", {}).get(role, {}).get(name)
            source = e["source"] + (f" ({counter})" if counter and "local" in e["source"] else "")
            row = [role, f"`{name}`", e["calls"], e["prompt_tokens"], e["completion_tokens"], source]
            row.append(
                f"{sent.get('calls', 0)} calls, {sent.get('prompt_tokens', 0)} + {sent.get('completion_tokens', 0)}"
            )
            if cost:
                currency = cost["currency"]
                row.append(money(cost["roles"][role][name], currency))
                row.append(money(cost["sent_roles"].get(role, {}).get(name, 0.0), currency))
            rows.append(row)
    return md_table(head, rows)


def cost_table(cost: Mapping[str, Any] | None) -> str:
    """Per cell: cost per role, in all and per answered question, and the break-even count of questions."""
    if not cost:
        return ""
    currency = cost["currency"]
    head = ["compressor", "condition", "ratio", "compressor cost", "reader cost", "judge cost", "total"]
    head += ["answered", "per answered question", "break-even questions per memory"]
    rows = [
        [
            f"`{c['compressor']}`",
            c["condition"],
            f"{c['ratio']:g}",
            *(money(c[f"{role}_cost"], currency) for role in ("compressor", "reader", "judge")),
            money(c["total"], currency),
            c["answered"],
            money(c["per_question"], currency),
            c.get("break_even_questions", "(a bound)"),
        ]
        for c in cost["cells"]
    ]
    return md_table(head, rows)


def usage_line(usage: Mapping[str, Any] | None, cost: Mapping[str, Any] | None = None) -> str:
    """One line: tokens per role (prompt + completion) and what this run sent; the cost when priced."""
    if not usage:
        return f"usage: {NOT_RECORDED}"
    parts = []
    for role, by_method in usage["roles"].items():
        p = sum(e["prompt_tokens"] for e in by_method.values())
        c = sum(e["completion_tokens"] for e in by_method.values())
        parts.append(f"{role} {p}+{c}")
    sent = [e for by_method in usage["sent"].values() for e in by_method.values()]
    line = (
        f"usage (prompt+completion tokens): {', '.join(parts)}; sent by this run: "
        f"{sum(e['calls'] for e in sent)} calls, {sum(e['prompt_tokens'] for e in sent)}+"
        f"{sum(e['completion_tokens'] for e in sent)} tokens"
    )
    if cost:
        currency = cost["currency"]
        line += f"; cost {money(cost['total'], currency)} (sent by this run {money(cost['sent'], currency)})"
    return line
