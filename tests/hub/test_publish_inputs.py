"""What `gacc publish` is told, checked in a dry run as in a real one: repo ids, the split a run that recorded none
read, the folder a dry run writes into; and a dry run short enough to read, with every file written out."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from huggingface_hub import DatasetCard, ModelCard

from gacc_hf.cli import main
from gacc_hf.hub.benchmark_yaml import eval_yaml, parse_eval_yaml
from gacc_hf.hub.model_card import planned_texts, publish_plan
from gacc_hf.safe_yaml import load_yaml
from tests.helpers.data import SHIPPED_FOLDER
from tests.helpers.paths import ROOT
from tests.helpers.results import real_run

MAIN = ROOT / "docs" / "results" / "main"
SAMPLE_EVAL_YAML = SHIPPED_FOLDER / "eval.yaml"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("inputs")
    real_run(root / "run", root / "cache", compressor="goal-lines", conditions=("own",), ratios=(0.1, 0.2))
    return root / "run"


@pytest.fixture
def local_run(run_dir, tmp_path):
    """The run as read from a user's local file (no split recorded, what `gacc run --data mine.jsonl` records)."""
    folder = shutil.copytree(run_dir, tmp_path / "run")
    doc = json.loads((folder / "results.json").read_text())
    doc["config"]["data"].update(spec="data/mine.jsonl", kind="file")
    (folder / "results.json").write_text(json.dumps(doc))
    return folder


def _publish(folder, *extra):
    return main(["publish", str(folder), "--repo-id", "me/m", "--dry-run", *extra])


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--repo-id", "not a repo", "--repo-id 'not a repo': not a Hub repo id (Repo id must use alphanumeric chars"),
        ("--repo-id", "a/b/c", "--repo-id 'a/b/c': not a Hub repo id (Repo id must be in the form"),
        ("--repo-id", "me/x..y", "--repo-id 'me/x..y': not a Hub repo id (Cannot have -- or .. in repo_id)"),
        ("--repo-id", "just-a-name", "--repo-id 'just-a-name': a model is named OWNER/NAME"),
        ("--dataset-repo", "my data", "--dataset-repo 'my data': not a Hub repo id"),
        ("--details-repo-id", "me/", "--details-repo-id 'me/': not a Hub repo id"),
        ("--space", "me/a page", "--space 'me/a page': not a Hub repo id"),
    ],
)
def test_a_repo_id_the_hub_would_refuse_is_refused_in_a_dry_run(tmp_path, capsys, flag, value, message):
    argv = ["publish", str(tmp_path / "no-such-run"), "--repo-id", "me/m", "--dry-run", flag, value]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"gacc publish: error: {message}") and len(err.strip().splitlines()) == 1


def test_well_formed_repo_ids_pass(local_run, capsys):
    names = ["--dataset-repo", "o/b.v2", "--details-repo-id", "me/m_details", "--space", "me/m-page"]
    assert _publish(local_run, *names) == 0  # quiet: every name is OWNER/NAME in the Hub's characters
    assert "repo: me/m-page (space)" in capsys.readouterr().out


def _validation_only(tmp_path):
    path = tmp_path / "eval.yaml"
    path.write_text(eval_yaml("B", "A benchmark.", ["validation"]), encoding="utf-8")
    return str(path)


def test_a_run_on_a_local_file_is_not_matched_to_a_benchmark_ranking_only_validation(local_run, tmp_path, capsys):
    hub = ["--dataset-repo", "o/b", "--eval-yaml", _validation_only(tmp_path)]
    assert _publish(local_run, *hub) == 2
    out, err = capsys.readouterr()
    assert out == "" and "the run recorded no split (it read data with one split), so it cannot be matched" in err
    assert "pass --split validation if these rows are that split" in err
    assert _publish(local_run, *hub, "--split", "test") == 2  # named, but not the ranked one
    assert "the run used split 'test'; o/b:eval.yaml ranks its tasks on split validation" in capsys.readouterr().err
    assert _publish(local_run, *hub, "--split", "validation") == 0  # quiet: the split named is the ranked one
    card = ModelCard(capsys.readouterr().out.split("==> me/m:README.md <==\n", 1)[1].split("\n==> ", 1)[0])
    assert {r.dataset_split for r in card.data.eval_results} == {"validation"}
    assert "config `public`, split `validation`, judge-view rows fingerprint" in card.text


