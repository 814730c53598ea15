"""Flat data and column mappings: a null language, a stray grouped field, problems said in the user's own layout
(file, row, line, the data's column name), several references in one string, in-memory datasets mapped as files
are, and `gacc data validate` accepting what `gacc run` accepts. English and Chinese rows throughout."""

from __future__ import annotations

from pathlib import Path

import datasets
import pytest

from gacc_hf.cli import main
from gacc_hf.data.loading import find_spec_problems, from_memory, load_any
from gacc_hf.data.schema import DataValidationError, validate
from gacc_hf.run.benchmark import run_benchmark
from tests.helpers.data import flat_rows, hf_cache, write_jsonl

pytestmark = pytest.mark.usefixtures("hf_cache")
_ = hf_cache  # the fixture, imported for pytest

NAMES = {"context": "text", "question": "query", "references": "answers"}
RULES = {"compressor": "truncate", "reader": "fields", "judge": "exact", "conditions": ("own",), "ratios": 0.5}


def _where(problems) -> set[tuple[str, int, int | None, str]]:
    return {(Path(p.file).name, p.row, p.line, p.field) for p in problems}


def _listed(rows: list[dict], key: str = "answers") -> list[dict]:
    """The rows with every references value a list (what one Arrow column needs)."""
    return [{**r, key: r[key] if isinstance(r[key], list) else [r[key]]} for r in rows]


def test_a_null_language_in_a_flat_row_is_no_declaration(tmp_path):
    rows = flat_rows()
    rows[0]["language"] = None  # row 1 has no key at all: the two agree
    rows[2]["language"] = rows[3]["language"] = None
    groups = validate(load_any(write_jsonl(tmp_path / "flat.jsonl", rows)))
    assert [(g.language, g.language_tag) for g in groups] == [(None, "en"), (None, "zh")]  # detected
    rows[2]["language"] = rows[3]["language"] = "zh-Hans"
    groups = validate(load_any(write_jsonl(tmp_path / "tagged.jsonl", rows)))
    assert [(g.language, g.language_tag) for g in groups] == [
        (None, "en"),
        ("zh-Hans", "zh"),
    ]  # declared as given, scored as zh


def test_a_stray_questions_key_in_one_flat_row_is_named(tmp_path):
    rows = flat_rows()
    rows[2]["questions"] = [{"question_id": "q9", "question": "还有问题吗？"}]
    with pytest.raises(DataValidationError) as err:
        load_any(write_jsonl(tmp_path / "flat.jsonl", rows))
    (problem,) = err.value.problems
    assert _where([problem]) == {("flat.jsonl", 2, 3, "questions")}
    assert "a field of the grouped layout in a flat row" in str(problem)
    assert len(load_any(write_jsonl(tmp_path / "ok.jsonl", flat_rows()))) == 2  # without it: two goals


def test_flat_problems_name_the_flat_row_its_line_and_the_data_column(tmp_path):
    rows = flat_rows(**NAMES)
    rows[1]["answers"] = []  # English: no references
    rows[2]["text"] = rows[3]["text"] = ""  # Chinese: an empty context
    rows[3]["query"] = " "
    lines = [write_jsonl(tmp_path / "x.jsonl", [r]).read_text(encoding="utf-8") for r in rows]
    path = tmp_path / "flat.jsonl"
    path.write_text(lines[0] + lines[1] + "\n" + lines[2] + lines[3], encoding="utf-8")  # line 3 is blank
    with pytest.raises(DataValidationError) as err:
        load_any(path, columns=NAMES)
    assert _where(err.value.problems) == {
        ("flat.jsonl", 1, 2, "answers"),
        ("flat.jsonl", 2, 4, "text"),
        ("flat.jsonl", 3, 5, "query"),
    }
    assert f"{path}: row 3 (goal_id='zh-1/g1'), line 5, field 'query': must be a non-empty string" in str(err.value)


def test_problems_of_a_folder_of_flat_files_name_the_file_they_are_in(tmp_path):
    rows = flat_rows()
    rows[2]["question"] = ""
    write_jsonl(tmp_path / "data" / "a.jsonl", rows[:2])
    write_jsonl(tmp_path / "data" / "b.jsonl", rows[2:])
    with pytest.raises(DataValidationError) as err:
        load_any(tmp_path / "data")
    assert _where(err.value.problems) == {("b.jsonl", 0, 1, "question")}


