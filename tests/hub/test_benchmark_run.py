"""A run of a benchmark's eval.yaml: the cells, split and tasks it ranks (`--eval-yaml`, `--task`, the eval.yaml of
a dataset folder or of `--data OWNER/NAME`), options that override it said, and the Hub revision a run records
reaching the model-index and `.eval_results/`, offline, on English and Chinese data."""

from __future__ import annotations

import json

import pytest
import yaml
from huggingface_hub import ModelCard, parse_eval_result_entries

from gacc_hf.cli import main
from gacc_hf.data.schema import SAMPLE_FILES
from gacc_hf.hub.benchmark_run import benchmark_run, parse_task_id
from gacc_hf.hub.benchmark_yaml import BenchmarkError
from gacc_hf.hub.commit import PublishError
from gacc_hf.hub.model_card import planned_texts, publish_plan
from gacc_hf.run.benchmark import run_benchmark
from gacc_hf.safe_yaml import dump_yaml
from tests.helpers.data import SHIPPED_FOLDER
from tests.hub.test_benchmark_yaml import docs_eval_yamls

RULES = ["--preset", "rules", "--no-progress", "--bootstrap", "0"]


def _eval_yaml(tasks, framework="gacc-hf"):
    return dump_yaml({"name": "B", "description": "About.", "evaluation_framework": framework, "tasks": tasks})


def test_a_task_id_names_its_cell_and_any_other_id_none():
    assert parse_task_id("micro-none-r0.25") == ("micro", "none", 0.25, None)
    assert parse_task_id("macro-own-r1-zh") == ("macro", "own", 1.0, "zh")
    for other in ("accuracy", "micro-full-r0.2", "micro-own-r2", "micro-own-0.2", "f1-own-r0.2"):
        assert parse_task_id(other) is None, other


def test_the_shipped_eval_yaml_asks_for_three_conditions_at_three_ratios_on_test():
    bench = benchmark_run((SHIPPED_FOLDER / "eval.yaml").read_text(encoding="utf-8"), "eval.yaml")
    assert (bench.conditions, bench.ratios, bench.split) == (["own", "none", "cross"], [0.1, 0.2, 0.25], "test")
    assert len(bench.tasks) == 18 and bench.unranked(bench.conditions, bench.ratios) == []
    assert bench.unranked(["own", "full"], [0.2, 0.5]) == ["own@0.5"]  # the bounds are never ranked


def test_tasks_that_do_not_fill_the_crossing_leave_cells_no_task_ranks():
    text = _eval_yaml([{"id": "micro-own-r0.2"}, {"id": "macro-none-r0.1-zh"}, {"id": "macro-own-r0.2"}])
    bench = benchmark_run(text, "b")
    assert (bench.conditions, bench.ratios) == (["own", "none"], [0.1, 0.2])
    assert bench.unranked(bench.conditions, bench.ratios) == ["own@0.1", "none@0.2"]
    one = benchmark_run(text, "b", ["macro-none-r0.1-zh"])
    assert (one.tasks, one.conditions, one.ratios) == (["macro-none-r0.1-zh"], ["none"], [0.1])


@pytest.mark.parametrize(
    ("tasks", "chosen", "message"),
    [
        ([{"id": "micro-own-r0.2"}], ["micro-own-r0.3", "x"], "--task micro-own-r0.3, x: not defined by b; it "
         "defines micro-own-r0.2"),
        ([{"id": "micro-own-r0.2"}, {"id": "accuracy"}], None, "b: task(s) accuracy name no GACC cell"),
        ([{"id": "micro-own-r0.2", "config": "judge"}], None, "b ranks its tasks on config judge; a gacc run reads "
         "the judge twin of the 'public' config only"),
        ([{"id": "micro-own-r0.2"}, {"id": "micro-own-r0.1", "split": "dev"}], None, "b ranks these tasks on "
         "several splits (test, dev): choose with --task"),
    ],
)  # fmt: skip
def test_what_a_run_cannot_follow_is_refused_in_one_line(tasks, chosen, message):
    with pytest.raises(BenchmarkError) as caught:
        benchmark_run(_eval_yaml(tasks), "b", chosen)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_the_gacc_tasks_of_a_mixed_eval_yaml_can_be_chosen():
    text = _eval_yaml([{"id": "micro-own-r0.2"}, {"id": "accuracy"}])
    assert benchmark_run(text, "b", ["micro-own-r0.2"]).ratios == [0.2]


def _zh_folder(tmp_path):
    """The Chinese sample built as a Hub-ready folder, with its eval.yaml."""
    assert main(["data", "build", str(SAMPLE_FILES["zh"]), str(tmp_path / "zh")]) == 0
    return tmp_path / "zh"


