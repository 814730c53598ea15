"""Model card and publishing plan: verified before anything is planned, named after the data the run recorded,
and parsed back with huggingface_hub to the results.json values, offline."""

from __future__ import annotations

import json
import re
import shutil

import pytest
import yaml
from huggingface_hub import DatasetCard, EvalResult, HfApi, ModelCard, ModelCardData, parse_eval_result_entries

from gacc_hf.cli import main
from gacc_hf.data.synthetic import synthetic
from gacc_hf.hub.commit import OfflineError
from gacc_hf.hub.model_card import (
    TASK_TYPE,
    PublishError,
    citation,
    dataset_ref,
    model_card,
    planned_texts,
    publish,
    publish_plan,
    results_template,
)
from gacc_hf.results.folder import read_folder
from gacc_hf.results.layout import ResultsError
from tests.helpers.results import real_run

PAPER = "GACC-Bench: Evaluating Goal-Conditioned Compression with Future Questions Held Out"
CARD = "==> me/goal-lines:README.md <==\n"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("card")
    real_run(root / "run", root / "cache", conditions=("own", "none", "cross", "full", "oracle"))
    return root / "run"


@pytest.fixture
def copy(run_dir, tmp_path):
    return shutil.copytree(run_dir, tmp_path / "run")


def _edit(folder, edit):
    doc = json.loads((folder / "results.json").read_text())
    edit(doc)
    (folder / "results.json").write_text(json.dumps(doc))
    return folder


def _as_local_file(folder):
    """The same run, recorded as read from a user's file (what `gacc run --data mine.jsonl` records)."""
    return _edit(folder, lambda doc: doc["config"]["data"].update(spec="data/mine.jsonl"))


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


def _dry_run(folder, *extra):
    argv = ["publish", str(folder), "--repo-id", "me/goal-lines", "--compressor", "goal-lines", "--dry-run"]
    return main([*argv, *extra])


def test_dry_run_card_parses_back_to_the_results_json_values_and_names_synthetic_data(run_dir, capsys):
    assert _dry_run(run_dir) == 0
    out = capsys.readouterr().out
    assert "repo: me/goal-lines (model), 1 file(s):" in out
    card_text = out.split(CARD, 1)[1]
    parsed = _parsed(card_text)
    expected = _expected(run_dir, "goal-lines")
    assert len(expected) == 2 * 3 * 3  # metrics x conditions x ratios
    assert {k: r.metric_value for k, r in parsed.items()} == expected
    fingerprint = read_folder(run_dir).config["data"]["fingerprint"]
    for r in parsed.values():
        assert r.task_type == TASK_TYPE == "question-answering"
        assert (r.dataset_type, r.dataset_config, r.dataset_split) == ("gacc-hf-synthetic", "judge", None)
        assert r.dataset_name.startswith("gacc-hf synthetic data") and "not the GACC-Bench release" in r.dataset_name
        assert r.metric_args["data_fingerprint"] == fingerprint
    assert "**These scores are not on the GACC-Bench release**" in card_text
    assert ModelCard(card_text).data.model_name == "me/goal-lines"


