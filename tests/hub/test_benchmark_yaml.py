"""The benchmark's eval.yaml: written by `gacc data build`, parsed back, and naming exactly the task ids that
`gacc publish` can produce, for English-only and English+Chinese data."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import yaml

from gacc_hf.cli import main
from gacc_hf.data.schema import SAMPLE_FILES
from gacc_hf.hub.benchmark_yaml import (
    TASK_CONDITIONS,
    TASK_RATIOS,
    BenchmarkError,
    eval_split,
    eval_yaml,
    parse_eval_yaml,
    task_id,
    write_eval_yaml,
)
from gacc_hf.hub.eval_results import run_task_scores
from gacc_hf.safe_yaml import dump_yaml
from tests.helpers.data import SHIPPED_FOLDER


def _score(condition, ratio, language=None, compressor="mine"):
    row = {"compressor": compressor, "condition": condition, "ratio": ratio, "micro": 0.5, "macro": 0.25}
    return {**row, **({"language": language} if language else {})}


def _every_cell_run(languages=()):
    """A run with a score for every condition and ratio the benchmark ranks (and each language's, with several)."""
    cells = [(c, r) for c in TASK_CONDITIONS for r in TASK_RATIOS]
    scores = [_score(c, r) for c, r in cells] + [
        {**_score("full", 1.0, compressor="full-context"), "ceiling": True},
        _score("own", 0.5),  # a ratio the benchmark does not rank: publish refuses it (tests/hub/test_eval_results.py)
    ]
    by_language = [_score(c, r, lang) for lang in languages for c, r in cells]
    config = {"data": {"languages": {lang: {} for lang in languages}}}
    return SimpleNamespace(scores=scores, config=config, payload={"scores_by_language": by_language, "config": config})


def test_task_ids_read_as_metric_condition_ratio_and_language():
    assert task_id("micro", "own", 0.2) == "micro-own-r0.2"
    assert task_id("macro", "none", 0.25, "zh") == "macro-none-r0.25-zh"
    assert task_id("micro", "cross", 0.1, None) == "micro-cross-r0.1"


def test_the_shipped_sample_declares_exactly_the_ids_publish_can_produce():
    tasks = parse_eval_yaml((SHIPPED_FOLDER / "eval.yaml").read_text(encoding="utf-8"))
    assert len(tasks) == 2 * 3 * 3  # metrics x conditions x ratios; English only: no language tasks
    assert {(t["config"], t["split"]) for t in tasks.values()} == {("public", "test")}  # the judge-free config
    doc = yaml.safe_load((SHIPPED_FOLDER / "eval.yaml").read_text(encoding="utf-8"))
    assert doc["evaluation_framework"] == "gacc-hf" and doc["name"] == "GACC-Bench sample"
    produced = set(run_task_scores(_every_cell_run(), "mine")) - {"micro-own-r0.5", "macro-own-r0.5"}
    assert produced == set(tasks)  # every declared id is one publish produces, and the reverse


def test_a_bilingual_dataset_declares_each_languages_tasks_too(tmp_path, capsys):
    both = tmp_path / "both.jsonl"
    both.write_text("".join(p.read_text(encoding="utf-8") for p in SAMPLE_FILES.values()), encoding="utf-8")
    assert main(["data", "build", str(both), str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out.split()[-1].endswith("eval.yaml")
    tasks = parse_eval_yaml((tmp_path / "out" / "eval.yaml").read_text(encoding="utf-8"))
    assert len(tasks) == 3 * 18  # overall, English, Chinese
    assert {"micro-own-r0.2", "micro-own-r0.2-en", "macro-cross-r0.25-zh"} <= set(tasks)
    produced = set(run_task_scores(_every_cell_run(["en", "zh"]), "mine"))
    assert produced - set(tasks) == {"micro-own-r0.5", "macro-own-r0.5"}
    assert set(tasks) <= produced


def test_the_evaluation_split_is_test_when_there_is_one():
    assert eval_split(["train", "test"]) == "test"
    assert eval_split(["dev", "validation"]) == "dev"
    assert {t["split"] for t in parse_eval_yaml(eval_yaml("B", "About.", ["dev"])).values()} == {"dev"}


def test_a_folder_without_public_parquet_gets_no_eval_yaml(tmp_path):
    with pytest.raises(BenchmarkError, match=r"no public/\*\.parquet to declare tasks on"):
        write_eval_yaml(tmp_path, "B", "About.")
    assert not (tmp_path / "eval.yaml").exists()


GOOD = {"name": "B", "description": "About.", "tasks": [{"id": "micro-own-r0.2", "config": "public", "split": "test"}]}


def _without(path):
    doc = yaml.safe_load(yaml.safe_dump(GOOD))
    *head, last = path
    target = doc
    for key in head:
        target = target[key]
    del target[last]
    return yaml.safe_dump(doc)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (("name",), "eval.yaml: field 'name' must be a non-empty string"),
        (("description",), "eval.yaml: field 'description' must be a non-empty string"),
        (("tasks",), "eval.yaml: field 'tasks' must be a non-empty list"),
        (("tasks", 0, "id"), "eval.yaml: tasks[0]: field 'id' must be a non-empty string"),
        (("tasks", 0, "config"), "eval.yaml: tasks[0]: field 'config' must be a non-empty string"),
        (("tasks", 0, "split"), "eval.yaml: tasks[0]: field 'split' must be a non-empty string"),
    ],
)
def test_each_required_field_of_eval_yaml_is_checked(path, message):
    assert parse_eval_yaml(yaml.safe_dump(GOOD)) == {"micro-own-r0.2": {"config": "public", "split": "test"}}
    with pytest.raises(BenchmarkError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_eval_yaml(_without(path))


def test_an_eval_yaml_that_is_no_mapping_or_repeats_an_id_is_refused():
    with pytest.raises(BenchmarkError, match=r"o/b:eval\.yaml: not valid YAML \(line 1"):
        parse_eval_yaml("tasks: [", "o/b:eval.yaml")
    with pytest.raises(BenchmarkError, match="must be a mapping with name, description and tasks"):
        parse_eval_yaml("- a\n")
    twice = {**GOOD, "tasks": GOOD["tasks"] * 2}
    with pytest.raises(BenchmarkError, match=r"tasks\[1\]: task id 'micro-own-r0.2' is declared twice"):
        parse_eval_yaml(dump_yaml(twice))  # the repeated task written out twice, as gacc writes YAML
