"""Parquet row groups bounded by rows and by text, in English and Chinese, and the bytes read back as written
(text columns read as shared values give the rows `to_pylist` gives)."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gacc_hf.results import layout
from gacc_hf.results.layout import ANSWER_TYPES, parquet_bytes, read_table, row_groups, table_rows

TYPES = {"id": pa.string(), "memory": pa.string(), "n": pa.int64()}


def _rows(texts: list[str]) -> list[dict[str, object]]:
    return [{"id": f"r{i}", "memory": t, "n": len(t)} for i, t in enumerate(texts)]


def _written(rows: list[dict[str, object]]) -> pq.ParquetFile:
    return pq.ParquetFile(io.BytesIO(parquet_bytes(rows, TYPES)))


@pytest.mark.parametrize("char", ["a", "记"])
def test_a_group_ends_before_its_text_would_pass_the_bound(monkeypatch, char):
    monkeypatch.setattr(layout, "GROUP_TEXT", 100)
    # each row: its 2-character id plus 40 characters of memory = 42; two rows make 84, a third 126 > 100
    rows = _rows([char * 40] * 5)
    assert [len(g) for g in row_groups(rows)] == [2, 2, 1]
    written = _written(rows)
    assert [written.metadata.row_group(i).num_rows for i in range(written.num_row_groups)] == [2, 2, 1]
    assert written.read().to_pylist() == rows


def test_a_row_longer_than_the_bound_gets_a_group_of_its_own(monkeypatch):
    monkeypatch.setattr(layout, "GROUP_TEXT", 100)
    rows = _rows(["a" * 10, "记" * 150, "b" * 10, "c" * 10])
    assert [len(g) for g in row_groups(rows)] == [1, 1, 2]
    assert _written(rows).read().to_pylist() == rows


def test_a_group_holds_at_most_row_group_rows(monkeypatch):
    monkeypatch.setattr(layout, "ROW_GROUP", 3)
    rows = _rows(["short", "短文本"] * 3 + ["x"])
    assert [len(g) for g in row_groups(rows)] == [3, 3, 1]
    assert _written(rows).read().to_pylist() == rows


def test_no_rows_give_no_group_and_a_file_with_the_declared_columns():
    assert list(row_groups([])) == []
    written = _written([])
    assert written.num_row_groups == 0
    assert written.schema_arrow == pa.schema([pa.field(n, t) for n, t in TYPES.items()])


def _answers() -> list[dict[str, object]]:
    rows = []
    for i in range(40):
        question = ["What is kept?", "记忆保留了什么？", None][i % 3]  # a null among the shared values
        rows.append({"compressor": ["embed", "嵌入"][i % 2], "question_id": f"q{i % 7}", "question": question})
        rows[-1] |= {"references": [f"r{i}", "参考"], "ratio": 0.1 * (i % 3), "correct": [True, False, None][i % 3]}
    return rows


def test_rows_read_back_are_those_written():
    rows = _answers()
    table = read_table(parquet_bytes(rows, ANSWER_TYPES))
    assert pa.types.is_dictionary(table.schema.field("question").type)
    assert table_rows(table) == rows


def test_a_shared_text_is_one_object_however_many_rows_hold_it_and_a_memory_is_its_own():
    rows = [{**row, "memory": "记忆" if i % 2 else "kept"} for i, row in enumerate(_answers())]
    read = table_rows(read_table(parquet_bytes(rows, {**ANSWER_TYPES, "memory": pa.string()})))
    assert read == rows
    for field, value in (("compressor", "嵌入"), ("memory", "记忆")):
        held = [r[field] for r in read if r[field] == value]
        assert len(held) == 20 and len({id(v) for v in held}) == (1 if field == "compressor" else 20)
