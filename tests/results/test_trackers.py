"""A run logged to Trackio, TensorBoard and W&B (`gacc run --log-to`, `run_benchmark(log_to=...)`): the values
each tracker holds, read back with its own reader, equal `results.json`'s; bad tracker input is one line, exit 2,
before any work.

The expected names follow the rule the docs state (section, a row's language/compressor/gap/condition/ratio,
field, joined by `/`), built here from the results.json rows, not by the code under test.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

from gacc_hf.results.trackers import free_name, run_name, tracker_names
from gacc_hf.results.trackers.values import logged_values
from tests.helpers.child import run_child
from tests.helpers.cli import outcome, run_args
from tests.helpers.fs import run_read_only
from tests.helpers.paths import ROOT
from tests.helpers.runs import rules_run
from tests.helpers.trackers import tensorboard_run, trackio_run, wandb_run

SCORE_FIELDS = ("micro", "macro", "micro_ci_low", "micro_ci_high", "macro_ci_low", "macro_ci_high", "n_questions")
SCORE_FIELDS += ("n_goals", "n_errors", "evidence_micro", "evidence_macro")
OUTCOME_FIELDS = ("right", "right_ci_low", "right_ci_high", "guessed", "missed", "lost", "n_questions")


def _ratio(r: float) -> str:
    return f"{r:g}"


def expected_scalars(doc: dict) -> dict[str, float]:
    """The values the docs promise for a results.json document, by name (None values are not logged)."""
    out: dict[str, float] = {}
    for row in doc["scores"]:
        head = f"scores/{row['compressor']}/{row['condition']}/{_ratio(row['ratio'])}"
        out.update({f"{head}/{f}": row[f] for f in SCORE_FIELDS})
    for row in doc["scores_by_language"]:
        head = f"scores_by_language/{row['language']}/{row['compressor']}/{row['condition']}/{_ratio(row['ratio'])}"
        out.update({f"{head}/{f}": row[f] for f in ("micro", "macro", "micro_ci_low", "micro_ci_high")})
    for row in doc["outcomes"]:
        head = f"outcomes/{row['compressor']}/{row['condition']}/{_ratio(row['ratio'])}"
        out.update({f"{head}/{f}": row[f] for f in OUTCOME_FIELDS})
    for row in doc["retention"]:
        head = f"retention/{row['compressor']}/{row['condition']}/{_ratio(row['ratio'])}"
        out.update({f"{head}/{f}": row[f] for f in ("retention", "closed_micro", "full_micro") if row[f] is not None})
    for row in doc["auc"]:
        out.update(
            {f"auc/{row['compressor']}/{row['condition']}/{f}": row[f] for f in ("auc", "auc_ci_low") if f in row}
        )
    out.update({f"integrity/{k}": v for k, v in doc["integrity"].items()})
    out.update({f"calls/{k}": v for k, v in doc["calls"].items()})
    for role, methods in doc["usage"]["roles"].items():
        for method, counts in methods.items():
            out.update({f"usage/roles/{role}/{method}/{k}": counts[k] for k in ("calls", "prompt_tokens")})
    return {k: float(v) for k, v in out.items()}


def _run_in_child(tmp_path: Path, *extra: str) -> tuple[Path, Path]:
    """`gacc run` (rules, English and Chinese sample, first group of each, 3 conditions) in a fresh process;
    returns (results folder, log folder)."""
    out, logs = tmp_path / "out", tmp_path / "logs"
    args = ["run", "--preset", "rules", "--data", "sample:all", "--limit", "1", "--ratios", "0.25,0.5"]
    args += ["--conditions", "own,closed,full", "--bootstrap", "20", "--no-progress", "--output-dir", str(out)]
    args += ["--cache-dir", str(tmp_path / "cache"), "--log-dir", str(logs), *extra]
    script = "import json, sys; from gacc_hf.cli import main; print(json.dumps(main(sys.argv[1:])))"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    assert run_child(script, tmp_path, env, *args) == 0
    return out, logs


@pytest.fixture(scope="module")
def logged_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _run_in_child(tmp_path_factory.mktemp("trackers"), "--log-to", "trackio,tensorboard")


def test_tensorboard_holds_every_value_of_results_json(logged_run):
    out, logs = logged_run
    doc = json.loads((out / "results.json").read_text())
    scalars, texts = tensorboard_run(logs / "tensorboard" / "out")
    expected = expected_scalars(doc)
    assert len(expected) > 100 and expected.keys() <= scalars.keys()
    for name, value in expected.items():  # TensorBoard keeps float32
        assert scalars[name] == pytest.approx(value, rel=1e-6, abs=1e-7), name
    assert json.loads(texts["config"].removeprefix("```json\n").removesuffix("\n```"))["data"] == doc["config"]["data"]
    answers = pd.read_parquet(out / "answers.parquet")
    traced = sum(text.count("\n") - 1 for tag, text in texts.items() if tag.startswith("traces/"))
    assert traced == len(answers)  # one row per answer, header and rule lines aside
    traced_text = "".join(text for tag, text in texts.items() if tag.startswith("traces/"))
    assert set(answers["language"]) == {"en", "zh"}
    assert all(f"| {q} |" in traced_text for q in answers["question"])  # English and Chinese questions


def test_trackio_holds_every_value_config_and_traces(logged_run):
    out, logs = logged_run
    doc = json.loads((out / "results.json").read_text())
    stored = trackio_run(logs / "trackio", "out")
    assert stored["runs"] == ["out"]
    (logged,) = [log for log in stored["logs"] if "integrity/exposures" in log]
    for name, value in expected_scalars(doc).items():
        assert logged[name] == pytest.approx(value, rel=1e-12), name
    assert stored["config"]["seed"] == doc["config"]["seed"] and stored["config"]["data"] == doc["config"]["data"]
    assert stored["config"]["command"] == doc["command"]
    answers = pd.read_parquet(out / "answers.parquet")
    traces = stored["traces"]
    assert len(traces) == len(answers)
    by_id = {(t["metadata"]["question_id"], t["metadata"]["compressor"], t["metadata"]["ratio"]): t for t in traces}
    languages = set()
    for row in answers.itertuples():
        trace = by_id[(row.question_id, row.compressor, row.ratio)]
        assert [m["role"] for m in trace["messages"]] == ["system", "user", "assistant"]
        assert trace["messages"][1]["content"] == row.question and trace["messages"][2]["content"] == row.answer
        assert trace["metadata"]["outcome"] == row.outcome
        languages.add(row.language)
    assert languages == {"en", "zh"}
    table = logged["tables/scores"]["_value"]
    assert len(table) == len(doc["scores"]) and table[0]["micro"] == doc["scores"][0]["micro"]


def test_a_second_run_of_the_same_name_is_logged_beside_the_first(logged_run, tmp_path):
    _out, logs = logged_run
    assert free_name(["tensorboard"], logs, "out") == "out-2"
    assert free_name(["tensorboard"], logs, "other") == "other"
    assert free_name(["wandb"], logs, "out") == "out"  # a W&B run has a folder of its own id


def test_the_api_logs_to_wandb_offline_and_its_run_folder_holds_the_values(tmp_path, monkeypatch):
    monkeypatch.delenv("WANDB_MODE", raising=False)
    cells = {"compressor": ["truncate", "bm25"], "ratios": [0.25], "conditions": ["own", "full"]}
    result = rules_run("sample:all", **cells, limit=1, n_bootstrap=10, log_to="wandb", log_dir=str(tmp_path / "logs"))
    (folder,) = (tmp_path / "logs" / "wandb").glob("offline-run-*")
    stored = wandb_run(folder)
    doc = result.results_document()
    assert stored["project"] == "gacc-hf" and stored["name"] == run_name(doc)
    assert re.fullmatch(r"\d{8}T\d{6}Z-truncate\+bm25", stored["name"]), stored["name"]
    expected = expected_scalars(doc)
    for name, value in expected.items():
        assert stored["history"][name] == pytest.approx(value, rel=1e-12), name
    assert stored["config"]["seed"] == {"value": 0} or stored["config"]["seed"] == 0
    answers = stored["tables"]["answers"]
    assert len(answers["data"]) == len(result.answers)
    assert answers["columns"][:3] == ["memory", "question", "answer"]
    questions = {row[1] for row in answers["data"]}
    assert questions == {a["question"] for a in result.answers} and any("？" in q or "什么" in q for q in questions)


def test_values_name_every_number_by_its_place(tmp_path):
    """A hand-made document: every number named by section, row identity and field; text and booleans not."""
    doc = {
        "config": {"seed": 3},
        "calls": {"compressor": 2, "reader": 4, "judge": 4},
        "integrity": {"budget_violations": 0, "count_errors": 1, "exposures": 0},
        "scores": [{"compressor": "bm25", "condition": "own", "ratio": 1 / 3, "ceiling": False, "micro": 0.5}],
        "gaps": [{"compressor": "bm25", "gap": "own-none", "ratio": 0.1, "micro_diff": -0.25}],
        "retention": [{"compressor": "bm25", "condition": "own", "ratio": 0.1, "retention": None, "undefined": "x"}],
        "cost": {"currency": "USD", "total": 0.02, "roles": {"reader": {"gpt": 0.01}}},
    }
    answers = [{"compressor": "bm25", "condition": "own", "ratio": 0.1, "question_id": "q1", "question": "几点？",
                "answer": "三点", "references": ["三点", "15:00"], "memory_sha256": "m1"}]  # fmt: skip
    logged = logged_values(doc, answers, [{"memory_sha256": "m1", "memory": "会议三点开始。"}])
    assert logged.scalars == {
        "calls/compressor": 2.0,
        "calls/reader": 4.0,
        "calls/judge": 4.0,
        "integrity/budget_violations": 0.0,
        "integrity/count_errors": 1.0,
        "integrity/exposures": 0.0,
        "cost/total": 0.02,
        "cost/roles/reader/gpt": 0.01,
        "scores/bm25/own/0.333333/micro": 0.5,
        "gaps/bm25/own-none/0.1/micro_diff": -0.25,
    }
    (trace,) = logged.traces
    assert [m["content"] for m in trace["messages"]] == ["会议三点开始。", "几点？", "三点"]
    assert trace["metadata"]["references"] == '["三点", "15:00"]'
    assert logged.tables["answers"][0][:4] == ["compressor", "condition", "ratio", "question_id"]
    assert logged.config["seed"] == 3


def test_tracker_names_are_checked():
    assert tracker_names("trackio, tensorboard") == ["trackio", "tensorboard"]
    assert tracker_names(None) == [] and tracker_names("") == []
    with pytest.raises(ValueError, match="unknown tracker 'tensorbord'"):
        tracker_names("tensorbord")
    with pytest.raises(ValueError, match="names a tracker twice"):
        tracker_names(["wandb", "wandb"])


def test_a_shard_is_not_logged(tmp_path):
    with pytest.raises(ValueError, match="not a shard's part"):
        rules_run("sample", limit=1, log_to="tensorboard", log_dir=str(tmp_path), shard=lambda groups: groups)
    assert not (tmp_path / "tensorboard").exists()


BAD = {
    "unknown tracker": (["--log-to", "mlflow"], "unknown tracker 'mlflow' (--log-to, log_to=): use trackio"),
    "log dir alone": (["--log-dir", "{t}/logs"], "--log-dir {t}/logs sets where --log-to writes"),
    "log dir is a file": (["--log-to", "tensorboard", "--log-dir", "{t}/data.jsonl"], "is a file, not a folder"),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_tracker_options_are_one_line_exit_2_before_any_work(case, tmp_path, capsys):
    extra, message = BAD[case]
    code, _out, err = outcome(run_args(tmp_path, *[e.format(t=tmp_path) for e in extra]), capsys)
    assert code == 2 and err.splitlines() == [f"gacc run: error: {err.split('error: ', 1)[1].strip()}"], err
    assert message.format(t=tmp_path) in err
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


@pytest.mark.parametrize("tracker", ["trackio", "tensorboard", "wandb"])
def test_a_missing_tracker_package_names_the_extra(tracker, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, tracker, None)  # what Python does for a package that is not installed
    code, _out, err = outcome(run_args(tmp_path, "--log-to", tracker), capsys)
    assert code == 2, err
    assert err.splitlines() == [
        f"gacc run: error: logging to {tracker} needs the `{tracker}` package, which is not installed: install "
        'the `trackers` extra with `pip install -e ".[trackers]"` in a checkout of gacc-hf'
    ]
    assert not (tmp_path / "out").exists()


def test_a_read_only_tracker_folder_is_refused_before_any_work(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    cmd = [
        sys.executable,
        "-m",
        "gacc_hf",
        *run_args(tmp_path, "--log-to", "tensorboard", "--log-dir", str(ro / "logs")),
    ]
    proc = run_read_only(ro, cmd)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"gacc run: error: tracker log folder (--log-dir) {ro}/logs is not writable ({ro}: Read-only file system)"
    ]
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


def test_trackio_imported_with_another_store_is_told_so(tmp_path):
    script = (
        "import json, os, sys; os.environ['TRACKIO_DIR'] = sys.argv[1]; import trackio\n"
        "from pathlib import Path; from gacc_hf.results.trackers.to_trackio import _module\n"
        "try:\n    _module(Path(sys.argv[2])); print(json.dumps('no error'))\n"
        "except ValueError as exc:\n    print(json.dumps(str(exc)))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    said = run_child(script, tmp_path, env, str(tmp_path / "a"), str(tmp_path / "b"))
    assert said.startswith(f"trackio was imported in this process with its store at {tmp_path / 'a'}; log to ")
    same = run_child(script, tmp_path, env, str(tmp_path / "b" / "trackio"), str(tmp_path / "b"))
    assert same == "no error"
