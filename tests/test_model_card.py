"""Model card and publishing plan: cards parse back with huggingface_hub to the results.json values, offline."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from huggingface_hub import DatasetCard, EvalResult, HfApi, ModelCard, ModelCardData, parse_eval_result_entries
from results_helpers import real_run

from gacc_hf.cli import main
from gacc_hf.hub import OfflineError
from gacc_hf.model_card import (
    DatasetRef,
    citation,
    model_card,
    planned_texts,
    publish,
    publish_plan,
    results_template,
)
from gacc_hf.results import read_folder

PAPER = "GACC-Bench: Evaluating Goal-Conditioned Compression with Future Questions Held Out"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("card")
    real_run(root / "run", root / "cache")
    return root / "run"


def _expected(run_dir, compressor):
    """(metric, condition, ratio) -> value, read straight from results.json."""
    doc = json.loads((run_dir / "results.json").read_text())
    return {
        (f"gacc_{m}", s["condition"], s["ratio"]): s[m]
        for s in doc["scores"]
        if s["compressor"] == compressor
        for m in ("micro", "macro")
    }


def _parsed(card_text):
    return {
        (r.metric_type, r.metric_args["condition"], r.metric_args["ratio"]): r
        for r in ModelCard(card_text).data.eval_results
    }


def test_dry_run_card_parses_back_to_the_results_json_values(run_dir, capsys):
    argv = ["publish", str(run_dir), "--repo-id", "me/goal-lines", "--compressor", "goal-lines", "--dry-run"]
    assert main([*argv, "--dataset-id", "someone/gacc-bench", "--dataset-split", "validation"]) == 0
    out = capsys.readouterr().out
    assert "repo: me/goal-lines (model), 1 file(s):" in out
    card_text = out.split("==> me/goal-lines:README.md <==\n", 1)[1]
    parsed = _parsed(card_text)
    expected = _expected(run_dir, "goal-lines")
    assert len(expected) == 2 * 3 * 3  # metrics x conditions x ratios
    assert {k: r.metric_value for k, r in parsed.items()} == expected
    for r in parsed.values():
        assert (r.dataset_type, r.dataset_config, r.dataset_split) == ("someone/gacc-bench", "judge", "validation")
        assert r.metric_args["dataset"] == "someone/gacc-bench" and r.metric_args["split"] == "validation"
        assert r.metric_args["config"] == "judge"
    assert ModelCard(card_text).data.model_name == "me/goal-lines"


def test_publish_offline_fails_before_reading_anything(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["publish", str(tmp_path / "no-such-run"), "--repo-id", "me/m"]) == 2
    err = capsys.readouterr().err
    assert "HF_HUB_OFFLINE" in err and "no-such-run" not in err


def test_the_networked_step_refuses_offline(run_dir, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    plans = publish_plan(read_folder(run_dir), run_dir, "me/m", compressor="truncate")
    with pytest.raises(OfflineError, match="HF_HUB_OFFLINE"):
        publish(HfApi(), plans)


def test_an_existing_card_keeps_its_text_and_other_results(run_dir):
    other = EvalResult(
        task_type="text-generation",
        dataset_type="other/bench",
        dataset_name="Other",
        metric_type="accuracy",
        metric_value=0.5,
    )
    existing = str(
        ModelCard.from_template(
            ModelCardData(model_name="mine", eval_results=[other], license="mit"),
            template_str="---\n{{ card_data }}\n---\n\n# Mine\n\nHand-written intro.\n",
        )
    )
    run = read_folder(run_dir)
    once = model_card(run, "goal-lines", "me/m", DatasetRef(), existing)
    twice = model_card(run, "goal-lines", "me/m", DatasetRef(), once)
    assert once == twice  # publishing again replaces, never duplicates
    card = ModelCard(once)
    assert "Hand-written intro." in card.text and card.text.count("## GACC-Bench results") == 1
    assert card.data.license == "mit" and card.data.model_name == "mine"
    types = [r.metric_type for r in card.data.eval_results]
    assert types.count("accuracy") == 1 and types.count("gacc_micro") == 9


def test_details_dataset_is_planned_with_its_own_card(run_dir):
    plans = publish_plan(read_folder(run_dir), run_dir, "me/m", compressor="truncate", details_repo_id="me/m-details")
    model, details = plans
    assert (model.repo_type, details.repo_type) == ("model", "dataset")
    paths = [op.path_in_repo for op in details.operations]
    assert {"README.md", "answers.parquet", "memories.parquet", "results.json"} <= set(paths)
    card = DatasetCard(dict(planned_texts(plans))["me/m-details:README.md"])
    assert [c["config_name"] for c in card.data.configs] == ["answers", "memories"]
    assert "me/m-details" in dict(planned_texts(plans))["me/m:README.md"]  # the model card links its details


def test_eval_results_entries_need_a_task_and_a_headline_ratio(run_dir):
    run = read_folder(run_dir)
    with pytest.raises(ValueError, match="--headline-ratio"):
        publish_plan(run, run_dir, "me/m", compressor="goal-lines", eval_results_task="default")
    plans = publish_plan(
        run, run_dir, "me/m", compressor="goal-lines", eval_results_task="default", headline_ratio=0.25
    )
    text = dict(planned_texts(plans))["me/m:.eval_results/gacc-bench.yaml"]
    (entry,) = parse_eval_result_entries(yaml.safe_load(text))
    assert (entry.dataset_id, entry.task_id) == ("gacc-bench", "default")
    assert entry.value == _expected(run_dir, "goal-lines")[("gacc_micro", "own", 0.25)]


def test_a_run_with_several_compressors_needs_one_named(run_dir):
    with pytest.raises(ValueError, match="choose one with --compressor"):
        publish_plan(read_folder(run_dir), run_dir, "me/m")


def test_template_and_citation_come_from_model_card_md():
    assert results_template().startswith("---\n{{ card_data }}\n---")
    assert PAPER in citation().replace("{GACC-Bench}", "GACC-Bench")
    assert "Liu, Weiting" in citation()
    assert not re.search(r"\d{4}\.\d{4,5}", citation())  # no invented arXiv id
