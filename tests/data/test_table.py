"""CSV and TSV files: read like Parquet (the same groups), every cell kept as the text written, problems named by
the line a quoted cell spanning several lines leaves them on, and unreadable tables refused in one line."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from gacc_hf.cli import main
from gacc_hf.data.loading import find_spec_problems, load_any
from gacc_hf.data.schema import DataSourceError, DataValidationError, validate
from gacc_hf.data.table import record_lines
from tests.helpers.data import FLAT_ROWS, flat_rows, hf_cache, write_parquet

pytestmark = pytest.mark.usefixtures("hf_cache")
_ = hf_cache  # the fixture, imported for pytest
SEPARATORS = {".csv": ",", ".tsv": "\t"}


def write_table(path: Path, rows: list[dict], sep: str = ",") -> Path:
    """Rows as a CSV/TSV file by the standard library (not the code under test); a list cell as a JSON list."""
    path.parent.mkdir(parents=True, exist_ok=True)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), delimiter=sep, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: json.dumps(v, ensure_ascii=False) if isinstance(v, list) else v for k, v in row.items()})
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", SEPARATORS)
def test_a_table_reads_like_parquet(suffix, tmp_path):
    listed = [
        {**r, "references": r["references"] if isinstance(r["references"], list) else [r["references"]]}
        for r in flat_rows()
    ]
    parquet = load_any(write_parquet(tmp_path / "flat.parquet", listed))
    table = load_any(write_table(tmp_path / f"flat{suffix}", flat_rows(), SEPARATORS[suffix]))
    assert table.to_list() == parquet.to_list()
    assert [g.language_tag for g in validate(table)] == ["en", "zh"]
    assert find_spec_problems(tmp_path / f"flat{suffix}") == []


def test_every_cell_stays_the_text_written(tmp_path):
    rows = flat_rows()
    rows[0] |= {"question_id": "007", "references": "NA"}
    rows[2] |= {"references": "null"}
    rows[3] |= {"references": "无"}
    for row in rows:
        row["source"] = ""  # an empty cell: the empty string, not a missing value
    groups = validate(load_any(write_table(tmp_path / "flat.csv", rows)))
    assert [q.question_id for g in groups for q in g.questions] == ["007", "q2", "q3", "q4"]
    assert [q.references for g in groups for q in g.questions] == [("NA",), ("4 October",), ("null",), ("无",)]
    assert {g.source for g in groups} == {""}


def test_problems_name_the_line_a_row_starts_on(tmp_path):
    rows = flat_rows()  # every row's context has two line breaks: its quoted cell spans three lines
    rows[1]["question"] = ""
    rows[3]["question"] = " "
    path = write_table(tmp_path / "flat.csv", rows)
    # header: line 1; row 0: lines 2-4; row 1: lines 5-7; row 2: lines 8-10; row 3: lines 11-13
    assert record_lines(path.read_text(encoding="utf-8")) == [1, 2, 5, 8, 11]
    with pytest.raises(DataValidationError) as err:
        load_any(path)
    assert {(p.row, p.line, p.field) for p in err.value.problems} == {(1, 5, "question"), (3, 11, "question")}


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("twice.csv", "question,question\na,b\n", "the header names the column(s) 'question' twice"),
        (
            "wide.tsv",
            "a\tb\n1\t2\n1\t2\t3\n",
            "not a readable TSV file: Error tokenizing data. C error: Expected 2 fields in line 3, saw 3",
        ),
        ("latin1.csv", "question\ncaf\xe9\n", "not UTF-8 text (invalid continuation byte at byte 12)"),
        ("quote.csv", 'a,b\n1,"2\n', "not a readable CSV file"),
    ],
)
def test_an_unreadable_table_is_one_line_naming_the_file(name, text, message, tmp_path, capsys):
    path = tmp_path / name
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(DataSourceError, match=f"^{path}: .*") as err:
        load_any(path)
    assert message in str(err.value)
    assert main(["data", "validate", str(path)]) == 2
    out = capsys.readouterr()
    assert out.err.count("\n") == 1 and message in out.err and "Traceback" not in out.err


def test_a_table_in_a_folder_is_one_split_with_the_jsonl_files(tmp_path):
    write_table(tmp_path / "data" / "train.csv", FLAT_ROWS[:2])
    write_table(tmp_path / "data" / "test.tsv", FLAT_ROWS[2:], "\t")
    assert len(load_any(tmp_path / "data", split="train")) == 1
    assert validate(load_any(tmp_path / "data", split="test"))[0].language_tag == "zh"


@pytest.mark.parametrize("ending", ["\r", "\r\n"])
def test_old_mac_line_ends_read_like_newlines(ending, tmp_path, capsys):
    rows = flat_rows()  # English and Chinese, each context a quoted cell spanning three lines
    newline = write_table(tmp_path / "lf.csv", rows)
    other = tmp_path / "other.csv"
    other.write_bytes(newline.read_bytes().replace(b"\n", ending.encode()))
    read = load_any(other).to_list()
    expected = load_any(newline).to_list()
    for row in expected:  # a quoted cell keeps the line ends written in it
        row["context"] = row["context"].replace("\n", ending)
    assert read == expected and len(read) == 2
    assert main(["data", "validate", str(other)]) == 0
    rows[3]["question"] = " "  # row 3 starts on line 11 (header 1, three lines a row)
    broken = write_table(tmp_path / "broken.csv", rows)
    broken.write_bytes(broken.read_bytes().replace(b"\n", ending.encode()))
    assert main(["data", "validate", str(broken)]) == 2
    err = capsys.readouterr().out + capsys.readouterr().err
    assert "row 3 (goal_id='zh-1/g1'), line 11, field 'question'" in err
