"""Model card and publishing plan: verified before anything is planned, named after the data the run recorded,
and parsed back with huggingface_hub to the results.json values, offline."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil

import pytest
import yaml
from huggingface_hub import (
    DatasetCard,
    EvalResult,
    HfApi,
    ModelCard,
    ModelCardData,
    SpaceCard,
    parse_eval_result_entries,
)
from huggingface_hub.errors import EntryNotFoundError

from gacc_hf.cli import main
from gacc_hf.data.synthetic import synthetic
from gacc_hf.hub.commit import OfflineError
from gacc_hf.hub.model_card import (
    TASK_TYPE,
    PublishError,
    citation,
    dataset_ref,
    hub_state,
    model_card,
    planned_texts,
    publish,
    publish_plan,
    results_template,
)
from gacc_hf.results.folder import read_folder
from gacc_hf.results.layout import ResultsError
from tests.helpers.data import SHIPPED_FOLDER
from tests.helpers.paths import ROOT
from tests.helpers.results import real_run

PAPER = "GACC-Bench: Evaluating Goal-Conditioned Compression with Future Questions Held Out"
CARD = "==> me/goal-lines:README.md <==\n"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("card")
    real_run(root / "run", root / "cache", conditions=("own", "none", "cross", "full", "oracle", "closed"))
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
        assert (r.dataset_type, r.dataset_config, r.dataset_split) == ("gacc-hf-synthetic", "public", None)
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
    everywhere = ["--details-repo-id", "me/d", "--space", "me/page", "--pr", "--eval-yaml", str(SAMPLE_EVAL_YAML)]
    assert main([*argv, *everywhere]) == 2  # no Eval Results, details or Space either
    out, err = capsys.readouterr()
    assert out == "" and "integrity counters are not 0 (exposures = " in err
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


def test_ceilings_are_upper_bounds_on_the_card_and_never_in_the_model_index(run_dir):
    (plan,) = publish_plan(run_dir, "me/m", compressor="goal-lines")
    card_text = dict(planned_texts([plan]))["me/m:README.md"]
    assert {r.metric_args["condition"] for r in ModelCard(card_text).data.eval_results} == {"own", "none", "cross"}
    assert "Upper bounds, not methods (and not in the model-index)" in card_text
    oracle = next(s for s in read_folder(run_dir).scores if s["compressor"] == "oracle" and s["ratio"] == 0.25)
    assert f"| oracle (oracle) | 0.25 | {oracle['micro']:.3f} [" in card_text
    upper, lower = card_text.split("| upper bound |", 1)[1].split("| lower bound |", 1)
    assert "closed-book" not in upper and "full-context (full)" in upper
    assert "| closed-book (closed) | 0 | 0.000 [" in lower.split("\n\n", 1)[0]  # the empty memory answers nothing
    for ceiling in ("oracle", "full-context", "closed-book"):
        with pytest.raises(ValueError, match=f"no compressor '{ceiling}'"):
            publish_plan(run_dir, "me/m", compressor=ceiling)


def test_publish_offline_fails_before_reading_anything(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["publish", str(tmp_path / "no-such-run"), "--repo-id", "me/m"]) == 2
    err = capsys.readouterr().err
    assert "HF_HUB_OFFLINE" in err and "no-such-run" not in err
    extra = ["--space", "me/page", "--pr", "--details-repo-id", "me/d", "--dataset-repo", "o/b"]
    assert main(["publish", str(MAIN), "--repo-id", "me/m", "--compressor", "embed", *extra]) == 2
    assert "cannot publish to me/m: HF_HUB_OFFLINE is set" in capsys.readouterr().err


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


def test_a_card_published_with_the_judge_config_has_its_gacc_entries_replaced_not_doubled(run_dir):
    run = read_folder(run_dir)
    dataset = dataset_ref(run.config)
    older = model_card(run, "goal-lines", "me/m", dataclasses.replace(dataset, config="judge"))
    assert {r.dataset_config for r in ModelCard(older).data.eval_results} == {"judge"}  # what cards said before
    types = [r.metric_type for r in ModelCard(model_card(run, "goal-lines", "me/m", dataset, older)).data.eval_results]
    assert types.count("gacc_micro") == 9  # 3 conditions x 3 ratios, once


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


# --- Eval Results, the results Space, pull requests -------------------------------------------------------------

MAIN = ROOT / "docs" / "results" / "main"
SAMPLE_EVAL_YAML = SHIPPED_FOLDER / "eval.yaml"
DETAILS = "GACC-Bench details"


def _files(out):
    """{label: text} of every generated file a dry run printed."""
    parts = re.split(r"^==> (\S+) <==\n", out, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_the_main_job_dry_run_shows_eval_results_the_space_and_matches_results_json(capsys, tmp_path):
    argv = ["publish", str(MAIN), "--repo-id", "me/embed", "--compressor", "embed", "--dry-run-dir", str(tmp_path)]
    hub = ["--dataset-repo", "me/gacc-bench-sample", "--eval-yaml", str(SAMPLE_EVAL_YAML), "--split", "test"]
    assert main([*argv, *hub, "--details-repo-id", "me/embed-details", "--space", "me/embed-page"]) == 0
    out = capsys.readouterr().out
    assert "repo: me/embed (model), 2 file(s):" in out and "repo: me/embed-page (space), 4 file(s):" in out
    files = _files(out)
    doc = json.loads((MAIN / "results.json").read_text())
    cfg = doc["config"]
    expected = {  # written out by hand: <metric>-<condition>-r<ratio>, values straight from results.json
        f"{m}-{s['condition']}-r{s['ratio']:g}": s[m]
        for s in doc["scores"]
        if s["compressor"] == "embed"
        for m in ("micro", "macro")
    }
    assert set(expected) == {"micro-own-r0.2", "macro-own-r0.2", "micro-none-r0.2", "macro-none-r0.2"}
    entries = parse_eval_result_entries(yaml.safe_load(files["me/embed:.eval_results/gacc-bench.yaml"]))
    assert {e.task_id: e.value for e in entries} == expected
    declared = {t["id"] for t in yaml.safe_load(SAMPLE_EVAL_YAML.read_text())["tasks"]}
    assert set(expected) <= declared
    embed = next(c["revision"] for c in cfg["compressors"] if c["name"] == "embed")
    for e in entries:
        assert (e.dataset_id, e.dataset_revision, e.date) == ("me/gacc-bench-sample", None, cfg["finished_at"])
        assert (e.source_url, e.source_name) == (
            "https://huggingface.co/datasets/me/embed-details",
            "GACC-Bench details",
        )
        for needed in (
            f"embed@{embed}",
            cfg["reader"]["revision"],
            f"judge contains@{cfg['judge']['revision']}",
            cfg["data"]["fingerprint"],
        ):
            assert needed in e.notes
    space = SpaceCard(files["me/embed-page:README.md"])
    assert (space.data.sdk, space.data.app_file, space.data.models) == ("static", "index.html", ["me/embed"])
    page = (tmp_path / "spaces" / "me" / "embed-page" / "index.html").read_text(encoding="utf-8")
    assert files["me/embed-page:index.html"] == f"({len(page):,} characters, not shown: --dry-run-dir DIR writes it)\n"
    assert cfg["data"]["fingerprint"] in page and 'href="https://huggingface.co/me/embed"' in page
    assert '<script type="application/json" id="page-data">' in page  # the results page, its data embedded
    assert "bundled sample (not the GACC-Bench release)" in files["me/embed:README.md"]  # named as what it is


def test_without_a_hub_identity_no_eval_results_are_planned(run_dir, capsys):
    assert _dry_run(run_dir) == 0
    assert ".eval_results" not in capsys.readouterr().out  # neither a file nor a note about one
    (plan,) = publish_plan(run_dir, "me/m", compressor="goal-lines")  # synthetic data: the card as before
    assert [op.path_in_repo for op in plan.operations] == ["README.md"]
    with pytest.raises(PublishError, match=r"synthetic data.*drop --dataset-repo"):
        publish_plan(run_dir, "me/m", compressor="goal-lines", dataset_repo="me/bench")


def test_a_task_id_the_eval_yaml_does_not_define_is_refused(copy, capsys):
    _as_local_file(copy)  # ratios 0.1, 0.25 and 0.5: the sample's benchmark ranks no 0.5
    hub = ["--dataset-repo", "me/gacc-bench-sample", "--eval-yaml", str(SAMPLE_EVAL_YAML)]
    assert _dry_run(copy, *hub) == 2
    out, err = capsys.readouterr()
    assert out == "" and "me/gacc-bench-sample:eval.yaml does not define task(s) micro-own-r0.5, " in err
    assert "; it defines micro-own-r0.1, micro-own-r0.2, micro-own-r0.25, micro-none-r0.1" in err


def test_a_space_name_that_is_not_owner_name_is_refused_before_the_folder_is_read(tmp_path, capsys):
    argv = ["publish", str(tmp_path / "no-such-run"), "--repo-id", "me/m", "--dry-run"]
    assert main([*argv, "--space", "just-a-name"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "--space 'just-a-name': a Space is named OWNER/NAME" in err


def test_pr_opens_the_model_commit_as_a_pull_request(copy, capsys):
    _as_local_file(copy)
    assert _dry_run(copy, "--dataset-repo", "someone/gacc-bench", "--pr") == 0
    out = capsys.readouterr().out
    assert "repo: me/goal-lines (model), 2 file(s), opened as a pull request:" in out
    assert "(dry run: task ids not checked; a real publish checks them against the dataset's eval.yaml)" in out
    plans = publish_plan(copy, "me/m", compressor="goal-lines", dataset_repo="o/b", details_repo_id="me/d", pr=True)
    assert [p.pr for p in plans] == [True, False]  # the details dataset is the publisher's own repo


def test_the_model_repos_existing_eval_results_are_kept_and_ours_replaced(copy):
    _as_local_file(copy)
    other = {"dataset": {"id": "cais/hle", "task_id": "default"}, "value": 20.9}
    stale = {"dataset": {"id": "o/b", "task_id": "micro-own-r0.25"}, "value": 0.99}
    hub = {"eval_results": yaml.safe_dump([other, stale])}
    (plan,) = publish_plan(copy, "me/m", compressor="goal-lines", dataset_repo="o/b", hub=hub)
    entries = yaml.safe_load(dict(planned_texts([plan]))["me/m:.eval_results/gacc-bench.yaml"])
    assert entries[0] == other and stale not in entries
    assert len(entries) == 1 + 2 * 3 * 3  # the other benchmark's entry + metrics x conditions x ratios
    ours = {(e["dataset"]["task_id"]): e["value"] for e in entries[1:]}
    assert ours["micro-own-r0.25"] == _expected(copy, "goal-lines")[("gacc_micro", "own", 0.25)]


class _Hub:
    """hf_hub_download over a dict of (repo_id, filename) -> text; anything else is not there."""

    def __init__(self, tmp_path, files):
        self.tmp_path, self.files, self.asked = tmp_path, files, []

    def hf_hub_download(self, repo_id, filename, repo_type=None):
        self.asked.append((repo_id, filename, repo_type))
        if (repo_id, filename) not in self.files:
            raise EntryNotFoundError(f"{filename} not in {repo_id}")
        path = self.tmp_path / f"{len(self.asked)}.txt"
        path.write_text(self.files[(repo_id, filename)], encoding="utf-8")
        return str(path)


def test_a_real_publish_reads_the_benchmarks_eval_yaml_and_refuses_a_dataset_without_one(copy, tmp_path):
    _as_local_file(copy)
    api = _Hub(tmp_path, {("o/b", "eval.yaml"): "x: 1\n"})
    state = hub_state(api, copy, "me/m", "o/b", None)
    assert state == {"eval_yaml": "x: 1\n", "eval_results": None}
    assert api.asked == [("o/b", "eval.yaml", "dataset"), ("me/m", ".eval_results/gacc-bench.yaml", "model")]
    with pytest.raises(PublishError, match=r"the dataset o/c has no eval\.yaml, so it is no Benchmark"):
        hub_state(api, copy, "me/m", "o/c", None)
    assert hub_state(_Hub(tmp_path, {}), copy, "me/m", "o/c", "given: 1\n")["eval_yaml"] == "given: 1\n"


def test_bundled_data_without_a_hub_copy_reads_nothing_from_the_hub(run_dir, tmp_path):
    api = _Hub(tmp_path, {})
    assert hub_state(api, run_dir, "me/m", None, None) == {} and api.asked == []


def test_a_recorded_hub_revision_reaches_every_entry(copy):
    _edit(copy, lambda doc: doc["config"]["data"].update(spec="o/b", kind="hub", revision="5503434d"))
    (plan,) = publish_plan(copy, "me/m", compressor="goal-lines")
    entries = parse_eval_result_entries(
        yaml.safe_load(dict(planned_texts([plan]))["me/m:.eval_results/gacc-bench.yaml"])
    )
    assert {(e.dataset_id, e.dataset_revision) for e in entries} == {("o/b", "5503434d")}
    assert len(entries) == 18 and {e.source_url for e in entries} == {None}  # no details, no Space: no source


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


def test_the_card_states_the_runs_usage_and_with_prices_each_cells_cost(tmp_path, run_dir, capsys):
    from gacc_hf.cost.prices import parse_prices

    assert _dry_run(run_dir) == 0
    unpriced = capsys.readouterr().out
    assert "Whole run usage (prompt+completion tokens): compressor 0+0, reader 0+0, judge 0+0" in unpriced
    assert "break-even questions per memory" not in unpriced
    prices = parse_prices({"currency": "USD", "prices": {"goal-lines": {"prompt": 1, "completion": 1}}})
    real_run(tmp_path / "run", tmp_path / "cache", conditions=("own", "none", "full"), prices=prices)
    assert _dry_run(tmp_path / "run") == 0
    card = capsys.readouterr().out
    # rules send no prompt: every cell costs 0, and reading a memory never undercuts reading the source
    assert "| own | 0.1 | 0 USD | 0 USD | never |" in card and "cost 0 USD" in card


def test_a_ceilings_only_run_says_it_has_no_compressor(tmp_path):
    real_run(tmp_path / "run", tmp_path / "cache", compressor=(), conditions=("full", "oracle"), contexts=2)
    for named in (None, "full-context"):
        with pytest.raises(ValueError) as caught:
            publish_plan(tmp_path / "run", "me/m", compressor=named)
        assert str(caught.value).startswith("the run has compressors: none (only ceilings")
