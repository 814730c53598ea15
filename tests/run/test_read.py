"""Answer rows planned over keys: tasks built only for the calls a run makes, rows followed in order."""

from __future__ import annotations

import gacc_hf
from gacc_hf.run import read
from gacc_hf.run.calls import Task


def test_a_deferred_task_builds_its_input_and_label_once_on_first_use():
    built = []

    def build():
        built.append(1)
        return "input", "label"

    task = Task("k", build=build)
    assert built == []  # nothing built while the task only waits for a cache lookup
    assert (task.item, task.label, task.item) == ("input", "label", "input")
    assert built == [1]
    assert (Task("k", "given", "named").item, Task("k", "given", "named").label) == ("given", "named")


def test_a_warm_rerun_builds_no_reader_or_judge_input(tmp_path, monkeypatch):
    built = {"reader": 0, "judge": 0}

    def counting(role, build):
        def wrapper(*args):
            built[role] += 1
            return build(*args)

        return wrapper

    monkeypatch.setattr(read, "_read_item", counting("reader", read._read_item))
    monkeypatch.setattr(read, "_judge_item", counting("judge", read._judge_item))
    data = gacc_hf.synthetic(seed=0, contexts=3, goals_per_context=2, questions_per_goal=2)
    kwargs = dict(compressor="goal-lines", reader="fields", judge="exact", ratios=(0.5,), n_bootstrap=0)
    cold = gacc_hf.run_benchmark(data, cache_dir=str(tmp_path), progress=False, **kwargs)
    assert built == {"reader": cold.calls["reader"], "judge": cold.calls["judge"]} and min(built.values()) > 0
    built.update(reader=0, judge=0)
    warm = gacc_hf.run_benchmark(data, cache_dir=str(tmp_path), progress=False, **kwargs)
    assert built == {"reader": 0, "judge": 0} and warm.answers == cold.answers


def test_rows_followed_all_at_once_or_in_parts_in_row_order():
    keys = ["a", None, "b", "a", "c"]  # rows 0..4; row 1's memory failed
    assert read._rows_of({"a": 1, "b": 1, "c": 1}, keys, {}) == [0, 2, 3, 4]
    index: dict[str, list[int]] = {}
    assert read._rows_of({"c": 1, "a": 1}, keys, index) == [0, 3, 4]  # by row, not by arrival
    assert index == {"a": [0, 3], "b": [2], "c": [4]}
    assert read._rows_of({"b": 1}, keys, index) == [2]
