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
from gacc_hf.scoring.by_language import score_by_language
from gacc_hf.scoring.compare import condition_gaps
from gacc_hf.scoring.retention import retention_rows
from gacc_hf.scoring.scores import score_answers
from gacc_hf.scoring.settings import SETTING, Parts, over_parts, setting_parts
from gacc_hf.scoring.shares import outcome_shares, outcome_shares_by_language

KEYS: dict[str, tuple[str, ...]] = {  # within a setting: a row's reader and judge are matched too
    "outcomes": ("compressor", "condition", "ratio"),
    "outcomes_by_language": ("language", "compressor", "condition", "ratio"),
    "retention": ("compressor", "condition", "ratio"),
    "auc": ("compressor", "condition"),
    "auc_by_language": ("language", "compressor", "condition"),
}


def reading_figures(answers: Sequence[Mapping[str, Any]], n_boot: int, seed: int) -> dict[str, list[dict[str, Any]]]:
    """Every reading aid of a run, by its `results.json` field, with the run's bootstrap settings, per
    (reader, judge) setting (`gacc_hf.scoring.settings`)."""
    return _reading(setting_parts(answers), n_boot, seed)


def setting_scores(answers: Sequence[Mapping[str, Any]], n_boot: int, seed: int) -> dict[str, list[dict[str, Any]]]:
    """`scores` and `scores_by_language` of a run, per (reader, judge) setting."""
    return _scores(setting_parts(answers), n_boot, seed)


def setting_gaps(answers: Sequence[Mapping[str, Any]], n_boot: int, seed: int) -> list[dict[str, Any]]:
    """own−none and own−cross (`condition_gaps`) per (reader, judge) setting."""
    return over_parts(setting_parts(answers), lambda part: condition_gaps(part, n_boot, seed))


def all_figures(answers: Sequence[Mapping[str, Any]], n_boot: int, seed: int) -> dict[str, list[dict[str, Any]]]:
    """Scores, gaps, scores by language and every reading aid of a run (what `setting_scores`, `setting_gaps`
    and `reading_figures` give), its rows split by setting once for all of them."""
    parts = setting_parts(answers)
    scored = _scores(parts, n_boot, seed)
    return {
        "scores": scored["scores"],
        "gaps": over_parts(parts, lambda part: condition_gaps(part, n_boot, seed)),
        "scores_by_language": scored["scores_by_language"],
        **_reading(parts, n_boot, seed),
    }


def _reading(parts: Parts, n_boot: int, seed: int) -> dict[str, list[dict[str, Any]]]:
    return {
        "outcomes": over_parts(parts, lambda part: outcome_shares(part, n_boot, seed)),
        "outcomes_by_language": over_parts(parts, lambda part: outcome_shares_by_language(part, n_boot, seed)),
        "retention": over_parts(parts, lambda part: retention_rows(part, n_boot, seed)),
        "auc": over_parts(parts, lambda part: auc_rows(part, n_boot, seed)),
        "auc_by_language": over_parts(parts, lambda part: auc_by_language(part, n_boot, seed)),
    }


def _scores(parts: Parts, n_boot: int, seed: int) -> dict[str, list[dict[str, Any]]]:
    scores = over_parts(parts, lambda part: score_answers(part, n_boot, seed))

    def of_language(part: list[Any]) -> list[dict[str, Any]]:
        setting = [part[0].get(k) for k in SETTING] if part else None
        overall = [
            {k: v for k, v in s.items() if k not in SETTING} for s in scores if [s.get(k) for k in SETTING] == setting
        ]
        return score_by_language(part, n_boot, seed, overall)

    return {"scores": scores, "scores_by_language": over_parts(parts, of_language)}
