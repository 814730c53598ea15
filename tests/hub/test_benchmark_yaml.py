"""The benchmark's eval.yaml: written by `gacc data build`, parsed back, and naming exactly the task ids that
`gacc publish` can produce, for English-only and English+Chinese data."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
import yaml

from gacc_hf.cli import main
from gacc_hf.data.schema import SAMPLE_FILES
from gacc_hf.hub.benchmark_yaml import (
    HUB_FRAMEWORKS,
    TASK_CONDITIONS,
    TASK_RATIOS,
    BenchmarkError,
    eval_split,
    eval_yaml,
    framework_warning,
    parse_eval_yaml,
    read_eval_yaml,
    task_id,
    write_eval_yaml,
)
from gacc_hf.hub.eval_results import run_task_scores
from gacc_hf.safe_yaml import dump_yaml
from tests.helpers.data import SHIPPED_FOLDER
from tests.helpers.paths import ROOT


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


GOOD = {
    "name": "B",
    "description": "About.",
    "evaluation_framework": "gacc-hf",
    "tasks": [{"id": "micro-own-r0.2", "config": "public", "split": "test"}],
}


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
        (("evaluation_framework",), "eval.yaml: field 'evaluation_framework' must be a non-empty string"),
        (("tasks",), "eval.yaml: field 'tasks' must be a non-empty list"),
        (("tasks", 0, "id"), "eval.yaml: tasks[0]: field 'id' must be a non-empty string"),
    ],
)
def test_each_required_field_of_eval_yaml_is_checked(path, message):
    assert parse_eval_yaml(yaml.safe_dump(GOOD)) == {"micro-own-r0.2": {"config": "public", "split": "test"}}
    with pytest.raises(BenchmarkError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_eval_yaml(_without(path))


def test_an_eval_yaml_that_is_no_mapping_or_repeats_an_id_is_refused():
    with pytest.raises(BenchmarkError, match=r"o/b:eval\.yaml: not valid YAML \(line 1"):
        parse_eval_yaml("tasks: [", "o/b:eval.yaml")
    with pytest.raises(
        BenchmarkError, match="must be a mapping with name, description, evaluation_framework and tasks"
    ):
        parse_eval_yaml("- a\n")
    twice = {**GOOD, "tasks": GOOD["tasks"] * 2}
    with pytest.raises(BenchmarkError, match=r"tasks\[1\]: task id 'micro-own-r0.2' is declared twice"):
        parse_eval_yaml(dump_yaml(twice))  # the repeated task written out twice, as gacc writes YAML


# The spec's words (hub-docs `docs/hub/eval-results.md`, read 2026-12-04): top-level `name`,
# `description`, `evaluation_framework`, `tasks`; each task a required `id`, an optional `config` (default: the
# dataset's default config) and an optional `split` (default "test"). Written here from those words alone, not
# from the parser, so the two check each other.
SPEC_TOP = {"name", "description", "evaluation_framework", "tasks"}
SPEC_TASK = {"id", "config", "split"}


def spec_problems(doc):
    """What the spec's words find wrong in one parsed eval.yaml (an empty list: none)."""
    if not isinstance(doc, dict):
        return ["not a mapping"]
    found = [f"unknown field {k}" for k in doc if k not in SPEC_TOP]
    found += [f"{k} is not a non-empty string" for k in sorted(SPEC_TOP - {"tasks"}) if not _text(doc.get(k))]
    tasks = doc.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        return [*found, "tasks is not a non-empty list"]
    ids = [t.get("id") for t in tasks if isinstance(t, dict)]
    found += [f"task id {i} twice" for i in sorted({i for i in ids if ids.count(i) > 1})]
    for n, task in enumerate(tasks):
        if not isinstance(task, dict) or not _text(task.get("id")):
            found.append(f"tasks[{n}] has no id")
            continue
        found += [f"tasks[{n}]: unknown field {k}" for k in task if k not in SPEC_TASK]
        found += [f"tasks[{n}]: {k} is no string" for k in ("config", "split") if k in task and not _text(task[k])]
    return found


def _text(value):
    return isinstance(value, str) and value.strip() != ""


def docs_eval_yamls():
    """(where, text) of every eval.yaml the guides show: their YAML blocks that name an evaluation_framework."""
    found = []
    for path in sorted((ROOT / "docs").glob("*.md")):
        for block in re.findall(r"^```yaml\n(.*?)^```$", path.read_text(encoding="utf-8"), re.M | re.S):
            if "evaluation_framework:" in block:
                found.append((path.name, block))
    return found


