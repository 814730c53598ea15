"""The Inspect task's metric and integrity audit: Micro weighs questions and Macro counts all-correct groups; each
counter fires on a planted fault and stays quiet on an honest memory, in English and Chinese."""

from __future__ import annotations

import dataclasses
import json

import pytest
from inspect_ai.scorer import SampleScore, Score

from gacc_hf import load_sample
from gacc_hf.budget import fit_to_budget
from gacc_hf.data.schema import validate
from gacc_hf.inspect_eval.samples import Planned, compressor_messages, plan_groups
from gacc_hf.inspect_eval.scorer import Audit, gacc_scores, given_ratio
from gacc_hf.tokenizer import get_codec
from tests.helpers.paths import ROOT

QUIET = {"budget_violations": 0, "count_errors": 0, "exposures": 0, "prompt_exposures": 0}


def _score(correct: int, questions: int, **counters: int) -> SampleScore:
    value = {"correct": correct, "questions": questions, "all_correct": int(correct == questions), **QUIET, **counters}
    return SampleScore(score=Score(value=value))


def test_micro_weighs_questions_and_macro_counts_all_correct_groups():
    # 2 of 2 and 1 of 3: Micro 3/5 (the mean of the groups' accuracies would be 2/3), one group of two all correct
    metrics = gacc_scores()([_score(2, 2), _score(1, 3, exposures=2, budget_violations=1)])
    expected = {"micro": 0.6, "macro": 0.5, "n_questions": 5, "n_goals": 2, **QUIET, "exposures": 2}
    assert metrics == {**expected, "budget_violations": 1}


def _groups(language: str):
    if language == "en":
        return validate(list(load_sample())[:2])  # one context, goals g1 and g2
    lines = (ROOT / "tests" / "fixtures" / "zh_fixture.jsonl").read_text(encoding="utf-8").splitlines()
    return validate([json.loads(line) for line in lines][:2])


@pytest.fixture(params=["en", "zh"])
def planned(request) -> tuple[Audit, Planned, str]:
    groups = _groups(request.param)
    first, second = groups
    assert first.context == second.context
    audit = Audit(groups, get_codec())
    return audit, plan_groups(groups, 0.2, "own", get_codec())[0], second.questions[0].question


def _prompt(planned: Planned) -> str:
    return "\n".join(m.text for m in compressor_messages(planned.item))


def test_an_honest_memory_and_prompt_leave_every_counter_at_zero(planned):
    audit, plan, _ = planned
    memory = fit_to_budget(plan.group.context, plan.item.token_budget).text
    counters, exposed = audit.counters(plan, memory, _prompt(plan), given_ratio("0.2"))
    assert (counters, exposed) == (QUIET, {"memory": [], "prompt": []})


def test_each_counter_fires_on_its_fault(planned):
    audit, plan, sibling_question = planned  # a question of the context's other goal: never shown to a compressor
    over = audit.counters(plan, plan.group.context, "", given_ratio("0.2"))[0]  # the whole source at r = 0.2
    assert over == {**QUIET, "budget_violations": 1}
    leaked, exposed = audit.counters(plan, sibling_question, _prompt(plan) + "\n" + sibling_question, "0.2")
    assert leaked == {**QUIET, "exposures": 1, "prompt_exposures": 1}
    assert exposed == {"memory": [("question", sibling_question)], "prompt": [("question", sibling_question)]}
    miscounted = dataclasses.replace(plan, source_tokens=plan.source_tokens + 1)
    assert audit.counters(miscounted, "", "", "0.2")[0] == {**QUIET, "count_errors": 1}


def test_a_ratio_is_recounted_as_given():
    assert (given_ratio("0.29"), str(given_ratio("1/3"))) == ("0.29", "1/3")
