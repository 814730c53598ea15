"""The results folder on disk: round trip, atomic files, schema versions, missing and truncated files."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from gacc_hf.report import rebuild
from gacc_hf.results import SCHEMA_VERSION, ResultsError, read_folder, write_atomic


def test_round_trip_gives_back_the_rows_of_the_run(run):
    out, result = run
    back = read_folder(out)
    assert back.answers == result.answers
    assert back.memories == result.memories
    assert back.scores == result.scores
    assert back.payload["schema_version"] == SCHEMA_VERSION == 2


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
    assert (old / "report.md").is_file() and (old / "scores.png").is_file()


def test_schema_1_folder_without_its_rows_is_refused(run, tmp_path):
    old = _schema_1_folder(tmp_path / "old", run[1])
    doc = json.loads((old / "results.json").read_text())
    del doc["answers"]
    (old / "results.json").write_text(json.dumps(doc))
    with pytest.raises(ResultsError, match=r"results\.json: missing field\(s\) answers"):
        read_folder(old)