def test_a_repeated_question_id_is_named_in_its_flat_row(tmp_path):
    rows = flat_rows()
    rows[2]["question_id"] = "Q2"  # differs from q2 (row 1) only by case
    rows[3]["question_id"] = "q1"  # the same as row 0
    with pytest.raises(DataValidationError) as err:
        load_any(write_jsonl(tmp_path / "flat.jsonl", rows))
    assert _where(err.value.problems) == {("flat.jsonl", 2, 3, "question_id"), ("flat.jsonl", 3, 4, "question_id")}
    text = str(err.value)
    assert "duplicate question_id, first seen in row 1 ('Q2' differs from 'q2' only by case" in text
    assert "duplicate question_id, first seen in row 0\n" in text + "\n"


def test_several_references_may_be_one_json_list_string(tmp_path):
    rows = flat_rows()
    rows[1]["references"] = '["4 October", "October 4"]'
    rows[3]["references"] = '["四个", "4 个"]'
    rows[2]["references"] = "[注] 一楼前台"  # not a JSON list: one reference, as written
    groups = validate(load_any(write_jsonl(tmp_path / "flat.jsonl", rows)))
    refs = [q.references for g in groups for q in g.questions]
    assert refs == [("four", "4"), ("4 October", "October 4"), ("[注] 一楼前台",), ("四个", "4 个")]


def test_columns_map_an_in_memory_dataset_as_they_map_a_file(tmp_path):
    rows = _listed(flat_rows(**NAMES))
    dataset = datasets.Dataset.from_list(rows)
    from_file = validate(load_any(write_jsonl(tmp_path / "flat.jsonl", rows), columns=NAMES))
    assert validate(from_memory(dataset, NAMES)) == from_file
    assert validate(from_memory(rows, NAMES)) == from_file  # a list of rows too
    result = run_benchmark(dataset, columns=NAMES, progress=False, **RULES)
    assert {a["goal_id"] for a in result.answers} == {"en-1/g1", "zh-1/g1"}
    grouped = load_any("sample")
    assert from_memory(grouped) is grouped  # the own layout: left as it is


def test_an_in_memory_flat_dataset_with_a_bad_row_names_it():
    rows = _listed(flat_rows(**NAMES))
    rows[3]["query"] = ""
    with pytest.raises(DataValidationError) as err:
        from_memory(datasets.Dataset.from_list(rows), NAMES)
    (problem,) = err.value.problems
    assert (problem.file, problem.row, problem.field) == ("the dataset", 3, "query")


def test_validate_accepts_the_save_to_disk_folders_run_accepts(tmp_path, capsys):
    rows = _listed(flat_rows(**NAMES))
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "saved"))
    columns = ",".join(f"{k}={v}" for k, v in NAMES.items())
    assert find_spec_problems(tmp_path / "saved", columns=NAMES) == []
    assert main(["data", "validate", str(tmp_path / "saved"), "--columns", columns]) == 0
    assert len(load_any(tmp_path / "saved", columns=NAMES)) == 2
    datasets.Dataset.from_list(_listed(flat_rows(), "references")).save_to_disk(str(tmp_path / "flat"))
    assert find_spec_problems(tmp_path / "flat") == [] and len(load_any(tmp_path / "flat")) == 2  # own names
    rows[2]["query"] = ""
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "bad"))
    with pytest.raises(DataValidationError) as err:
        load_any(tmp_path / "bad", columns=NAMES)
    assert find_spec_problems(tmp_path / "bad", columns=NAMES) == err.value.problems
    assert _where(err.value.problems) == {("bad [test]", 2, None, "query")}


def test_an_unknown_flat_column_is_named_as_a_grouped_one_is(tmp_path):
    rows = flat_rows()
    for row in rows:
        row["langauge"] = "en" if row["context_id"] == "en-1" else "zh"  # misspelled: never read as a language
    with pytest.raises(DataValidationError) as err:
        load_any(write_jsonl(tmp_path / "flat.jsonl", rows))
    (problem,) = err.value.problems  # named once, in the first row that has it
    assert _where([problem]) == {("flat.jsonl", 0, 1, "langauge")}
    assert "unknown column (did you mean 'language'?)" in problem.message
    for row in rows:
        row["language"] = row.pop("langauge")
    assert [g.language for g in validate(load_any(write_jsonl(tmp_path / "ok.jsonl", rows)))] == ["en", "zh"]
