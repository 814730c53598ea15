"""The results folder on disk: round trip, atomic whole-folder writes under kills, kept runs, schema versions,
missing and truncated files."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from gacc_hf.cli import main
from gacc_hf.results.atomic import check_output_dir, new_run_dir, point_latest, recover, write_atomic
from gacc_hf.results.folder import read_folder, rebuild, verify_folder, write_results
from gacc_hf.results.layout import SCHEMA_VERSION, ResultsError
from tests.helpers.paths import FIXTURES


def test_round_trip_gives_back_the_rows_of_the_run(run):
    out, result = run
    back = read_folder(out)
    assert back.answers == result.answers
    assert back.memories == result.memories
    assert back.scores == result.scores
    assert back.payload["schema_version"] == SCHEMA_VERSION == 5


def test_results_json_holds_no_rows_and_records_the_parquet_files(run):
    out, result = run
    doc = json.loads((out / "results.json").read_text())
    assert "answers" not in doc and "memories" not in doc
    assert doc["seed"] == 0
    assert doc["files"]["answers"]["rows"] == len(result.answers) == 10 * 3 * 4 * 2 * 3 * 3
    assert doc["files"]["memories"]["rows"] == len(result.memories) == 10 * 3 * 2 * 3 * 3
    assert doc["tokenizer"]["identity_verified"] is True
    for key in ("config", "versions", "git_revision", "integrity", "calls", "scores", "gaps"):
        assert key in doc


def test_all_null_columns_keep_their_types(run):
    schema = pq.read_schema(run[0] / "answers.parquet")
    assert str(schema.field("error").type) == "string"  # a clean run has no error, the column is still text
    assert str(schema.field("correct").type) == "bool"
    references = schema.field("references").type
    assert str(schema.field("question").type) == "string" and str(references.value_type) == "string"
    assert str(pq.read_schema(run[0] / "memories.parquet").field("memory").type) == "string"


def test_the_texts_a_compressor_kept_and_was_asked_are_in_the_folder(run):
    from gacc_hf.data.synthetic import synthetic

    back = read_folder(run[0])
    gold = {
        q["question_id"]: (q["question"], g["references"])
        for row in synthetic(seed=0, contexts=10)
        for q, g in zip(row["questions"], row["gold"], strict=True)
    }
    assert all((a["question"], a["references"]) == gold[a["question_id"]] for a in back.answers)
    truncate = next(m for m in back.memories if m["compressor"] == "truncate" and m["budget"] > 0)
    assert truncate["memory"] and hashlib.sha256(truncate["memory"].encode()).hexdigest() == truncate["memory_sha256"]


def test_atomic_write_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "f.bin"
    write_atomic(target, b"old")
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["f.bin"]


def test_missing_folder_or_file_is_named(folder, tmp_path):
    with pytest.raises(ResultsError, match="no such directory"):
        read_folder(tmp_path / "nowhere")
    (folder / "memories.parquet").unlink()
    with pytest.raises(ResultsError, match=r"memories\.parquet: missing"):
        read_folder(folder)
    (folder / "results.json").unlink()
    with pytest.raises(ResultsError, match=r"results\.json: missing"):
        read_folder(folder)


def test_truncated_files_are_named(folder):
    data = (folder / "answers.parquet").read_bytes()
    (folder / "answers.parquet").write_bytes(data[: len(data) // 2])
    with pytest.raises(ResultsError, match=r"answers\.parquet: content does not match"):
        read_folder(folder)
    text = (folder / "results.json").read_text()
    (folder / "results.json").write_text(text[: len(text) // 2])
    with pytest.raises(ResultsError, match=r"results\.json: not valid JSON"):
        read_folder(folder)


def _set_schema(folder, version):
    doc = json.loads((folder / "results.json").read_text())
    if version is None:
        del doc["schema_version"]
    else:
        doc["schema_version"] = version
    (folder / "results.json").write_text(json.dumps(doc))


def test_unknown_and_newer_schemas_are_refused(folder):
    _set_schema(folder, 99)
    with pytest.raises(ResultsError, match="newer gacc-hf"):
        read_folder(folder)
    _set_schema(folder, None)
    with pytest.raises(ResultsError, match="no schema_version"):
        read_folder(folder)
    _set_schema(folder, "2")
    with pytest.raises(ResultsError, match="unknown schema_version '2'"):
        read_folder(folder)


def _schema_1_folder(path, result):
    """The folder layout gacc-hf wrote before schema 2: one results.json with the rows embedded."""
    path.mkdir()
    doc = {
        "schema_version": 1,
        "config": result.config,
        "versions": {"python": "3.11"},
        "git_revision": None,
        "tokenizer": result.tokenizer,
        "integrity": result.integrity,
        "calls": result.calls,
        "scores": result.scores,
        "errors": result.errors,
        "memories": result.memories,
        "answers": result.answers,
    }
    (path / "results.json").write_text(json.dumps(doc, indent=1))
    return path


def test_schema_1_folder_is_read_and_upgraded_by_rebuild(run, tmp_path):
    _, result = run
    old = _schema_1_folder(tmp_path / "old", result)
    back = read_folder(old)
    assert back.answers == result.answers and back.memories == result.memories
    assert back.payload["seed"] == result.config["seed"]
    rebuild(old)
    doc = json.loads((old / "results.json").read_text())
    assert doc["schema_version"] == SCHEMA_VERSION and "answers" not in doc
    assert doc["scores"] == result.scores
    assert read_folder(old).answers == result.answers
    assert (old / "report.md").is_file() and (old / "scores.png").is_file() and (old / "report.html").is_file()


def test_schema_1_folder_without_its_rows_is_refused(run, tmp_path):
    old = _schema_1_folder(tmp_path / "old", run[1])
    doc = json.loads((old / "results.json").read_text())
    del doc["answers"]
    (old / "results.json").write_text(json.dumps(doc))
    with pytest.raises(ResultsError, match=r"results\.json: missing field\(s\) answers"):
        read_folder(old)


# ---- atomic, kept folders ----------------------------------------------------------------------------------

KILLER = """
import os, pickle, shutil, signal, sys
from gacc_hf.results import folder, plots