def test_a_synthetic_run_of_the_cli_is_published_as_synthetic(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    run = [
        "run",
        "--data",
        "synthetic:contexts=3",
        "--compressors",
        "goal-lines",
        "--reader",
        "fields",
        "--judge",
        "exact",
    ]
    assert main([*run, "--ratios", "0.25", "--conditions", "own", "--no-progress", "--output-dir", "out"]) == 0
    capsys.readouterr()
    assert _dry_run(tmp_path / "out") == 0
    card = ModelCard(capsys.readouterr().out.split(CARD, 1)[1])
    assert {(r.dataset_type, r.dataset_name) for r in card.data.eval_results} == {
        ("gacc-hf-synthetic", "gacc-hf synthetic data (rule-made; not the GACC-Bench release), synthetic:contexts=3")
    }
    assert "GACC-Bench release**" in card.text


def test_a_hand_edited_score_is_refused_before_any_card_is_made(copy, capsys):
    _edit(copy, lambda doc: next(s for s in doc["scores"] if s["compressor"] == "goal-lines").update(micro=0.99))
    assert _dry_run(copy) == 2
    out, err = capsys.readouterr()
    assert "differ from answers.parquet in micro" in err and "0.99" in err
    assert out == ""  # no plan, no card
    with pytest.raises(ResultsError, match="micro"):
        publish_plan(copy, "me/m", compressor="goal-lines")


def test_a_replaced_parquet_file_is_refused(copy, capsys):
    (copy / "memories.parquet").write_bytes((copy / "answers.parquet").read_bytes())
    assert _dry_run(copy) == 2
    assert "memories.parquet: content does not match the sha256" in capsys.readouterr().err


def _leaky(contexts):
    """A compressor that cheats through a closure over the dataset: it writes its context's questions."""
    questions = {}
    for row in synthetic(seed=0, contexts=contexts):
        questions.setdefault(row["context"], []).extend(q["question"] for q in row["questions"])

    def leaky(item):
        return " ".join(questions[item.context])

    return leaky


def test_a_run_with_a_nonzero_integrity_counter_is_refused(tmp_path, capsys):
    real_run(tmp_path / "run", tmp_path / "cache", compressor=_leaky(3), contexts=3, ratios=(0.5,))
    assert read_folder(tmp_path / "run").payload["integrity"]["exposures"] > 0
    argv = ["publish", str(tmp_path / "run"), "--repo-id", "me/m", "--dry-run"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "integrity counters are not 0 (exposures = " in err and "break the protocol" in err
    _edit(tmp_path / "run", lambda doc: doc["integrity"].update(exposures=0))  # hiding the counter does not help
    assert main(argv) == 2
    assert "integrity.exposures is 0 but" in capsys.readouterr().err


def test_a_partial_run_is_refused(copy):
    _edit(copy, lambda doc: doc["config"].update(limit={"value": 5, "groups": 5, "of": 30}))
    with pytest.raises(PublishError, match=r"a partial run \(limit 5: the first 5 of 30 groups\)"):
        publish_plan(copy, "me/m", compressor="goal-lines")


def test_recorded_errors_need_allow_errors_and_are_stated_on_the_card(tmp_path, capsys):
    def flaky(item):
        if item.context.startswith("Incident") and item.token_budget > 20:
            raise RuntimeError("boom")
        return item.context

    result = real_run(tmp_path / "run", tmp_path / "cache", compressor=flaky, contexts=6, on_error="record")
    argv = ["publish", str(tmp_path / "run"), "--repo-id", "me/m", "--dry-run"]
    assert main(argv) == 2
    assert f"recorded {len(result.errors)} failed call(s)" in capsys.readouterr().err
    assert main([*argv, "--allow-errors"]) == 0
    assert f"**{len(result.errors)} model call(s) failed during the run" in capsys.readouterr().out


def test_a_run_on_a_local_file_needs_the_dataset_repo_named(copy, capsys):
    _as_local_file(copy)
    assert _dry_run(copy) == 2
    assert "'data/mine.jsonl', not known to be a Hub dataset: pass --dataset-repo" in capsys.readouterr().err
    assert _dry_run(copy, "--dataset-repo", "someone/gacc-bench") == 0
    card_text = capsys.readouterr().out.split(CARD, 1)[1]
    for r in _parsed(card_text).values():
        assert (r.dataset_type, r.dataset_name) == ("someone/gacc-bench", "someone/gacc-bench")
    assert "not on the GACC-Bench release" not in card_text


def test_bundled_data_cannot_be_renamed_and_unrecorded_data_cannot_be_published(run_dir):
    config = read_folder(run_dir).config
    with pytest.raises(PublishError, match=r"synthetic data.*not 'owner/gacc-bench'"):
        dataset_ref(config, "owner/gacc-bench")
    sample = dataset_ref({**config, "data": {**config["data"], "spec": "sample"}})
    assert sample.id == "gacc-hf-sample" and "bundled sample (not the GACC-Bench release)" in sample.name
    hub = {**config, "data": {**config["data"], "spec": "owner/bench", "kind": "hub"}}
    assert dataset_ref(hub).id == "owner/bench"
    with pytest.raises(PublishError, match="Hub dataset 'owner/bench', not 'other/bench'"):
        dataset_ref(hub, "other/bench")
    with pytest.raises(PublishError, match="records no data identity"):
        dataset_ref({k: v for k, v in config.items() if k != "data"})


def test_ceilings_are_upper_bounds_on_the_card_and_never_in_the_model_index(run_dir):
    (plan,) = publish_plan(run_dir, "me/m", compressor="goal-lines")
    card_text = dict(planned_texts([plan]))["me/m:README.md"]
    assert {r.metric_args["condition"] for r in ModelCard(card_text).data.eval_results} == {"own", "none", "cross"}
    assert "Upper bounds, not methods (and not in the model-index)" in card_text
    oracle = next(s for s in read_folder(run_dir).scores if s["compressor"] == "oracle" and s["ratio"] == 0.25)
    assert f"| oracle (oracle) | 0.25 | {oracle['micro']:.3f} [" in card_text
    for ceiling in ("oracle", "full-context"):
        with pytest.raises(ValueError, match=f"no compressor '{ceiling}'"):
            publish_plan(run_dir, "me/m", compressor=ceiling)


def test_publish_offline_fails_before_reading_anything(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["publish", str(tmp_path / "no-such-run"), "--repo-id", "me/m"]) == 2
    err = capsys.readouterr().err
    assert "HF_HUB_OFFLINE" in err and "no-such-run" not in err


def test_the_networked_step_refuses_offline(run_dir, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    plans = publish_plan(run_dir, "me/m", compressor="truncate")
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
    dataset = dataset_ref(run.config)
    once = model_card(run, "goal-lines", "me/m", dataset, existing)
    twice = model_card(run, "goal-lines", "me/m", dataset, once)
    assert once == twice  # publishing again replaces, never duplicates
    card = ModelCard(once)
    assert "Hand-written intro." in card.text and card.text.count("## GACC-Bench results") == 1
    assert card.data.license == "mit" and card.data.model_name == "mine"
    types = [r.metric_type for r in card.data.eval_results]
    assert types.count("accuracy") == 1 and types.count("gacc_micro") == 9


def test_details_dataset_is_planned_with_its_own_card_marking_the_gold_column(run_dir):
    plans = publish_plan(run_dir, "me/m", compressor="truncate", details_repo_id="me/m-details")
    model, details = plans
    assert (model.repo_type, details.repo_type) == ("model", "dataset")
    paths = [op.path_in_repo for op in details.operations]
    assert {"README.md", "answers.parquet", "memories.parquet", "results.json"} <= set(paths)
    text = dict(planned_texts(plans))["me/m-details:README.md"]
    card = DatasetCard(text)
    assert [c["config_name"] for c in card.data.configs] == ["answers", "memories"]
    assert "**`references`: the gold answers**" in text and "the memory text (`memory`)" in text
    assert "me/m-details" in dict(planned_texts(plans))["me/m:README.md"]  # the model card links its details
    back = read_folder(run_dir)  # the columns the card describes are there
    assert {"question", "references"} <= back.answers[0].keys() and "memory" in back.memories[0]


def test_eval_results_entries_need_hub_data_a_task_and_a_headline_ratio(copy):
    with pytest.raises(PublishError, match=r"\.eval_results entries are for a benchmark on the Hub"):
        publish_plan(copy, "me/m", compressor="goal-lines", eval_results_task="default", headline_ratio=0.25)
    _as_local_file(copy)
    kw = {"compressor": "goal-lines", "dataset_repo": "someone/gacc-bench", "eval_results_task": "default"}
    with pytest.raises(ValueError, match="--headline-ratio"):
        publish_plan(copy, "me/m", **kw)
    plans = publish_plan(copy, "me/m", **kw, headline_ratio=0.25)
    text = dict(planned_texts(plans))["me/m:.eval_results/gacc-bench.yaml"]
    (entry,) = parse_eval_result_entries(yaml.safe_load(text))
    assert (entry.dataset_id, entry.task_id) == ("someone/gacc-bench", "default")
    assert entry.value == _expected(copy, "goal-lines")[("gacc_micro", "own", 0.25)]


def test_a_run_with_several_compressors_needs_one_named(run_dir):
    with pytest.raises(ValueError, match="choose one with --compressor"):
        publish_plan(run_dir, "me/m")


def test_template_and_citation_come_from_model_card_md():
    assert results_template().startswith("---\n{{ card_data }}\n---")
    assert PAPER in citation().replace("{GACC-Bench}", "GACC-Bench")
    assert "Liu, Weiting" in citation()
    assert not re.search(r"\d{4}\.\d{4,5}", citation())  # no invented arXiv id


def test_a_schema_1_folder_must_be_upgraded_by_gacc_report_first(run_dir, tmp_path):
    run = read_folder(run_dir)
    old = tmp_path / "old"
    old.mkdir()
    doc = {k: v for k, v in run.payload.items() if k != "files"}
    (old / "results.json").write_text(
        json.dumps({**doc, "schema_version": 1, "answers": run.answers, "memories": run.memories})
    )
    with pytest.raises(PublishError, match="run `gacc report` on it first"):
        publish_plan(old, "me/m", compressor="goal-lines")
    assert main(["report", str(old)]) == 0
    assert publish_plan(old, "me/m", compressor="goal-lines")


def test_the_card_names_its_data_once_and_rounds_the_ci_bounds(run_dir, capsys):
    assert _dry_run(run_dir) == 0
    card_text = capsys.readouterr().out.split(CARD, 1)[1]
    body = card_text.split("<!-- gacc-bench-results:start -->", 1)[1]
    assert body.count("gacc-hf synthetic data (rule-made; not the GACC-Bench release)") == 1
    assert body.count("GACC-Bench release") == 2  # the data's name, then the one warning in bold
    doc = json.loads((run_dir / "results.json").read_text())
    raw = {(s["condition"], s["ratio"]): s for s in doc["scores"] if s["compressor"] == "goal-lines"}
    for (metric, condition, ratio), r in _parsed(card_text).items():
        low, high = r.metric_args["ci95"]
        stored = raw[(condition, ratio)]
        m = metric.removeprefix("gacc_")
        assert (low, high) == (round(stored[f"{m}_ci_low"], 4), round(stored[f"{m}_ci_high"], 4))
        assert len(repr(low).split(".")[-1]) <= 4 and len(repr(high).split(".")[-1]) <= 4
