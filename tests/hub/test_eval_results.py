"""`.eval_results/gacc-bench.yaml`: the format's fields checked, task ids checked against the benchmark's
eval.yaml, and an existing file merged by (dataset id, task id), never duplicated."""

from __future__ import annotations

import copy
import re

import pytest
import yaml
from huggingface_hub import parse_eval_result_entries

from gacc_hf.hub.benchmark_yaml import eval_yaml
from gacc_hf.hub.commit import PublishError
from gacc_hf.hub.eval_results import check_entries, check_tasks, merge_entries

ENTRY = {
    "dataset": {"id": "me/bench", "task_id": "micro-own-r0.2", "revision": "abc"},
    "value": 0.5,
    "date": "2026-12-01T14:06:16Z",
    "source": {"url": "https://huggingface.co/datasets/me/details", "name": "GACC-Bench details"},
    "notes": "GACC Micro, condition own, ratio 0.2",
}


def _entry(edit):
    entry = copy.deepcopy(ENTRY)
    edit(entry)
    return entry


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda e: e.pop("dataset"), "entry 0: required field(s) missing: dataset"),
        (lambda e: e.pop("value"), "entry 0: required field(s) missing: value"),
        (lambda e: e["dataset"].pop("id"), "entry 0: dataset: required field(s) missing: id"),
        (lambda e: e["dataset"].pop("task_id"), "entry 0: dataset: required field(s) missing: task_id"),
        (lambda e: e["source"].pop("url"), "entry 0: source: required field(s) missing: url"),
        (lambda e: e.update(value=True), "field 'value' must be a number, got True"),
        (lambda e: e.update(value="0.5"), "field 'value' must be a number, got '0.5'"),
        (lambda e: e.update(date="yesterday"), "field 'date' must be an ISO-8601 date or datetime"),
        (lambda e: e.update(notes=3), "field 'notes' must be a string, got 3"),
        (lambda e: e["source"].update(url="huggingface.co/x"), "field 'url' must be an http(s) URL"),
        (lambda e: e.update(score=1), "entry 0: unknown field(s) score; the format names dataset, value"),
        (lambda e: e.update(dataset="me/bench"), "entry 0: dataset: must be a mapping with id, task_id"),
    ],
)
def test_each_field_the_format_names_is_checked(edit, message):
    check_entries([ENTRY, {"dataset": {"id": "a/b", "task_id": "t"}, "value": 1, "date": "2026-12-01"}])  # quiet
    with pytest.raises(PublishError, match=re.escape(message)):
        check_entries([_entry(edit)])


def test_a_document_that_is_no_list_is_refused():
    with pytest.raises(PublishError, match=r"\.eval_results/gacc-bench\.yaml: must be a list of entries"):
        check_entries(ENTRY)


SAMPLE_YAML = eval_yaml("GACC-Bench sample", "The sample.", ["test"])


def test_a_task_id_the_eval_yaml_does_not_define_is_refused_naming_those_it_does():
    check_tasks({"micro-own-r0.2": None, "macro-none-r0.1": None}, SAMPLE_YAML, "me/bench", "test")  # quiet
    with pytest.raises(PublishError) as caught:
        check_tasks({"micro-own-r0.2": None, "micro-own-r0.5": None}, SAMPLE_YAML, "me/bench", "test")
    message = str(caught.value)
    assert message.startswith("me/bench:eval.yaml does not define task(s) micro-own-r0.5; it defines micro-own-r0.1, ")
    assert message.count("-r0.") == 1 + 18  # the unknown id, then every id the benchmark defines


def test_a_run_on_another_split_than_the_ranked_one_is_refused():
    check_tasks({"micro-own-r0.2": None}, SAMPLE_YAML, "me/bench", "test")  # quiet: the ranked split
    ranked = "the run used split 'train'; me/bench:eval.yaml ranks its tasks on split test"
    with pytest.raises(PublishError, match=re.escape(ranked)):
        check_tasks({"micro-own-r0.2": None}, SAMPLE_YAML, "me/bench", "train")


