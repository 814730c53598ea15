"""The Inspect task `gacc_hf/gacc_bench` end to end on stand-in models (`mockllm/model`): its scores equal
`run_benchmark`'s on the same rows with methods that write the same text, in English and Chinese."""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval

import gacc_hf
from gacc_hf.data.loading import load_any
from gacc_hf.inspect_eval import gacc_bench
from tests.helpers.inspect_models import echo_compressor, echo_reader, mock_compressor, mock_grader, mock_reader

GROUPS = 3


def _eval(tmp_path, task, **roles):
    [log] = inspect_eval(
        task, model=mock_compressor(), model_roles=roles, limit=GROUPS, log_dir=str(tmp_path), display="none"
    )
    assert log.status == "success", log.error
    return log


def _metrics(log) -> dict[str, float]:
    return {name: m.value for name, m in log.results.scores[0].metrics.items()}


@pytest.mark.parametrize(("data", "condition"), [("sample", "own"), ("sample:zh", "none")])
def test_scores_equal_run_benchmarks_on_the_same_rows(tmp_path, data, condition):
    log = _eval(tmp_path, gacc_bench(data=data, ratio=0.2, condition=condition), reader=mock_reader())
    result = gacc_hf.run_benchmark(
        data, compressor=echo_compressor, reader=echo_reader, judge="contains", ratios=0.2,
        conditions=(condition,), limit=GROUPS, progress=False,
    )  # fmt: skip
    [row] = result.scores
    metrics = _metrics(log)
    assert (metrics["micro"], metrics["macro"]) == (pytest.approx(row["micro"]), pytest.approx(row["macro"]))
    asked = sum(len(g["questions"]) for g in load_any(data).select(range(GROUPS)))
    assert (metrics["n_questions"], metrics["n_goals"]) == (row["n_questions"], row["n_goals"]) == (asked, GROUPS)
    assert 0 < row["micro"] < 1  # some answers right and some wrong: the comparison tells them apart
    by_question = {(a["goal_id"], a["question_id"]): a for a in result.answers}
    memories = {m["goal_id"]: m for m in result.memories}
    for sample in log.samples:
        score = sample.scores["gacc_scorer"]
        assert score.answer == memories[sample.id]["memory"]
        assert score.metadata["ledger"]["retained_tokens"] == memories[sample.id]["retained_tokens"]
        for answer in score.metadata["answers"]:
            theirs = by_question[(sample.id, answer["question_id"])]
            assert (answer["answer"], answer["correct"]) == (theirs["answer"].strip(), theirs["correct"])
    integrity = {k: metrics[k] for k in ("budget_violations", "count_errors", "exposures", "prompt_exposures")}
    assert integrity == dict.fromkeys(integrity, 0) and result.integrity == dict.fromkeys(result.integrity, 0)


@pytest.mark.parametrize(("verdict", "micro"), [("CORRECT", 1.0), ("INCORRECT", 0.0)])
def test_the_grader_role_judges_when_asked(tmp_path, verdict, micro):
    log = _eval(tmp_path, gacc_bench(judge="grader"), reader=mock_reader(), grader=mock_grader(verdict))
    assert (_metrics(log)["micro"], _metrics(log)["macro"]) == (micro, micro)


def test_the_compressor_is_sent_only_the_source_and_the_goal(tmp_path):
    log = _eval(tmp_path, gacc_bench(), reader=mock_reader())
    rows = {g["goal_id"]: g for g in gacc_hf.load_sample()}
    for sample in log.samples:
        [prompt] = [m.text for m in sample.messages if m.role == "user"]
        group = rows[sample.id]
        assert group["context"] in prompt and group["goal"] in prompt
        assert not any(q["question"] in prompt for q in group["questions"])
        assert not any(r in prompt for g in group["gold"] for r in g["references"] if r not in group["context"])
