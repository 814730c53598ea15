"""Memories: each distinct memory of the plan computed once (through the cache) and its ledger filled in.

A compressor's output is cut to L by the protocol before it is stored; the stored value is the memory
and its budget accounting (docs/protocol.md §9), never the raw output, so a runaway output costs no cache
space. `L = 0` gives the empty memory without a call. The bounds call nothing: `full` is the source,
`oracle` is built from gold evidence here, on the judge side, and never reaches a compressor; `closed` is
the empty memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gacc_hf.budget import fit_to_budget
from gacc_hf.keys import text_hash
from gacc_hf.protocol import CompressorInput
from gacc_hf.run.calls import Executor, check_str
from gacc_hf.run.plan import MemoryPlan
from gacc_hf.run.tasks import Method
from gacc_hf.scoring.evidence import oracle_memory
from gacc_hf.tokenizer import Codec

_LEDGER_FIELDS = (
    "proposed_tokens",
    "retained_tokens",
    "unused_budget",
    "reencoded_tokens",
    "padding_tokens",
    "truncated",
)


def _memory_value(item: CompressorInput, output: Any) -> dict[str, Any]:
    memory = fit_to_budget(check_str(output), item.token_budget)
    return {"memory": memory.text, **memory.ledger()}


def _empty(budget: int) -> dict[str, Any]:
    return {"memory": "", **fit_to_budget("", budget).ledger(), "compressor_called": False}


def compute_memories(
    plan: MemoryPlan, compressors: Sequence[Method], ex: Executor, codec: Codec
) -> dict[str, dict[str, Any]]:
    """Memory values by key; fills every ledger row with its memory's text, accounting and evidence."""
    values: dict[str, dict[str, Any]] = {}
    first_row = {}
    for row in plan.ledger:
        first_row.setdefault(row["memory_key"], row)
    for method, task in plan.tasks.values():
        if method is not None:
            if task.item.token_budget == 0:  # nothing a compressor says could survive L = 0
                values[task.key] = _empty(0)
        else:
            group = task.item
            row = first_row[task.key]
            if row["condition"] == "closed":
                values[task.key] = _empty(0)
            elif row["condition"] == "full":
                n = row["source_tokens"]
                values[task.key] = {
                    "memory": group.context,
                    **{f: n for f in ("proposed_tokens", "retained_tokens", "reencoded_tokens")},
                    "padding_tokens": 0,
                    "unused_budget": 0,
                    "truncated": False,
                    "compressor_called": False,
                }
            else:
                oracle = oracle_memory(group.context, group.questions, row["budget"], codec)
                values[task.key] = {"memory": oracle.text, **oracle.ledger(), "compressor_called": False}
    for method in compressors:
        todo = [t for m, t in plan.tasks.values() if m is method and t.key not in values]
        computed = ex.run(method, "memory", todo, _memory_value)
        for k, v in computed.items():
            values[k] = {**v, "compressor_called": "error" not in v, "cached": k not in ex.fresh}
    return values


def fill_ledger(plan: MemoryPlan, values: dict[str, dict[str, Any]]) -> None:
    """Copy each memory's accounting and text into the ledger rows (plan order kept); the evidence columns
    stay empty until `add_evidence` (the matcher may still be working on them)."""
    for row in plan.ledger:
        v = values[row["memory_key"]]
        ok = "error" not in v
        row.update({f: v.get(f) for f in _LEDGER_FIELDS})
        row.update(
            {
                "compressor_called": v.get("compressor_called", False),
                "cached": v.get("cached", False),
                "memory": v.get("memory") if ok else None,
                "memory_sha256": text_hash(v["memory"]) if ok else None,
                "n_questions": None,
                "evidence_hits": None,
                "error": v.get("error"),
            }
        )


def add_evidence(plan: MemoryPlan, evidence: list[list[bool]]) -> None:
    """Each row's question count and evidence hits, from its per-question evidence flags
    (`gacc_hf.run.cache.matches`)."""
    for row, flags in zip(plan.ledger, evidence, strict=True):
        row["n_questions"], row["evidence_hits"] = len(flags), sum(flags)