def test_a_run_that_recorded_no_split_is_refused_saying_how_to_name_it():
    validation = eval_yaml("B", "A benchmark.", ["validation"])  # ranks only `validation`
    with pytest.raises(PublishError) as caught:
        check_tasks({"micro-own-r0.2": None}, validation, "me/bench", None)
    assert str(caught.value) == (
        "the run recorded no split (it read data with one split), so it cannot be matched to split validation, "
        "which me/bench:eval.yaml ranks: pass --split validation if these rows are that split (the card records "
        "their fingerprint), or rerun with --data me/bench --split validation"
    )
    check_tasks({"micro-own-r0.2": None}, validation, "me/bench", "validation")  # quiet: the split named


def test_a_benchmark_ranking_another_config_than_public_is_refused():
    other = SAMPLE_YAML.replace("config: public", "config: default")
    with pytest.raises(PublishError, match=r"ranks its tasks on config default; .* its 'public' config only"):
        check_tasks({"micro-own-r0.2": None}, other, "me/bench", "test")
    check_tasks({"micro-own-r0.2": None}, SAMPLE_YAML, "me/bench", "test")  # quiet: public


def _ours(task, value):
    return {"dataset": {"id": "me/bench", "task_id": task}, "value": value}


def test_an_existing_file_keeps_other_entries_and_ours_are_replaced_never_duplicated():
    other_benchmark = {"dataset": {"id": "cais/hle", "task_id": "micro-own-r0.2"}, "value": 20.9, "notes": "no-tools"}
    our_other_task = _ours("macro-cross-r0.1", 0.1)
    existing = yaml.safe_dump([other_benchmark, _ours("micro-own-r0.2", 0.9), our_other_task])
    ours = [_ours("micro-own-r0.2", 0.4), _ours("macro-own-r0.2", 0.3)]
    once = merge_entries(existing, ours, "f")
    twice = merge_entries(once, ours, "f")
    assert once == twice
    entries = yaml.safe_load(once)
    assert entries == [other_benchmark, our_other_task, *ours]  # 3 kept or replaced + 1 new: hand count 4
    parsed = parse_eval_result_entries(entries)
    assert [(e.dataset_id, e.task_id, e.value) for e in parsed][2] == ("me/bench", "micro-own-r0.2", 0.4)


def test_no_existing_file_gives_ours_and_a_broken_one_is_named():
    assert yaml.safe_load(merge_entries(None, [_ours("t", 1)], "f")) == [_ours("t", 1)]
    assert yaml.safe_load(merge_entries("", [_ours("t", 1)], "f")) == [_ours("t", 1)]  # an empty file
    with pytest.raises(PublishError, match=r"\.eval_results/gacc-bench\.yaml in the model repo: must be a list"):
        merge_entries("a: 1\n", [_ours("t", 1)], ".eval_results/gacc-bench.yaml in the model repo")
    with pytest.raises(PublishError, match=r"f: not valid YAML \(line 1"):
        merge_entries("- [", [_ours("t", 1)], "f")


def test_a_benchmark_of_task_ids_alone_ranks_the_default_config_on_split_test():
    bare = "name: B\ndescription: About.\nevaluation_framework: gacc-hf\ntasks:\n- id: micro-own-r0.2\n"
    check_tasks({"micro-own-r0.2": None}, bare, "me/bench", "test")  # quiet: the spec's defaults, public and test
    with pytest.raises(PublishError, match=r"me/bench:eval\.yaml ranks its tasks on split test"):
        check_tasks({"micro-own-r0.2": None}, bare, "me/bench", "dev")


def test_only_defined_skips_the_undefined_task_ids_and_refuses_a_run_with_none_defined():
    scores = {"micro-own-r0.2": None, "micro-own-r0.3": None, "macro-own-r0.3": None}
    skipped = check_tasks(scores, SAMPLE_YAML, "me/bench", "test", only_defined=True)
    assert skipped == ["micro-own-r0.3", "macro-own-r0.3"]
    assert check_tasks({"micro-own-r0.2": None}, SAMPLE_YAML, "me/bench", "test", only_defined=True) == []  # quiet
    with pytest.raises(PublishError, match=r"defines none of the run's task\(s\) micro-own-r0.3; it defines "):
        check_tasks({"micro-own-r0.3": None}, SAMPLE_YAML, "me/bench", "test", only_defined=True)
