"""Bad data files of many kinds, through the loader, the validator and `gacc data validate`.

Every case is either accepted because it is valid, or reported with the file, the row and the field at
fault (exactly those, counted by hand from the edit the case makes); none ends in a traceback.
"""

from __future__ import annotations

import copy
import json
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gacc_hf.cli import main
from gacc_hf.data.loading import find_spec_problems, load_any
from gacc_hf.data.schema import DataSourceError, DataValidationError
from tests.helpers.data import hf_cache, sample_rows, write_jsonl, write_parquet

pytestmark = pytest.mark.usefixtures("hf_cache")
_ = hf_cache  # the fixture, imported for pytest

BASE = sample_rows()[:5]  # rows 0-1: context pm-db-failover; rows 2-4: pm-cert-expiry
Where = set[tuple[str, int, str]]  # (file name, row in that file, field)


def _rows(change: Callable[[list[dict[str, Any]]], Any]) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        rows = copy.deepcopy(BASE)
        change(rows)
        path = folder / "data.jsonl"  # json.dumps escapes lone surrogates as \\udXXX, as a real file would
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="ascii")
        return path

    return make


def _bytes(change: Callable[[bytes], bytes]) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        path = write_jsonl(folder / "data.jsonl", BASE)
        path.write_bytes(change(path.read_bytes()))
        return path

    return make


def _line(index: int, change: Callable[[str], str]) -> Callable[[Path], Path]:
    """Replace the JSON text of one line (0-based) by `change(text)`: for what `json.dumps` cannot write."""

    def edit(data: bytes) -> bytes:
        lines = data.decode("utf-8").split("\n")
        lines[index] = change(lines[index])
        return "\n".join(lines).encode("utf-8", "surrogatepass")

    return _bytes(edit)


def _set(row: int, field: str, value: Any) -> Callable[[list[dict[str, Any]]], None]:
    def change(rows: list[dict[str, Any]]) -> None:
        rows[row][field] = value

    return change


def _del(row: int, field: str) -> Callable[[list[dict[str, Any]]], None]:
    return lambda rows: rows[row].pop(field)


def _q(row: int, j: int, **fields: Any) -> Callable[[list[dict[str, Any]]], None]:
    def change(rows: list[dict[str, Any]]) -> None:
        rows[row]["questions"][j].update(fields)

    return change


def _g(row: int, j: int, **fields: Any) -> Callable[[list[dict[str, Any]]], None]:
    def change(rows: list[dict[str, Any]]) -> None:
        rows[row]["gold"][j].update(fields)

    return change


def _both_contexts(row: int, text: str) -> Callable[[list[dict[str, Any]]], None]:
    """Set the context of every row sharing row `row`'s context (so only the text itself is at fault)."""

    def change(rows: list[dict[str, Any]]) -> None:
        cid = rows[row]["context_id"]
        for r in rows:
            if r["context_id"] == cid:
                r["context"] = text

    return change


def _rename_question(row: int, j: int, new: str) -> Callable[[list[dict[str, Any]]], None]:
    def change(rows: list[dict[str, Any]]) -> None:
        rows[row]["questions"][j]["question_id"] = rows[row]["gold"][j]["question_id"] = new

    return change


def _two_files(folder: Path) -> Path:
    write_jsonl(folder / "d" / "a.jsonl", BASE[:3])
    write_jsonl(folder / "d" / "b.jsonl", [BASE[2], *BASE[3:]])  # BASE[2] again: its goal and questions
    return folder / "d"


def _parquet_int_goal(folder: Path) -> Path:
    rows = copy.deepcopy(BASE)
    rows[1]["goal"] = 5
    for r in rows:
        if r is not rows[1]:
            r["goal"] = 6
    return write_parquet(folder / "data.parquet", rows)


def _truncated_parquet(folder: Path) -> Path:
    path = write_parquet(folder / "data.parquet", BASE)
    path.write_bytes(path.read_bytes()[:300])
    return path