def test_every_eval_yaml_the_project_writes_follows_the_spec(tmp_path, capsys):
    both = tmp_path / "both.jsonl"
    both.write_text("".join(p.read_text(encoding="utf-8") for p in SAMPLE_FILES.values()), encoding="utf-8")
    assert main(["data", "build", str(both), str(tmp_path / "built")]) == 0
    assert main(["data", "build", "sample", str(tmp_path / "sample")]) == 0
    written = [SHIPPED_FOLDER / "eval.yaml", tmp_path / "built" / "eval.yaml", tmp_path / "sample" / "eval.yaml"]
    texts = [(str(path), path.read_text(encoding="utf-8")) for path in written] + docs_eval_yamls()
    assert len(texts) == 4  # the shipped folder, two builds, the example of docs/results-and-publishing.md
    for where, text in texts:
        assert spec_problems(yaml.safe_load(text)) == [], where
        assert parse_eval_yaml(text, where)  # and gacc reads back what it writes
    assert spec_problems({**GOOD, "extra": 1, "tasks": [{"id": "a"}, {"id": "a", "split": ""}]}) == [
        "unknown field extra",
        "task id a twice",
        "tasks[1]: split is no string",
    ]  # the validator itself finds faults


def test_a_minimal_eval_yaml_of_task_ids_only_is_read_with_the_specs_defaults():
    minimal = "name: B\ndescription: About.\nevaluation_framework: gacc-hf\ntasks:\n- id: micro-own-r0.2\n- id: x\n"
    assert spec_problems(yaml.safe_load(minimal)) == []
    # config: the dataset's default config (`public` in the card gacc writes); split: "test"
    assert parse_eval_yaml(minimal) == {
        "micro-own-r0.2": {"config": "public", "split": "test"},
        "x": {"config": "public", "split": "test"},
    }
    assert read_eval_yaml(minimal, default_config="main") == (
        "gacc-hf",
        {"micro-own-r0.2": {"config": "main", "split": "test"}, "x": {"config": "main", "split": "test"}},
    )
    given = minimal.replace("- id: x\n", "- id: x\n  split: dev\n  config: judge\n")
    assert parse_eval_yaml(given)["x"] == {"config": "judge", "split": "dev"}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"license": "mit"}, "o/b:eval.yaml: unknown field(s) license; the spec names name, description, "),
        (
            {"tasks": [{"id": "a", "metric": "f1"}]},
            "o/b:eval.yaml: tasks[0]: unknown field(s) metric; the spec names id, config, split",
        ),
        ({"tasks": [{"id": "a"}, {"id": "b"}, {"id": "a"}]}, "o/b:eval.yaml: tasks[2]: task id 'a' is declared twice"),
        ({"tasks": [{"id": "a", "split": None}]}, "o/b:eval.yaml: tasks[0]: field 'split' must be a non-empty string"),
    ],
)
def test_unknown_fields_and_repeated_task_ids_are_refused_naming_the_file_and_field(edit, message):
    with pytest.raises(BenchmarkError) as caught:
        parse_eval_yaml(dump_yaml({**GOOD, **edit}), "o/b:eval.yaml")
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_an_inspect_ai_task_keeps_inspects_own_fields():
    inspect = {**GOOD, "evaluation_framework": "inspect-ai", "tasks": [{"id": "a", "solvers": [{"name": "generate"}]}]}
    assert read_eval_yaml(dump_yaml(inspect)) == ("inspect-ai", {"a": {"config": "public", "split": "test"}})
    with pytest.raises(BenchmarkError, match="unknown field"):  # top-level keys are the spec's for every framework
        read_eval_yaml(dump_yaml({**inspect, "solvers": []}))


def test_the_framework_list_names_inspect_ai_and_not_gacc_hf():
    assert framework_warning("inspect-ai") is None and framework_warning("mteb") is None
    assert len(HUB_FRAMEWORKS) == len(set(HUB_FRAMEWORKS)) == 19  # the names read from eval.ts, each once
    for name in ("gacc-hf", "lighteval", "lm-eval"):  # not in the Hub's list (2026-08)
        line = framework_warning(name, "o/b:eval.yaml")
        assert line.startswith(f"warning: o/b:eval.yaml: evaluation_framework {name!r} is not in the Hub's list")
        assert "\n" not in line and "refuses this eval.yaml at push time" in line


def test_data_build_warns_in_one_line_that_gacc_hf_is_not_yet_a_hub_framework(tmp_path, capsys):
    assert main(["data", "build", "sample", str(tmp_path / "out")]) == 0
    out, err = capsys.readouterr()
    assert out.split()[-1].endswith("eval.yaml")
    assert err.splitlines() == [framework_warning("gacc-hf", str(tmp_path / "out" / "eval.yaml"))]
