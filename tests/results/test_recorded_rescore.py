"""The recorded English runs in `docs/results/` rescored by today's matcher: every changed verdict is listed here.

Both runs used the `contains` judge. Each change below is a fix of the old normaliser, which deleted
punctuation (so `1.5%` read as `15%` and `Wednesday.ly` as one word) instead of separating at it. The main
job's run was recorded again with today's judge (its two changed verdicts, `1.5%` for `15%`, are now as
scored), so nothing of it changes.
"""

from __future__ import annotations

import pandas as pd
import pytest

from gacc_hf.text.matching import contains
from tests.helpers.paths import ROOT

RUNS = ROOT / "docs" / "results"
# (answer, recorded verdict) -> why the new verdict differs
CHANGED_VERDICTS = {
    "main": {},
    "baselines": {
        ("The answer is: 1.5%", True): "1.5% is not 15%",
        ("The battery use was reduced by 1.5% compared to the previous release.", True): "1.5% is not 15%",
        ("The answer to this question is: 1.5%", True): "1.5% is not 15%",
        ("The depth of soil cores taken was 1.5 cm.", True): "1.5 cm is not 15 cm",
        (
            "The projected increase in bill will be 2.5% of the monthly usage, which is 0.25",
            True,
        ): "2.5% and 0.25 are not 25%",
    },
}
# (compressor, condition, question_id) whose recorded evidence flag differs: the memory reads "Wednesday.ly"
CHANGED_EVIDENCE = {
    "main": set(),
    "baselines": {
        ("llmlingua", "own", "policy-hybrid-work/g1/q2"),
        ("llmlingua", "none", "policy-hybrid-work/g1/q2"),
        ("longllmlingua", "none", "policy-hybrid-work/g1/q2"),
        ("smollm2", "own", "spec-usage-billing/g2/q5"),  # "0.25" / "2.5%" are not "25%"
    },
}


@pytest.mark.parametrize("run", ["main", "baselines"])
def test_recorded_runs_rescore_identically_but_for_the_listed_verdicts(run):
    answers = pd.read_parquet(RUNS / run / "answers.parquet")
    answers = answers[answers["answer"].notna()]
    changed = {
        (row.answer, bool(row.correct))
        for row in answers.itertuples()
        if contains(row.answer, list(row.references)) != row.correct
    }
    assert changed == set(CHANGED_VERDICTS[run])


@pytest.mark.parametrize("run", ["main", "baselines"])
def test_recorded_evidence_flags_rescore_identically_but_for_the_listed_rows(run):
    answers = pd.read_parquet(RUNS / run / "answers.parquet")
    memories = pd.read_parquet(RUNS / run / "memories.parquet", columns=["memory_sha256", "memory"])
    text = dict(zip(memories["memory_sha256"], memories["memory"], strict=True))
    changed = {
        (row.compressor, row.condition, row.question_id)
        for row in answers.itertuples()
        if row.memory_sha256 in text and contains(text[row.memory_sha256], list(row.references)) != row.evidence
    }
    assert changed == CHANGED_EVIDENCE[run]