out, pickled, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
steps = 0


def step():
    global steps
    steps += 1
    if steps == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)


def before(fn):
    def wrapped(*args, **kwargs):
        step()
        return fn(*args, **kwargs)

    return wrapped


write = before(folder.write_atomic)
folder.write_atomic = plots.write_atomic = write  # before each file, so between files
os.rename = before(os.rename)  # before, between and after the two renames of a replace
shutil.rmtree = before(shutil.rmtree)  # before the previous folder is deleted
with open(pickled, "rb") as fh:
    folder.write_results(pickle.load(fh), out)
print(steps)
"""


def _snapshot(path):
    """name -> bytes of the folder a reader finds at `path` (its aside copy when caught between renames)."""
    root = path if path.is_dir() else path.with_name(f".{path.name}.old")
    read_folder(path)  # checksums and schema hold
    return {p.name: p.read_bytes() for p in sorted(root.iterdir())}


def test_a_kill_at_any_point_of_a_write_leaves_the_previous_or_the_new_complete_folder(tmp_path):
    from tests.helpers.results import real_run

    previous = tmp_path / "previous"
    real_run(previous, tmp_path / "cache", contexts=3)  # own, none, cross: has gaps.png
    new = real_run(tmp_path / "scratch", tmp_path / "cache", compressor="truncate", contexts=3, conditions=("own",))
    pickled = tmp_path / "new.pkl"
    pickled.write_bytes(pickle.dumps(new))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path.cwd()), *sys.path])}
    old = _snapshot(previous)
    seen, kill_at = [], 1
    while True:
        out = tmp_path / "work" / "run"
        shutil.rmtree(out.parent, ignore_errors=True)
        shutil.copytree(previous, out)
        child = subprocess.run(
            [sys.executable, "-c", KILLER, str(out), str(pickled), str(kill_at)], env=env, capture_output=True
        )
        if child.returncode == 0:
            break
        assert child.returncode == -signal.SIGKILL, child.stderr.decode()
        seen.append((kill_at, _snapshot(out)))
        recover(out)  # what the next writer does first
        seen.append((kill_at, _snapshot(out)))
        assert [p.name for p in out.parent.iterdir()] == ["run"]  # no aside copy, no temporary folder left
        kill_at += 1
    fresh = _snapshot(out)
    assert "gaps.png" in old and "gaps.png" not in fresh  # the new run has no gaps: no stale file survives
    # every step was a kill point: 6 files (3 data files, report.md, scores.png, outcomes.png), 2 renames, 1 deletion
    assert kill_at - 1 == 6 + 2 + 1
    states = ["old" if snap == old else "new" if snap == fresh else f"a mix, killed at {k}" for k, snap in seen]
    assert set(states) == {"old", "new"}, states


def test_a_folder_caught_between_the_renames_is_read_from_its_aside_copy_and_recovered(run, tmp_path):
    out = tmp_path / "run"
    aside = tmp_path / ".run.old"
    shutil.copytree(run[0], aside)
    assert read_folder(out).scores == run[1].scores  # a reader finds the previous run
    dead = tmp_path / ".run.tmp-999999999-abcd"  # a killed writer's staging folder (no such pid)
    live = tmp_path / f".run.tmp-{os.getpid()}-abcd"  # this process is alive: its folder is kept
    dead.mkdir(), live.mkdir()
    recover(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == [live.name, "run"]
    assert read_folder(out).scores == run[1].scores
    shutil.copytree(run[0], aside)  # both present: the replace had finished, the aside copy is garbage
    recover(out)
    assert not aside.exists() and read_folder(out).scores == run[1].scores


def test_a_folder_that_is_not_a_results_folder_is_never_replaced(run, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(ResultsError, match="not a results folder"):
        write_results(run[1], mine)
    with pytest.raises(ResultsError, match="not a results folder"):
        check_output_dir(mine, overwrite=True)
    assert (mine / "notes.txt").read_text() == "keep me"
    check_output_dir(tmp_path / "empty", overwrite=False)  # a new or empty folder is fine
    check_output_dir(run[0], overwrite=True)
    with pytest.raises(ResultsError, match=r"holds another run.*--overwrite"):
        check_output_dir(run[0], overwrite=False)


def test_run_folders_are_named_by_time_and_config_and_latest_moves_in_one_step(tmp_path):
    started = datetime(2026, 12, 1, 11, 42, 10, tzinfo=UTC)
    first = new_run_dir(started, ["data.jsonl", "truncate+goal-lines"], tmp_path)
    assert first == tmp_path / "20261201T114210Z-data.jsonl-truncate+goal-lines"
    first.mkdir()
    second = new_run_dir(started, ["data.jsonl", "truncate+goal-lines"], tmp_path)
    assert second.name == first.name + "-2"  # same second, same config: still a folder of its own
    second.mkdir()
    assert point_latest(first).resolve() == first
    assert point_latest(second).resolve() == second
    assert os.readlink(tmp_path / "latest") == second.name  # relative: the runs folder can move
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([first.name, second.name, "latest"])


def test_a_real_latest_folder_of_an_older_version_is_kept(tmp_path):
    (tmp_path / "latest").mkdir()
    (tmp_path / "latest" / "results.json").write_text("{}")
    new = tmp_path / "20261201T000000Z-x"
    new.mkdir()
    point_latest(new)
    (kept,) = [p for p in tmp_path.iterdir() if p.name.endswith("-earlier")]
    assert (kept / "results.json").read_text() == "{}"
    assert (tmp_path / "latest").resolve() == new


RUN_ARGS = ["--data", "synthetic", "--compressors", "truncate", "--reader", "fields", "--judge", "exact"]
RUN_ARGS += ["--ratios", "0.1", "--conditions", "own", "--bootstrap", "0", "--no-progress"]


def test_each_cli_run_is_kept_with_its_command_line_and_latest_is_the_newest(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["run", *RUN_ARGS, "--cache-dir", "cache"]
    assert main(argv) == 0
    assert main([*argv, "--seed", "1"]) == 0
    runs = sorted(p for p in (tmp_path / "runs").iterdir() if not p.is_symlink())
    assert len(runs) == 2 and all(p.name.endswith("-synthetic-truncate") or p.name[-2:] == "-2" for p in runs)
    latest = read_folder(tmp_path / "runs" / "latest")
    assert latest.payload["command"] == ["gacc", *argv, "--seed", "1"]
    assert latest.payload["seed"] == 1 and read_folder(runs[0]).payload["seed"] == 0


def test_an_explicit_output_dir_holding_a_run_needs_overwrite_before_any_work(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["run", *RUN_ARGS, "--cache-dir", "cache", "--output-dir", "out"]
    assert main(argv) == 0
    before = (tmp_path / "out" / "results.json").read_bytes()
    capsys.readouterr()
    bad_data = [a if a != "synthetic" else "no-such-data.jsonl" for a in argv]  # would fail if loaded
    assert main(bad_data) == 2
    err = capsys.readouterr().err
    assert "out: holds another run" in err and "--overwrite" in err and "no-such-data" not in err
    assert (tmp_path / "out" / "results.json").read_bytes() == before
    assert main([*argv, "--seed", "3", "--overwrite"]) == 0
    assert read_folder(tmp_path / "out").payload["seed"] == 3
    assert not (tmp_path / "runs").exists()  # an explicit folder does not move runs/latest
    config = (tmp_path / "out" / "config.yaml").read_bytes()  # written inside the folder before it moved in
    assert "seed: 3" in config.decode()
    assert main(["report", "out"]) == 0  # a rebuild keeps the run's own files
    assert (tmp_path / "out" / "config.yaml").read_bytes() == config


def test_rebuild_through_the_latest_symlink_replaces_the_folder_it_points_at(run, tmp_path):
    target = shutil.copytree(run[0], tmp_path / "20261201T000000Z-x")
    point_latest(target)
    (target / "report.md").unlink()
    rebuild(tmp_path / "latest")
    assert (tmp_path / "latest").is_symlink() and (target / "report.md").read_bytes() == (
        run[0] / "report.md"
    ).read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["20261201T000000Z-x", "latest"]


def _bilingual_copy(tmp_path, edit):
    folder = tmp_path / "bilingual"
    shutil.copytree(Path(__file__).parents[2] / "docs" / "results" / "bilingual", folder)
    payload = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    edit(payload)
    (folder / "results.json").write_text(json.dumps(payload, ensure_ascii=False, indent=2), encoding="utf-8")
    return folder


def _drop_zh(payload):
    del payload["config"]["data"]["languages"]["zh"]


def _swap(payload):
    languages = payload["config"]["data"]["languages"]
    payload["config"]["data"]["languages"] = {"en": languages["zh"], "zh": languages["en"]}


EDITS = {
    "zh removed from the config": (_drop_zh, "the config records languages [en] but the answers have [en, zh]"),
    "the languages' counts swapped": (_swap, "the config records 84 en questions, the answers 155"),
    "zh rows removed from scores_by_language": (
        lambda p: p.update(scores_by_language=[s for s in p["scores_by_language"] if s["language"] != "zh"]),
        "scores_by_language cover other cells than those derived from answers.parquet",
    ),
}


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_report_and_publish_refuse_languages_that_disagree_with_the_answers(edit, tmp_path, capsys):
    change, message = EDITS[edit]
    folder = _bilingual_copy(tmp_path, change)
    assert main(["report", str(folder)]) == 2
    assert message in capsys.readouterr().err
    publish = ["publish", str(folder), "--repo-id", "me/model", "--compressor", "full-context", "--dry-run"]
    assert main(publish) == 2
    assert message in capsys.readouterr().err


def test_the_recorded_bilingual_folder_has_languages_that_agree(tmp_path, capsys):
    folder = _bilingual_copy(tmp_path, lambda p: None)
    assert main(["report", str(folder)]) == 0


def test_scores_by_language_left_out_are_derived_again_from_the_answers(tmp_path):
    folder = _bilingual_copy(tmp_path, lambda p: p.pop("scores_by_language"))
    recorded = Path(__file__).parents[2] / "docs" / "results" / "bilingual"
    assert main(["report", str(folder)]) == 0
    recorded_report = (recorded / "report.md").read_text(encoding="utf-8")  # written at schema 4, now rebuilt at 5
    schema = "- results schema: {};"
    assert recorded_report.count(schema.format(4)) == 1
    assert (folder / "report.md").read_text(encoding="utf-8") == recorded_report.replace(
        schema.format(4), schema.format(5)
    )
    recorded_rows = json.loads((recorded / "results.json").read_text(encoding="utf-8"))["scores_by_language"]
    assert verify_folder(folder).payload["scores_by_language"] == recorded_rows


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("name", ["main", "bilingual"])
def test_gacc_report_upgrades_a_schema_2_folder_to_outcomes_and_reading_aids(name, tmp_path):
    """The main job's and the bilingual run's folders as recorded before answers had an outcome (schema 2)."""
    old = FIXTURES / "schema2" / name
    assert json.loads((old / "results.json").read_text())["schema_version"] == 2
    folder = tmp_path / "run"
    shutil.copytree(old, folder)
    memories = read_folder(folder).memories
    assert main(["report", str(folder)]) == 0
    doc = json.loads((folder / "results.json").read_text())
    assert doc["schema_version"] == SCHEMA_VERSION == 5 and doc["outcomes"]
    assert (folder / "config.yaml").read_bytes() == (old / "config.yaml").read_bytes()
    after = pq.read_table(folder / "answers.parquet").to_pylist()
    expected = {(True, True): "right", (True, False): "guessed", (False, True): "missed", (False, False): "lost"}
    assert [a["outcome"] for a in after] == [expected[(a["correct"], a["evidence"])] for a in after]
    assert [{k: v for k, v in a.items() if k != "outcome"} for a in after] == pq.read_table(
        old / "answers.parquet"
    ).to_pylist()
    assert read_folder(folder).memories == memories and (folder / "outcomes.png").is_file()
    assert "## Outcomes" in (folder / "report.md").read_text()
    upgraded = _files(folder)
    assert main(["report", str(folder)]) == 0 and _files(folder) == upgraded  # a second rebuild changes nothing


def test_an_upgraded_bilingual_folder_counts_outcomes_per_language(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(FIXTURES / "schema2" / "bilingual", folder)
    rebuild(folder)
    doc = json.loads((folder / "results.json").read_text())
    after = pq.read_table(folder / "answers.parquet").to_pylist()
    for language in ("en", "zh"):
        rows = [a for a in after if a["language"] == language and a["condition"] == "full"]
        (row,) = [r for r in doc["outcomes_by_language"] if (r["language"], r["condition"]) == (language, "full")]
        assert row["right"] == sum(a["outcome"] == "right" for a in rows) / len(rows)
    assert (
        doc["retention"] == []
        and "Retention is undefined: the run has no closed condition." in (folder / "report.md").read_text()
    )


def test_a_folder_lacking_the_reading_aids_gets_them_from_gacc_report(folder):
    doc = json.loads((folder / "results.json").read_text())
    for key in ("outcomes", "retention", "auc"):
        del doc[key]
    (folder / "results.json").write_text(json.dumps(doc))
    assert "results.json" in [p.name for p in rebuild(folder)]
    back = json.loads((folder / "results.json").read_text())
    assert back["outcomes"] and back["auc"] and back["retention"]
    assert "results.json" not in [p.name for p in rebuild(folder)]  # nothing left to add: kept as it is