def test_split_cannot_contradict_the_recorded_one_nor_name_bundled_data(local_run, run_dir):
    doc = json.loads((local_run / "results.json").read_text())
    doc["config"]["data"]["split"] = "test"
    (local_run / "results.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"the run recorded split 'test', not 'validation': drop --split"):
        publish_plan(local_run, "me/m", dataset_repo="o/b", split="validation")
    assert publish_plan(local_run, "me/m", dataset_repo="o/b", split="test")  # quiet: the same split
    with pytest.raises(ValueError, match=r"--split names a split of a Hub dataset; the run used gacc-hf synthetic"):
        publish_plan(run_dir, "me/m", split="test")


def test_the_details_card_states_the_split_as_it_is(local_run):
    for split, stated in ((None, "its only split (the run recorded no split name)"), ("test", "split `test`")):
        plans = publish_plan(local_run, "me/m", dataset_repo="o/b", split=split, details_repo_id="me/d")
        card = DatasetCard(dict(planned_texts(plans))["me/d:README.md"])
        assert f"config `public`, {stated}, judge-view rows fingerprint" in card.text
        assert "the only one" not in card.text


def test_the_main_job_dry_run_is_short_and_dry_run_dir_writes_every_file(tmp_path, capsys):
    argv = ["publish", str(MAIN), "--repo-id", "me/embed", "--compressor", "embed", "--dataset-repo", "me/sample"]
    argv += ["--eval-yaml", str(SAMPLE_EVAL_YAML), "--split", "test", "--details-repo-id", "me/d", "--space", "me/p"]
    assert main([*argv, "--dry-run"]) == 0
    short = capsys.readouterr().out
    assert len(short) < 20_000  # the Space's page alone is over 380,000 characters
    assert "==> me/p:index.html <==\n(" in short and " characters, not shown: --dry-run-dir DIR writes it)" in short
    out_dir = tmp_path / "files"
    assert main([*argv, "--dry-run-dir", str(out_dir)]) == 0
    listed = capsys.readouterr().out
    assert "(dry run: wrote 13 file(s) under " in listed  # model 2, details 1 + 6 copied, Space 2 + 2 plots
    plans = publish_plan(
        MAIN, "me/embed", compressor="embed", dataset_repo="me/sample", split="test", details_repo_id="me/d",
        space_id="me/p", hub={"eval_yaml": SAMPLE_EVAL_YAML.read_text()},
    )  # fmt: skip
    for kind, repo, op in ((p.repo_type, p.repo_id, op) for p in plans for op in p.operations):
        data = op.path_or_fileobj if isinstance(op.path_or_fileobj, bytes) else Path(op.path_or_fileobj).read_bytes()
        assert (out_dir / f"{kind}s" / repo / op.path_in_repo).read_bytes() == data
    assert (out_dir / "models" / "me" / "embed" / ".eval_results" / "gacc-bench.yaml").is_file()


def test_a_dry_run_dir_holding_anything_is_refused_before_any_output(run_dir, tmp_path, capsys):
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "keep.txt").write_text("mine")
    assert _publish(run_dir, "--dry-run-dir", str(tmp_path / "files")) == 2
    out, err = capsys.readouterr()
    assert out == "" and "--dry-run-dir " in err and "exists and is not an empty folder" in err
    assert (tmp_path / "files" / "keep.txt").read_text() == "mine"
    assert _publish(run_dir, "--dry-run-dir", str(tmp_path / "empty")) == 0  # quiet: a new folder


def test_a_file_is_shown_in_full_up_to_the_bound_and_listed_past_it():
    from gacc_hf.hub.commit import SHOWN_MAX_CHARS, shown_file

    assert SHOWN_MAX_CHARS == 20_000
    at = "x" * 19_999 + "\n"  # 20,000 characters: shown
    assert shown_file("o/r:a.md", at) == f"\n==> o/r:a.md <==\n{at}"
    assert (
        shown_file("o/r:a.md", at + "y")
        == "\n==> o/r:a.md <==\n(20,001 characters, not shown: --dry-run-dir DIR writes it)\n"
    )


CURVE = ROOT / "docs" / "results" / "curve"  # truncate at r = 0.1, 0.2 and 0.3; the sample ranks 0.1, 0.2, 0.25


def test_a_run_with_cells_the_benchmark_does_not_rank_is_refused_naming_them_and_only_defined(tmp_path, capsys):
    argv = [str(CURVE), "--compressor", "truncate", "--dataset-repo", "me/gacc-bench-sample", "--split", "test"]
    argv += ["--eval-yaml", str(SAMPLE_EVAL_YAML), "--dry-run-dir", str(tmp_path / "refused")]
    assert main(["publish", "--repo-id", "me/m", *argv]) == 2
    err = capsys.readouterr().err
    assert "does not define task(s) micro-own-r0.3, macro-own-r0.3; it defines micro-own-r0.1, " in err
    assert ": pass --only-defined to publish the ones it defines" in err
    out_dir = tmp_path / "files"
    assert main(["publish", "--repo-id", "me/m", *argv[:-1], str(out_dir), "--only-defined"]) == 0
    out = capsys.readouterr().out
    skipped = "skipped in .eval_results/gacc-bench.yaml, not defined by me/gacc-bench-sample's eval.yaml: "
    assert f"  {skipped}micro-own-r0.3, macro-own-r0.3\n" in out
    entries = (out_dir / "models" / "me" / "m" / ".eval_results" / "gacc-bench.yaml").read_text()
    ids = sorted(line.split("task_id: ")[1] for line in entries.splitlines() if "task_id: " in line)
    assert ids == ["macro-own-r0.1", "macro-own-r0.2", "micro-own-r0.1", "micro-own-r0.2"]  # 2 metrics x 2 ratios


def test_the_model_index_names_the_config_the_eval_yaml_tasks_rank():
    hub = {"eval_yaml": SAMPLE_EVAL_YAML.read_text()}
    plans = publish_plan(MAIN, "me/m", compressor="embed", dataset_repo="me/sample", split="test", hub=hub)
    texts = dict(planned_texts(plans))
    tasks = parse_eval_yaml(hub["eval_yaml"])
    entries = load_yaml(
        texts["me/m:.eval_results/gacc-bench.yaml"], "eval results", "an .eval_results file", ValueError
    )
    ranked = {tasks[e["dataset"]["task_id"]]["config"] for e in entries}
    assert ranked == {"public"}  # the shipped eval.yaml's tasks
    assert {r.dataset_config for r in ModelCard(texts["me/m:README.md"]).data.eval_results} == ranked
