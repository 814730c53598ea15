"""Memories: each distinct memory of the plan computed once (through the cache) and its ledger filled in.

A compressor's output is cut to L by the protocol before it is stored; the stored value is the memory
and its budget accounting (docs/protocol.md §9), never the raw output, so a runaway output costs no cache
space. `L = 0` gives the empty memory without a call. The ceilings call nothing: `full` is the source,
`oracle` is built from gold evidence here, on the judge side, and never reaches a compressor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gacc_hf.budget import fit_to_budget
from gacc_hf.protocol import CompressorInput
from gacc_hf.run.cache import text_hash
from gacc_hf.run.calls import Executor, Method, check_str
from gacc_hf.run.plan import MemoryPlan
from gacc_hf.scoring.evidence import evidence_flags, oracle_memory
from gacc_hf.text.matching import Normalized, normalized
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
            if row["condition"] == "full":
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


def memory_forms(values: dict[str, dict[str, Any]]) -> dict[str, Normalized]:
    """Each distinct memory text in matching form, normalised once for evidence recall and the leak audit
    (the matcher's own memo holds fewer texts than a large run has)."""
    return {v["memory"]: normalized(v["memory"]) for v in values.values() if "error" not in v}


def fill_ledger(
    plan: MemoryPlan,
    values: dict[str, dict[str, Any]],
    questions_of: dict[str, Any],
    forms: dict[str, Normalized],
) -> list[list[bool]]:
    """Copy each memory's accounting, text and evidence hits into its ledger rows (plan order kept).

    `forms` holds the memories' matching forms (`memory_forms`). Returns each row's per-question evidence
    flags, which the answer rows reuse; a memory read for the same goal by several rows is matched once."""
    evidence: list[list[bool]] = []
    matched: dict[tuple[str, str], list[bool]] = {}
    for row in plan.ledger:
        v = values[row["memory_key"]]
        questions = questions_of[row["goal_id"]]
        ok = "error" not in v
        if ok:
            pair = (v["memory"], row["goal_id"])
            flags = matched.get(pair)
            if flags is None:
                flags = matched[pair] = evidence_flags(forms[v["memory"]], questions)
        else:
            flags = [False] * len(questions)
        evidence.append(flags)
        row.update({f: v.get(f) for f in _LEDGER_FIELDS})
        row.update(
            {
                "compressor_called": v.get("compressor_called", False),
                "cached": v.get("cached", False),
                "memory": v.get("memory") if ok else None,
                "memory_sha256": text_hash(v["memory"]) if ok else None,
                "n_questions": len(questions),
                "evidence_hits": sum(flags),
                "error": v.get("error"),
            }
        )
    return evidence
