"""`BenchmarkResult` in Python: tables as DataFrames, and `save` writing the folder `gacc run` writes."""

from __future__ import annotations

import json

import pytest

from gacc_hf.cli import main
from gacc_hf.data.loading import load_any
from gacc_hf.results.folder import read_folder
from tests.helpers.runs import rules_run

SETTINGS = {"ratios": (0.1, 0.25), "conditions": ("own", "none"), "n_bootstrap": 20, "batch_size": 64}


@pytest.fixture
def result(tmp_path):
    return rules_run(
        load_any("synthetic:contexts=2"),
        compressor=["truncate", "goal-lines"],
        cache_dir=str(tmp_path / "cache"),
        **SETTINGS,
    )


def test_to_pandas_gives_each_table_row_for_row(result):
    scores, memories, answers = (result.to_pandas(t) for t in ("scores", "memories", "answers"))
    # 2 compressors x 2 conditions x 2 ratios cells; 2 contexts x 3 goals per cell; 4 questions per goal
    assert len(scores) == 8 and len(memories) == 8 * 6 and len(answers) == 8 * 6 * 4
    assert scores.to_dict("records") == result.scores and result.to_pandas().equals(scores)
    assert answers["correct"].sum() == sum(r["correct"] for r in result.answers)
    with pytest.raises(ValueError, match="table must be 'scores', 'memories' or 'answers', got 'errors'"):
        result.to_pandas("errors")


def test_save_writes_the_folder_gacc_run_writes(result, tmp_path, capsys):
    path = result.save(tmp_path / "py")
    assert path == tmp_path / "py" / "results.json"
    argv = ["run", "--data", "synthetic:contexts=2", "--compressors", "truncate,goal-lines", "--reader", "fields"]
    argv += ["--judge", "exact", "--ratios", "0.1,0.25", "--conditions", "own,none", "--bootstrap", "20"]
    argv += ["--cache-dir", str(tmp_path / "cache"), "--output-dir", str(tmp_path / "cli"), "--no-progress"]
    assert main(argv) == 0
    capsys.readouterr()
    names = {p.name for p in (tmp_path / "py").iterdir()}
    # the same files, and the rows of the in-memory dataset beside config.yaml
    assert names == {p.name for p in (tmp_path / "cli").iterdir()} | {"data.jsonl"} and "config.yaml" in names
    py, cli = read_folder(tmp_path / "py"), read_folder(tmp_path / "cli")
    assert py.scores == cli.scores and py.answers == cli.answers
    # the saved config runs the same experiment again, on its own rows: 0 model calls, the same data (its
    # cache was outside the working directory, so the config names the default and says to pass --cache-dir)
    again = tmp_path / "again"
    assert main(["run", "--config", str(tmp_path / "py" / "config.yaml"), "--output-dir", str(again),
                 "--cache-dir", str(tmp_path / "cache"), "--no-progress"]) == 0  # fmt: skip
    rerun = json.loads((again / "results.json").read_text())
    assert rerun["calls"] == {"compressor": 0, "reader": 0, "judge": 0}
    assert rerun["config"]["data"]["fingerprint"] == py.config["data"]["fingerprint"]
