"""Data without ID columns: IDs derived from the content, the same in every run and file, said in one line;
a text column mapped as its own ID means the same; short-hash collisions and derived IDs equal to declared
ones refused naming both rows; `source` optional in both layouts; unknown flat columns named with the near
name. English and Chinese texts throughout."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pytest

from gacc_hf.cli import main
from gacc_hf.data import derived
from gacc_hf.data.fingerprint import fingerprint
from gacc_hf.data.loading import find_spec_problems, from_memory, load_any
from gacc_hf.data.schema import DataValidationError, validate
from tests.helpers.data import EN_TEXT, ZH_TEXT, hf_cache, write_jsonl

pytestmark = pytest.mark.usefixtures("hf_cache")
_ = hf_cache  # the fixture, imported for pytest
OWN = {"context": "document", "goal": "task", "question": "query", "references": "answer"}
OPTION = "context=document,goal=task,question=query,references=answer"

# the first thing many users have: texts, no IDs (English and Chinese)
ROWS = [
    {"document": EN_TEXT, "task": "Pack for the move", "query": "How many boxes may each person pack?",
     "answer": '["four", "4"]'},
    {"document": EN_TEXT, "task": "Pack for the move", "query": "When do old badges stop working?",
     "answer": "4 October"},
    {"document": ZH_TEXT, "task": "准备搬家", "query": "新工牌在哪里领取？", "answer": "一楼前台"},
]  # fmt: skip


def short(*parts: str) -> str:
    """The first 16 hex digits of the sha256 of the parts as a JSON list: the rule docs/data.md states."""
    return hashlib.sha256(json.dumps(list(parts), ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


def write_csv(path: Path, rows: list[dict]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_a_csv_without_ids_validates_and_loads_with_ids_from_its_content(tmp_path, capsys):
    path = write_csv(tmp_path / "own.csv", ROWS)
    assert main(["data", "validate", str(path), "--columns", OPTION]) == 0
    assert capsys.readouterr().err.count("derived from the content") == 1  # said in one line
    ds = load_any(path, columns=OWN)
    en_goal, zh_goal = f"goal-{short(EN_TEXT, 'Pack for the move')}", f"goal-{short(ZH_TEXT, '准备搬家')}"
    assert ds["context_id"] == [f"ctx-{short(EN_TEXT)}", f"ctx-{short(ZH_TEXT)}"]
    assert ds["goal_id"] == [en_goal, zh_goal]
    assert ds["source"] == ["", ""]
    assert ds[1]["questions"] == [
        {"question_id": f"q-{short(zh_goal, '新工牌在哪里领取？')}", "question": "新工牌在哪里领取？"}
    ]
    assert ds[0]["gold"][0]["references"] == ["four", "4"]
    assert [g.language_tag for g in validate(ds)] == ["en", "zh"]


def test_the_ids_are_the_same_in_every_file_and_order_and_a_text_mapped_as_its_own_id_means_the_same(tmp_path):
    from_csv = load_any(write_csv(tmp_path / "own.csv", ROWS), columns=OWN)
    jsonl = write_jsonl(tmp_path / "other.jsonl", ROWS[2:] + ROWS[:2])  # another file, the goals in another order
    again = load_any(jsonl, columns=OWN)
    assert sorted(again["goal_id"]) == sorted(from_csv["goal_id"])
    assert fingerprint(validate(again)) == fingerprint(validate(from_csv))
    own_id = {**OWN, "context_id": "document", "goal_id": "task", "question_id": "query"}
    assert load_any(tmp_path / "own.csv", columns=own_id).to_list() == from_csv.to_list()
    renamed = [{schema: row[column] for schema, column in OWN.items()} for row in ROWS]
    named = load_any(write_csv(tmp_path / "named.csv", renamed))  # the schema's names: no option at all
    assert named.to_list() == from_csv.to_list()
    assert validate(from_memory(renamed)) == validate(from_csv)  # in memory as from a file


def test_derived_ids_are_row_content_bound_into_the_fingerprint(tmp_path):
    ds = load_any(write_csv(tmp_path / "own.csv", ROWS), columns=OWN)
    declared = write_jsonl(tmp_path / "declared.jsonl", ds.to_list())  # the same ids, written out
    assert fingerprint(validate(load_any(declared))) == fingerprint(validate(ds))
    other = [{**r, "context_id": r["context_id"] + "x"} for r in ds.to_list()]
    assert fingerprint(validate(other)) != fingerprint(validate(ds))


def test_the_line_is_quiet_when_the_data_declares_its_ids(tmp_path, capsys):
    declared = [{**r, "context_id": f"c{i // 2}", "goal_id": f"g{i // 2}", "question_id": f"q{i}"}
                for i, r in enumerate(ROWS)]  # fmt: skip
    path = write_csv(tmp_path / "ids.csv", declared)
    assert load_any(path, columns=OWN)["goal_id"] == ["g0", "g1"]
    assert main(["data", "validate", str(path), "--columns", OPTION]) == 0
    assert "derived" not in capsys.readouterr().err
    no_context_id = write_csv(
        tmp_path / "some.csv", [{k: v for k, v in r.items() if k != "context_id"} for r in declared]
    )
    assert main(["data", "validate", str(no_context_id), "--columns", OPTION]) == 0  # that ID only is derived
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no context_id in the data: derived from the content" in err
    assert main(["data", "validate", str(path), "--columns", f"{OPTION},context_id=document"]) == 2  # which one?
    assert (
        "field 'context_id': the row has 'context_id', which columns derives from 'document'" in capsys.readouterr().out
    )


def _colliding(texts: list[str], width: int) -> tuple[str, str]:
    """Two of the texts whose context hashes share their first `width` hex digits (found by hashlib alone)."""
    first: dict[str, str] = {}
    for text in texts:
        head = short(text)[:width]
        if head in first:
            return first[head], text
        first[head] = text
    raise AssertionError("no collision among the texts")


@pytest.mark.parametrize("stem", ["Badges stop working on day", "新工牌在第几天失效"])
def test_two_texts_with_one_short_hash_are_refused_naming_both_rows(stem, tmp_path, monkeypatch):
    real = derived.ID_HEX
    monkeypatch.setattr(derived, "ID_HEX", 1)  # 16 values: a collision is certain among 17 texts
    one, two = _colliding([f"{stem} {n}." for n in range(17)], 1)
    rows = [{**ROWS[0], "document": one}, {**ROWS[2], "document": two}]
    with pytest.raises(DataValidationError) as err:
        load_any(write_csv(tmp_path / "clash.csv", rows), columns=OWN)
    problem = next(p for p in err.value.problems if p.field == "document")
    assert (Path(problem.file).name, problem.row, problem.line) == ("clash.csv", 1, 3)
    said = f"its derived context_id 'ctx-{short(two)[:1]}' is also the one derived from a different context in row 0"
    assert problem.message.startswith(said) and "two texts share a short hash" in problem.message
    monkeypatch.setattr(derived, "ID_HEX", real)
    assert len(load_any(tmp_path / "clash.csv", columns=OWN)) == 2  # at the real width they differ


def test_a_derived_id_equal_to_a_declared_one_is_refused(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    zh_goal = f"goal-{short(ZH_TEXT, '准备搬家')}"  # what the test split derives for its Chinese goal
    declared = [{**ROWS[0], "context_id": "en-1", "goal_id": zh_goal, "question_id": "q1"}]
    write_csv(data / "train.csv", declared)
    write_csv(data / "test.csv", ROWS[2:])
    problems = find_spec_problems(data, columns=OWN)
    (problem,) = problems
    assert (Path(problem.file).name, problem.row, problem.field) == ("test.csv", 0, "goal_id")
    assert f"its goal_id {zh_goal!r}, derived from its content, equals the goal_id declared in" in problem.message
    assert "train.csv row 0" in problem.message and "declare goal_ids in every split or in none" in problem.message
    write_csv(data / "train.csv", [{**declared[0], "goal_id": "en-1/g1"}])
    assert find_spec_problems(data, columns=OWN) == []


def test_the_same_question_twice_under_one_goal_is_named_as_such(tmp_path):
    rows = [*ROWS, ROWS[2]]  # the Chinese question again
    with pytest.raises(DataValidationError) as err:
        load_any(write_csv(tmp_path / "twice.csv", rows), columns=OWN)
    (problem,) = err.value.problems
    assert (problem.row, problem.field) == (3, "query")
    assert problem.message.startswith("the same question as row 2, under the same goal")


def test_grouped_rows_without_ids_or_source_load_with_them_derived(tmp_path):
    rows = [
        {"context": EN_TEXT, "goal": "Pack for the move",
         "questions": [{"question_id": "q1", "question": "How many boxes?"}],
         "gold": [{"question_id": "q1", "references": ["four"]}]},
        {"context": ZH_TEXT, "goal": "准备搬家", "questions": [{"question_id": "q2", "question": "新工牌在哪里领取？"}],
         "gold": [{"question_id": "q2", "references": ["一楼前台"]}]},
    ]  # fmt: skip
    ds = load_any(write_jsonl(tmp_path / "grouped.jsonl", rows))
    assert ds["context_id"] == [f"ctx-{short(EN_TEXT)}", f"ctx-{short(ZH_TEXT)}"]
    assert ds["goal_id"][1] == f"goal-{short(ZH_TEXT, '准备搬家')}" and ds["source"] == ["", ""]
    assert main(["data", "validate", str(tmp_path / "grouped.jsonl")]) == 0
    rows[1]["source"] = "memos"  # declared in one row: kept there, empty in the other
    assert load_any(write_jsonl(tmp_path / "one.jsonl", rows))["source"] == ["", "memos"]


@pytest.mark.parametrize("row", [0, 2])
def test_a_misspelled_optional_flat_column_is_named_with_the_near_name(row, tmp_path, capsys):
    rows = [{**r, "langauge": "zh" if i == 2 else "en"} for i, r in enumerate(ROWS)]
    path = write_csv(tmp_path / "typo.csv", rows)
    if row == 2:  # a JSONL row may have a column the others lack: named in that row
        path = write_jsonl(tmp_path / "typo.jsonl", [ROWS[0], ROWS[1], rows[2]])
    with pytest.raises(DataValidationError) as err:
        load_any(path, columns=OWN)
    (problem,) = err.value.problems
    assert (problem.row, problem.field) == (row, "langauge")
    assert problem.message.startswith("unknown column (did you mean 'language'?); the flat layout has")
    assert main(["data", "validate", str(path), "--columns", OPTION]) == 2
    assert "'langauge': unknown column (did you mean 'language'?)" in capsys.readouterr().out
    fixed = [{**r, "language": "zh" if i == 2 else "en"} for i, r in enumerate(ROWS)]
    assert [g.language for g in validate(load_any(write_csv(tmp_path / "ok.csv", fixed), columns=OWN))] == ["en", "zh"]


def test_grouped_rows_with_one_short_hash_are_refused_by_every_entry(tmp_path, monkeypatch):
    from gacc_hf.data.columns import to_schema_rows

    real = derived.ID_HEX
    monkeypatch.setattr(derived, "ID_HEX", 1)
    one, two = _colliding([f"搬家通知 {n}。" for n in range(17)], 1)
    rows = [
        {"context": text, "goal": "准备搬家", "questions": [{"question_id": f"q{i}", "question": "几号搬家？"}],
         "gold": [{"question_id": f"q{i}", "references": ["四号"]}]}
        for i, text in enumerate([one, two])
    ]  # fmt: skip
    with pytest.raises(DataValidationError) as err:
        to_schema_rows(rows)
    assert {(p.row, p.field) for p in err.value.problems} >= {(1, "context")}
    with pytest.raises(DataValidationError, match="row 1, line 2, field 'context': its derived context_id"):
        load_any(write_jsonl(tmp_path / "grouped.jsonl", rows))
    monkeypatch.setattr(derived, "ID_HEX", real)
    assert [r["context_id"] for r in to_schema_rows(rows)] == [f"ctx-{short(one)}", f"ctx-{short(two)}"]


def test_an_id_some_rows_declare_is_missing_from_the_others(tmp_path):
    rows = [{**ROWS[0], "goal_id": "en/g1"}, ROWS[2]]  # the Chinese row lacks goal_id
    with pytest.raises(DataValidationError) as err:
        load_any(write_jsonl(tmp_path / "some.jsonl", rows), columns=OWN)
    (problem,) = err.value.problems
    assert (problem.row, problem.field) == (1, "goal_id")
    assert problem.message == "missing column (other rows have goal_id: give it in every row, or in none to derive it)"
    rows[1]["goal_id"] = "zh/g1"
    assert load_any(write_jsonl(tmp_path / "all.jsonl", rows), columns=OWN)["goal_id"] == ["en/g1", "zh/g1"]