def test_a_run_on_a_dataset_folder_makes_the_cells_its_eval_yaml_ranks(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    folder = _zh_folder(tmp_path)
    capsys.readouterr()
    assert main(["run", *RULES, "--data", str(folder), "--task", "micro-own-r0.1,macro-own-r0.25", "--output-dir",
                 "out", "--cache-dir", "c"]) == 0  # fmt: skip
    err = capsys.readouterr().err
    assert f"{folder / 'eval.yaml'}: 2 task(s), split test, ratios 0.1,0.25" in err
    assert "ranks no task" not in err  # own at 0.1 and at 0.25: both ranked
    config = yaml.safe_load((tmp_path / "out" / "config.yaml").read_text(encoding="utf-8"))
    assert (config["conditions"], config["ratios"], config["split"]) == (["own"], [0.1, 0.25], "test")
    recorded = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["config"]
    assert (recorded["conditions"], recorded["ratios"], recorded["data"]["split"]) == (["own"], [0.1, 0.25], "test")


def test_an_option_given_overrides_the_eval_yaml_and_is_said(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "eval.yaml").write_text(_eval_yaml([{"id": "micro-own-r0.2"}, {"id": "micro-none-r0.2"}]))
    args = ["run", *RULES, "--data", "sample", "--eval-yaml", "eval.yaml", "--dry-run"]
    assert main([*args, "--ratios", "0.2,0.5", "--conditions", "own"]) == 0
    err = capsys.readouterr().err
    assert "--ratios: ratios 0.2,0.5 overrides --eval-yaml eval.yaml's 0.2" in err
    assert "--conditions: conditions own overrides --eval-yaml eval.yaml's own,none" in err
    assert "--eval-yaml eval.yaml ranks no task on the cell(s) own@0.5: publishing refuses them" in err
    assert main([*args, "--ratios", "0.2"]) == 0  # the same value as the eval.yaml's: nothing to say
    assert "overrides" not in capsys.readouterr().err


def test_task_without_an_eval_yaml_and_a_missing_file_are_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", *RULES, "--data", "sample", "--task", "micro-own-r0.2", "--dry-run"]) == 2
    assert (
        "--task names tasks of a benchmark's eval.yaml; 'sample' has none: give --eval-yaml" in capsys.readouterr().err
    )
    assert main(["run", *RULES, "--data", "sample", "--eval-yaml", "nope.yaml", "--dry-run"]) == 2
    assert "--eval-yaml nope.yaml: no such file" in capsys.readouterr().err


def test_a_hub_dataset_reads_its_eval_yaml_first_and_offline_stops_there(monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["run", *RULES, "--data", "owner/gacc-bench", "--dry-run"]) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith(
            "cannot read the eval.yaml of the Hub dataset 'owner/gacc-bench': HF_HUB_OFFLINE is set; unset it (and log "
            "in) to reach the Hub"
        )
    )


def test_publishing_names_the_runs_split_and_config_beside_the_eval_yamls(tmp_path):
    rows = [json.loads(line) for line in SAMPLE_FILES["zh"].read_text(encoding="utf-8").splitlines() if line]
    result = run_benchmark(rows, compressor="goal-lines", reader="fields", judge="exact", ratios=[0.2],
                           conditions=["own"], n_bootstrap=0, progress=False, data_spec="o/b", split="test",
                           data_revision="5503434d")  # fmt: skip
    folder = result.save(tmp_path / "run").parent
    for edit, message in [
        ({"split": "dev"}, "the run used split 'test'; o/b:eval.yaml ranks its tasks on split dev"),
        ({"config": "default"}, "o/b:eval.yaml ranks its tasks on config default; the run read config 'judge', the "
         "judge twin of its 'public' config only"),
    ]:  # fmt: skip
        text = _eval_yaml([{"id": "micro-own-r0.2", **edit}, {"id": "macro-own-r0.2", **edit}])
        with pytest.raises(PublishError) as caught:
            publish_plan(folder, "me/m", hub={"eval_yaml": text})
        assert str(caught.value) == message
    publish_plan(folder, "me/m", hub={"eval_yaml": _eval_yaml([{"id": "micro-own-r0.2"}, {"id": "macro-own-r0.2"}])})


def test_a_recorded_hub_revision_reaches_the_model_index_and_eval_results(tmp_path):
    rows = [json.loads(line) for line in SAMPLE_FILES["en"].read_text(encoding="utf-8").splitlines() if line]
    result = run_benchmark(rows, compressor="goal-lines", reader="fields", judge="exact", ratios=[0.1, 0.2, 0.25],
                           conditions=["own", "none", "cross"], n_bootstrap=0, progress=False, data_spec="o/b",
                           split="test", data_revision="5503434d")  # fmt: skip
    assert result.config["data"]["kind"] == "hub" and result.config["data"]["revision"] == "5503434d"
    folder = result.save(tmp_path / "run").parent
    eval_yaml = (SHIPPED_FOLDER / "eval.yaml").read_text(encoding="utf-8")
    (plan,) = publish_plan(folder, "me/m", hub={"eval_yaml": eval_yaml})
    texts = dict(planned_texts([plan]))
    card = ModelCard(texts["me/m:README.md"])
    assert {(r.dataset_type, r.dataset_revision) for r in card.data.eval_results} == {("o/b", "5503434d")}
    entries = parse_eval_result_entries(yaml.safe_load(texts["me/m:.eval_results/gacc-bench.yaml"]))
    assert len(entries) == 18 and {(e.dataset_id, e.dataset_revision) for e in entries} == {("o/b", "5503434d")}
    local = run_benchmark(rows[:2], compressor="goal-lines", reader="fields", judge="exact", conditions=["own"],
                          n_bootstrap=0, progress=False)  # fmt: skip
    assert "revision" not in local.config["data"]  # rows not from the Hub: no revision


def test_the_guides_short_eval_yaml_runs_own_at_a_fifth():
    ((where, text),) = docs_eval_yamls()
    bench = benchmark_run(text, where)
    assert (bench.conditions, bench.ratios, bench.split) == (["own"], [0.2], "test")


def test_data_that_names_nothing_is_left_to_the_runs_own_checks(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", *RULES, "--data", "https://me:sekret@host/x.jsonl", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "--data https://***@host/x.jsonl: credentials in a URL are never sent" in err and "sekret" not in err
    assert main(["run", *RULES, "--data", "missing.jsonl", "--dry-run"]) == 2
    assert "no such file or folder: 'missing.jsonl'" in capsys.readouterr().err
