"""Answer rows planned over keys: tasks built only for the calls a run makes, rows followed in order."""

from __future__ import annotations

import gacc_hf
from gacc_hf.run import read
from gacc_hf.run.tasks import Task, planned


def test_a_task_list_is_planned_by_first_seen_key_with_the_last_task_of_a_key():
    a1, b, a2 = Task("a", 1, "first a"), Task("b", 2, "b"), Task("a", 3, "second a")
    plan = planned([a1, b, a2])
    assert plan.keys == ["a", "b"] and plan.task("a") is a2 and plan.task("b") is b
    assert planned(plan) is plan


def test_a_warm_rerun_builds_no_reader_or_judge_task(tmp_path, monkeypatch):
    built: list[str] = []

    def counting(key, item, label):
        built.append(type(item).__name__)
        return Task(key, item, label)

    monkeypatch.setattr(read, "Task", counting)
    data = gacc_hf.synthetic(seed=0, contexts=3, goals_per_context=2, questions_per_goal=2)
    kwargs = dict(compressor="goal-lines", reader="fields", judge="exact", ratios=(0.5,), n_bootstrap=0)
    cold = gacc_hf.run_benchmark(data, cache_dir=str(tmp_path), progress=False, **kwargs)
    assert built.count("ReaderInput") == cold.calls["reader"] > 0
    assert built.count("JudgeInput") == cold.calls["judge"] > 0
    built.clear()
    warm = gacc_hf.run_benchmark(data, cache_dir=str(tmp_path), progress=False, **kwargs)
    assert built == [] and warm.answers == cold.answers


def test_rows_followed_all_at_once_or_in_parts_in_row_order():
    keys = ["a", None, "b", "a", "c"]  # rows 0..4; row 1's memory failed
    assert read._rows_of({"a": 1, "b": 1, "c": 1}, keys, {}) == [0, 2, 3, 4]
    index: dict[str, list[int]] = {}
    assert read._rows_of({"c": 1, "a": 1}, keys, index) == [0, 3, 4]  # by row, not by arrival
    assert index == {"a": [0, 3], "b": [2], "c": [4]}
    assert read._rows_of({"b": 1}, keys, index) == [2]


def test_every_answer_row_carries_its_outcome(cache_dir):
    from gacc_hf import synthetic
    from tests.helpers.runs import rules_run

    result = rules_run(
        synthetic(seed=0, contexts=2),
        compressor="truncate",
        conditions=("own", "full"),
        ratios=[0.1],
        cache_dir=cache_dir,
    )
    by_condition = {}
    for a in result.answers:
        by_condition.setdefault(a["condition"], set()).add(a["outcome"])
    # the whole source holds every reference and the fields reader reads it: all right
    assert by_condition["full"] == {"right"}
    cut = [a for a in result.answers if a["condition"] == "own"]
    expected = {(True, True): "right", (True, False): "guessed", (False, True): "missed", (False, False): "lost"}
    assert all(a["outcome"] == expected[(a["correct"], a["evidence"])] for a in cut)


def test_a_failed_row_has_no_outcome_and_the_others_keep_theirs(cache_dir):
    from gacc_hf import synthetic
    from tests.helpers.runs import rules_run

    def flaky(item):
        if "1" in item.context[:200]:
            raise RuntimeError("boom")
        return item.context

    result = rules_run(
        synthetic(seed=0, contexts=4),
        compressor=flaky,
        ratios=[0.5],
        conditions=("own",),
        on_error="record",
        cache_dir=cache_dir,
    )
    failed = [a for a in result.answers if a["error"]]
    assert failed and all(a["outcome"] is None for a in failed)
    assert all(a["outcome"] is not None for a in result.answers if not a["error"])
