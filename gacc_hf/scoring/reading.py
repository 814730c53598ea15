"""The reading aids a results folder records beside its scores, all derived from the answer rows alone.

`outcomes` (each outcome's share per cell), `retention` (each method cell between the closed-book floor and
full context) and `auc` (the area under each curve over the ratios run), with per-language `outcomes` and
`auc` for a run of several languages. `KEYS` names the fields that identify a row of each, for verifying a
stored folder against its answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gacc_hf.scoring.auc import auc_by_language, auc_rows
from gacc_hf.scoring.retention import retention_rows
from gacc_hf.scoring.shares import outcome_shares, outcome_shares_by_language

KEYS: dict[str, tuple[str, ...]] = {
    "outcomes": ("compressor", "condition", "ratio"),
    "outcomes_by_language": ("language", "compressor", "condition", "ratio"),
    "retention": ("compressor", "condition", "ratio"),
    "auc": ("compressor", "condition"),
    "auc_by_language": ("language", "compressor", "condition"),
}


def reading_figures(answers: Sequence[Mapping[str, Any]], n_boot: int, seed: int) -> dict[str, list[dict[str, Any]]]:
    """Every reading aid of a run, by its `results.json` field, with the run's bootstrap settings."""
    rows = list(answers)
    return {
        "outcomes": outcome_shares(rows, n_boot, seed),
        "outcomes_by_language": outcome_shares_by_language(rows, n_boot, seed),
        "retention": retention_rows(rows, n_boot, seed),
        "auc": auc_rows(rows, n_boot, seed),
        "auc_by_language": auc_by_language(rows, n_boot, seed),
    }
