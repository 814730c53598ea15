"""Scores per language: a one-language run reuses the overall rows, which a recount must equal."""

from __future__ import annotations

from gacc_hf import synthetic
from gacc_hf.scoring.by_language import score_by_language
from gacc_hf.scoring.scores import score_answers
from tests.helpers.runs import rules_run


def _answers(cache_dir):
    result = rules_run(synthetic(seed=0, contexts=3), compressor="goal-lines", ratios=[0.3], cache_dir=cache_dir)
    return result.answers


def test_one_language_reuses_the_overall_rows_and_they_equal_a_recount(cache_dir):
    answers = _answers(cache_dir)
    overall = score_answers(answers, 200, 0)
    reused = score_by_language(answers, 200, 0, overall)
    assert reused == score_by_language(answers, 200, 0)  # scored again from the rows
    assert {row["language"] for row in reused} == {"en"} and len(reused) == len(overall)


def test_two_languages_are_scored_apart_even_when_overall_rows_are_given(cache_dir):
    rows = _answers(cache_dir)
    first_context = rows[0]["context_id"]
    mixed = [dict(row, language="zh" if row["context_id"] == first_context else "en") for row in rows]
    overall = score_answers(mixed, 200, 0)
    split = score_by_language(mixed, 200, 0, overall)
    assert [row["language"] for row in split][:1] == ["zh"] and {row["language"] for row in split} == {"zh", "en"}
    n_zh = sum(row["context_id"] == first_context for row in rows if row["condition"] == "own")
    zh_own = next(r for r in split if r["language"] == "zh" and r["condition"] == "own")
    assert zh_own["n_questions"] == n_zh < overall[0]["n_questions"] + 1