def _suffix(folder: Path) -> Path:
    path = folder / "data.txt"
    path.write_text("{}\n")
    return path


def _empty_folder(folder: Path) -> Path:
    (folder / "empty").mkdir()
    (folder / "empty" / "notes.md").write_text("no data here")
    return folder / "empty"


BIG = "The quick brown fox jumps over the lazy dog. " * (5 * 2**20 // 45)  # a 5 MB context
NESTED = "[" * 100_000 + "]" * 100_000
DB = "pm-db-failover"

# name: (make the spec under a folder, None if valid / else the exact places at fault)
CASES: dict[str, tuple[Callable[[Path], Path], Where | None]] = {
    "valid rows": (_rows(lambda rows: None), None),
    "byte order mark": (_bytes(lambda b: b"\xef\xbb\xbf" + b), None),
    "CRLF line ends": (_bytes(lambda b: b.replace(b"\n", b"\r\n")), None),
    "blank lines": (_bytes(lambda b: b.replace(b"\n", b"\n\n  \n")), None),
    "5 MB context": (_rows(_both_contexts(0, BIG)), None),
    "decomposed accents in text": (_rows(_both_contexts(0, unicodedata.normalize("NFD", "Café résumé. ") * 50)), None),
    "missing goal": (_rows(_del(1, "goal")), {("data.jsonl", 1, "goal")}),
    "missing questions": (  # and each gold entry names a question the row no longer has
        _rows(_del(3, "questions")),
        {("data.jsonl", 3, "questions")} | {("data.jsonl", 3, f"gold[{j}].question_id") for j in range(5)},
    ),
    "missing gold": (_rows(_del(4, "gold")), {("data.jsonl", 4, "gold")}),
    "extra column": (_rows(_set(2, "answers", ["leak"])), {("data.jsonl", 2, "answers")}),
    "int context_id": (_rows(_set(4, "context_id", 7)), {("data.jsonl", 4, "context_id")}),
    "null goal": (_rows(_set(0, "goal", None)), {("data.jsonl", 0, "goal")}),
    "boolean source": (_rows(_set(0, "source", True)), {("data.jsonl", 0, "source")}),
    "NaN goal": (
        _line(1, lambda t: re.sub(r'"goal": "[^"]*"', '"goal": NaN', t, count=1)),
        {("data.jsonl", 1, "goal")},
    ),
    "list goal_id": (_rows(_set(2, "goal_id", ["g"])), {("data.jsonl", 2, "goal_id")}),
    "questions a string": (
        _rows(_set(1, "questions", "what?")),
        {("data.jsonl", 1, "questions")} | {("data.jsonl", 1, f"gold[{j}].question_id") for j in range(4)},
    ),
    "questions empty": (
        _rows(_set(0, "questions", [])),
        {("data.jsonl", 0, "questions")} | {("data.jsonl", 0, f"gold[{j}].question_id") for j in range(5)},
    ),
    "question not an object": (
        _rows(lambda rows: rows[2]["questions"].__setitem__(1, "what?")),
        {("data.jsonl", 2, "questions[1]"), ("data.jsonl", 2, "gold[1].question_id")},
    ),
    "question without id": (
        _rows(lambda rows: rows[2]["questions"][0].pop("question_id")),
        {("data.jsonl", 2, "questions[0].question_id"), ("data.jsonl", 2, "gold[0].question_id")},
    ),
    "null question": (_rows(_q(3, 2, question=None)), {("data.jsonl", 3, "questions[2].question")}),
    "question with an extra field": (_rows(_q(0, 0, answer="x")), {("data.jsonl", 0, "questions[0].answer")}),
    "gold not a list": (_rows(_set(1, "gold", {"q": "a"})), {("data.jsonl", 1, "gold")}),
    "references a string": (_rows(_g(0, 1, references="a")), {("data.jsonl", 0, "gold[1].references")}),
    "reference an int": (_rows(_g(0, 1, references=[3])), {("data.jsonl", 0, "gold[1].references")}),
    "whitespace-only references": (_rows(_g(4, 0, references=[" ", "\t"])), {("data.jsonl", 4, "gold[0].references")}),
    "gold for an unknown question": (
        _rows(lambda rows: rows[1]["gold"].append({"question_id": "nowhere", "references": ["x"]})),
        {("data.jsonl", 1, "gold[4].question_id")},
    ),
    "second gold entry": (
        _rows(lambda rows: rows[1]["gold"].append(dict(rows[1]["gold"][0]))),
        {("data.jsonl", 1, "gold[4].question_id")},
    ),
    "gold entry missing": (_rows(lambda rows: rows[3]["gold"].pop()), {("data.jsonl", 3, "gold")}),
    "gold entry with an extra field": (_rows(_g(2, 0, note="x")), {("data.jsonl", 2, "gold[0].note")}),
    "empty context": (_rows(_both_contexts(0, "")), {("data.jsonl", 0, "context"), ("data.jsonl", 1, "context")}),
    "whitespace-only goal": (_rows(_set(3, "goal", " \n\t ")), {("data.jsonl", 3, "goal")}),
    "whitespace-only question": (_rows(_q(4, 1, question="   ")), {("data.jsonl", 4, "questions[1].question")}),
    "lone surrogate in context": (
        _rows(_both_contexts(2, "Text \ud800 here.")),
        {("data.jsonl", r, "context") for r in (2, 3, 4)},
    ),
    "lone surrogate in a question": (
        _rows(_q(0, 3, question="Why\udfff?")),
        {("data.jsonl", 0, "questions[3].question")},
    ),
    "lone surrogate in a reference": (
        _rows(_g(1, 2, references=["a\ud83d"])),
        {("data.jsonl", 1, "gold[2].references[0]")},
    ),
    "lone surrogate in goal_id": (_rows(_set(1, "goal_id", "g\udc00")), {("data.jsonl", 1, "goal_id")}),
    "invalid UTF-8 byte": (
        _bytes(lambda b: b.replace(b"pm-cert-expiry/g2/q1", b"pm-cert-expiry/g2/q\xff", 1)),
        {("data.jsonl", 3, "*")},
    ),
    "UTF-8-encoded surrogate (CESU)": (
        _bytes(lambda b: b.replace(b"pm-db-failover/g1/q2", b"\xed\xa0\x80", 1)),
        {("data.jsonl", 0, "*")},
    ),
    "duplicate key in a row": (
        _line(2, lambda t: t[:-1] + ', "goal": "again"}'),
        {("data.jsonl", 2, "goal")},
    ),
    "duplicate key in a question": (
        _line(
            0,
            lambda t: t.replace(
                '"question_id": "pm-db-failover/g1/q1"', '"question_id": "x", "question_id": "pm-db-failover/g1/q1"', 1
            ),
        ),
        {("data.jsonl", 0, "question_id")},
    ),
    "100,000-deep nesting": (_line(1, lambda t: t[:-1] + f', "deep": {NESTED}}}'), {("data.jsonl", 1, "*")}),
    "5,000-digit integer id": (
        _line(3, lambda t: t.replace('"goal_id": "pm-cert-expiry/g2"', f'"goal_id": {"7" * 5000}', 1)),
        {("data.jsonl", 3, "*")},
    ),
    "truncated JSON line": (_line(4, lambda t: t[: len(t) // 2]), {("data.jsonl", 4, "*")}),
    "row is an array": (_line(2, lambda t: "[1, 2]"), {("data.jsonl", 2, "*")}),
    "row is a string": (_line(0, lambda t: '"row"'), {("data.jsonl", 0, "*")}),
    "duplicate goal_id": (_rows(_set(4, "goal_id", "pm-cert-expiry/g1")), {("data.jsonl", 4, "goal_id")}),
    "duplicate ids across files": (_two_files, {("b.jsonl", 0, "goal_id"), ("b.jsonl", 0, "questions")}),
    "goal ids differing by case": (_rows(_set(1, "goal_id", "PM-DB-FAILOVER/G1")), {("data.jsonl", 1, "goal_id")}),
    "question ids differing by normalisation": (
        _rows(lambda rows: (_rename_question(0, 0, "caf\u00e9")(rows), _rename_question(1, 0, "cafe\u0301")(rows))),
        {("data.jsonl", 1, "questions")},
    ),
    "context_id with a trailing space": (_rows(_set(1, "context_id", DB + " ")), {("data.jsonl", 1, "context_id")}),
    "question_id with a leading space": (
        _rows(_rename_question(2, 1, " pm-cert-expiry/g1/q2")),
        {("data.jsonl", 2, "questions[1].question_id"), ("data.jsonl", 2, "gold[1].question_id")},
    ),
    "goal_id with a tab": (_rows(_set(0, "goal_id", "pm\tdb/g1")), {("data.jsonl", 0, "goal_id")}),
    "one context_id, two texts": (_rows(_set(1, "context", "Another text.")), {("data.jsonl", 1, "context")}),
    "context ids differing by case": (
        _rows(
            lambda rows: (
                [r.update(context_id="PM-CERT-EXPIRY") for r in rows[2:]]
                and rows[0].update(context_id="pm-cert-expiry")
            )
        ),
        {("data.jsonl", r, "context_id") for r in (2, 3, 4)},
    ),
    "empty file": (_bytes(lambda b: b"\n"), {("data.jsonl", 0, "*")}),
    "parquet with int goals": (_parquet_int_goal, {("data.parquet", r, "goal") for r in range(5)}),
}
FILE_LEVEL = {  # the whole source is unreadable: one error naming the file
    "truncated parquet": (_truncated_parquet, "data.parquet: not a readable Parquet file"),
    "unsupported suffix": (_suffix, "data.txt: unsupported file type '.txt'"),
    "folder without data files": (_empty_folder, "empty: no data files (.jsonl, .parquet, .csv or .tsv)"),
}


def test_at_least_40_kinds():
    assert len(CASES) + len(FILE_LEVEL) >= 40


@pytest.mark.parametrize("case", CASES)
def test_every_bad_file_is_named_by_file_row_and_field(case, tmp_path):
    make, expected = CASES[case]
    spec = make(tmp_path)
    problems = find_spec_problems(spec)
    assert {(Path(p.file).name, p.row, p.field) for p in problems} == (expected or set())
    if expected is None:
        assert len(load_any(spec)) == len(BASE)
    else:
        with pytest.raises(DataValidationError) as info:
            load_any(spec)
        assert {(Path(p.file).name, p.row, p.field) for p in info.value.problems} == expected


@pytest.mark.parametrize("case", CASES)
def test_gacc_data_validate_lists_them_without_a_traceback(case, tmp_path, capsys):
    make, expected = CASES[case]
    spec = make(tmp_path)
    code = main(["data", "validate", str(spec)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and err == ""
    if expected is None:
        assert code == 0 and out == f"ok: no problems in {spec}\n"
        return
    lines = out.splitlines()
    assert code == 2 and lines[-1] == f"{len(lines) - 1} problem(s) in {spec}"
    found = set()
    for line in lines[:-1]:
        match = re.match(r"(.+): row (\d+)(?: \(goal_id=.*\))?(?:, line \d+)?, field '(.+?)': ", line)
        assert match, line
        found.add((Path(match[1]).name, int(match[2]), match[3]))
    assert found == expected


@pytest.mark.parametrize("case", FILE_LEVEL)
def test_an_unreadable_source_is_one_line_naming_the_file(case, tmp_path, capsys):
    make, message = FILE_LEVEL[case]
    spec = make(tmp_path)
    with pytest.raises(DataSourceError, match=re.escape(message)):
        find_spec_problems(spec)
    assert main(["data", "validate", str(spec)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith("gacc data: error: ") and message in err
