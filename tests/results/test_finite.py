"""A results folder holds finite numbers only: a NaN or an infinity in `results.json` or in a float column of
its Parquet files is refused when read and when written, naming the file and the key (or row and column)."""

from __future__ import annotations

import hashlib
import json

import pytest

from gacc_hf import errors
from gacc_hf.cli import main
from gacc_hf.results.folder import read_folder
from gacc_hf.results.layout import ANSWER_TYPES, ANSWERS_FILE, RESULTS_FILE, ResultsError, json_bytes, parquet_bytes


@pytest.mark.parametrize(("literal", "shown"), [("NaN", "nan"), ("Infinity", "inf"), ("-1e999", "-inf")])
def test_a_non_finite_number_in_results_json_is_named_by_file_and_key(folder, capsys, literal, shown):
    doc = json.loads((folder / RESULTS_FILE).read_text(encoding="utf-8"))
    doc["scores"][1]["micro"] = "@@"
    text = json.dumps(doc, indent=1).replace('"@@"', literal)  # as a hand edit writes it
    (folder / RESULTS_FILE).write_text(text, encoding="utf-8")
    with pytest.raises(ResultsError, match=rf"{RESULTS_FILE}: scores\[1\]\.micro is {shown}, not a finite number"):
        read_folder(folder)
    assert main(["report", str(folder)]) == errors.BAD_INPUT
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and f"{folder / RESULTS_FILE}: scores[1].micro is {shown}" in err


def test_a_sound_folder_reads_and_rebuilds(folder, capsys):
    assert main(["report", str(folder)]) == errors.OK  # quiet: every number finite
    capsys.readouterr()


def test_a_non_finite_float_in_a_parquet_file_is_named_by_row_and_column(folder):
    run = read_folder(folder)
    rows = [dict(r) for r in run.answers]
    rows[3]["ratio"] = float("nan")
    data = parquet_bytes(rows, ANSWER_TYPES)
    (folder / ANSWERS_FILE).write_bytes(data)
    doc = json.loads((folder / RESULTS_FILE).read_text(encoding="utf-8"))
    doc["files"]["answers"]["sha256"] = hashlib.sha256(data).hexdigest()  # the file looks whole
    (folder / RESULTS_FILE).write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ResultsError, match=rf"{ANSWERS_FILE}: row 3, column ratio is nan, not a finite number"):
        read_folder(folder)


def test_results_json_is_never_written_with_a_non_finite_number():
    with pytest.raises(ValueError, match=r"^results\.json: usage\.cost\.total is inf, not a finite number"):
        json_bytes({"scores": [], "usage": {"cost": {"total": float("inf")}}})
    assert json_bytes({"usage": {"cost": {"total": 1e308}}}).startswith(b"{")  # quiet: large but finite
