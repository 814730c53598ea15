"""The results folder format (schema 5): file names, column types, the in-memory `RunResults`, canonical bytes.

Layout:

    results.json       config (with the data identity and each method's spec), the command line, seed,
                       versions, git revision, tokenizer identity, integrity, exposures, calls, usage (tokens
                       per role, method and cell; schema 4) and, with prices, cost, scores with CIs, errors,
                       and the row count + sha256 of each parquet file
    answers.parquet    one row per question per (reader, judge, compressor, condition, ratio): the reader and
                       judge (schema 5: a run may have several; rows of an older folder name none, and are
                       the run's), ids, the question text, the gold references (`references`), memory hash,
                       answer, verdict, outcome (`gacc_hf.scoring.outcomes`; schema 3, filled in when a
                       schema 2 folder is read)
    memories.parquet   the memory ledger (docs/protocol.md §9), one row per (compressor, goal, condition, ratio), with
                       the memory text (`memory`)
    report.md, *.png   derived from the above (`gacc_hf.results.report`, `gacc_hf.results.plots`)
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from gacc_hf import strict_json

SCHEMA_VERSION = 5


RESULTS_FILE = "results.json"


ANSWERS_FILE = "answers.parquet"


MEMORIES_FILE = "memories.parquet"


RUNS_DIR = "runs"


LATEST = "latest"


_STR, _F64, _I64, _BOOL = pa.string(), pa.float64(), pa.int64(), pa.bool_()


# Known column types, so an all-null column (e.g. `error` in a clean run) keeps its type in the file.
ANSWER_TYPES: dict[str, pa.DataType] = {
    "reader": _STR,
    "judge": _STR,
    "compressor": _STR,
    "condition": _STR,
    "ratio": _F64,
    "context_id": _STR,
    "goal_id": _STR,
    "shown_goal_id": _STR,
    "language": _STR,
    "question_id": _STR,
    "memory_sha256": _STR,
    "question": _STR,
    "references": pa.list_(_STR),
    "evidence": _BOOL,
    "ceiling": _BOOL,
    "answer": _STR,
    "correct": _BOOL,
    "outcome": _STR,
    "error": _STR,
}


MEMORY_TYPES: dict[str, pa.DataType] = {
    "context_id": _STR,
    "goal_id": _STR,
    "shown_goal_id": _STR,
    "condition": _STR,
    "compressor": _STR,
    "compressor_revision": _STR,
    "ratio": _F64,
    "source_tokens": _I64,
    "budget": _I64,
    "memory_key": _STR,
    "proposed_tokens": _I64,
    "retained_tokens": _I64,
    "unused_budget": _I64,
    "reencoded_tokens": _I64,
    "padding_tokens": _I64,
    "truncated": _BOOL,
    "compressor_called": _BOOL,
    "cached": _BOOL,
    "memory_sha256": _STR,
    "memory": _STR,
    "evidence_hits": _I64,
    "n_questions": _I64,
    "ceiling": _BOOL,
    "error": _STR,
}


TABLES = {"answers": (ANSWERS_FILE, ANSWER_TYPES), "memories": (MEMORIES_FILE, MEMORY_TYPES)}
#: the text columns read one value a row (`read_table`): a memory's text is long and its own, while every other
#: text of a run (names, ids, hashes, a question) repeats across its cells, conditions and ratios
OWN_TEXT = frozenset({"memory"})


def read_table(data: bytes) -> pa.Table:
    """A Parquet file's table, on this thread (Arrow's pools left running abort a bare script at interpreter exit,
    rc 134), its text columns but `OWN_TEXT` read dictionary-encoded (`table_rows` shares their values)."""
    file = pq.ParquetFile(pa.BufferReader(data), pre_buffer=False)
    texts = [f.name for f in file.schema_arrow if pa.types.is_string(f.type) and f.name not in OWN_TEXT]
    if texts:
        file = pq.ParquetFile(pa.BufferReader(data), pre_buffer=False, read_dictionary=texts)
    return file.read(use_threads=False)


def table_rows(table: pa.Table) -> list[dict[str, Any]]:
    """A table's rows as dicts, what `Table.to_pylist` gives, with each value of a dictionary-encoded column made
    once as a Python object, however many rows hold it: a release-size run repeats a few thousand strings over
    236,532 answer rows, and each is made, hashed (by every grouping of the rows) and freed once, not once a row."""
    columns = [_values(table.column(name)) for name in table.column_names]
    return list(map(row_of(table.column_names), *columns)) if columns else []


@functools.lru_cache(maxsize=16)
def _row_maker(width: int) -> Callable[..., Callable[..., dict[str, Any]]]:
    keys, values = ", ".join(f"k{i}" for i in range(width)), ", ".join(f"v{i}" for i in range(width))
    items = ", ".join(f"k{i}: v{i}" for i in range(width))
    source = f"def row_of({keys}):\n    return lambda {values}: {{{items}}}\n"
    scope: dict[str, Any] = {}
    exec(compile(source, f"<row of {width} columns>", "exec"), scope)
    return scope["row_of"]  # type: ignore[no-any-return]


def row_of(names: Sequence[str]) -> Callable[..., dict[str, Any]]:
    """A function of one value per column, in the order of `names`, that returns the row as a dict: one dict
    display, which makes the dict at its size (`dict(zip(names, values))` grows it key by key, twice over for a
    run's 19 columns, and was a sixth slower). The code is made from the number of columns alone; the names are
    its arguments, never its text.

    >>> row_of(["id", "text"])("q1", "数据")
    {'id': 'q1', 'text': '数据'}
    """
    return _row_maker(len(names))(*names)


def _values(column: pa.ChunkedArray) -> list[Any]:
    if not pa.types.is_dictionary(column.type):
        return column.to_pylist()
    out: list[Any] = []
    for chunk in column.chunks:
        values = np.array([*chunk.dictionary.to_pylist(), None], dtype=object)  # the last: a null's value
        out += values[chunk.indices.fill_null(len(values) - 1).to_numpy(zero_copy_only=False)].tolist()
    return out


class ResultsError(ValueError):
    """A results folder cannot be read: the message names the file and what is wrong with it."""


@dataclass
class RunResults:
    """A results folder in memory: the `results.json` document plus the answer and ledger rows."""

    payload: dict[str, Any]
    answers: list[dict[str, Any]]
    memories: list[dict[str, Any]]

    @property
    def config(self) -> dict[str, Any]:
        return self.payload["config"]

    @property
    def scores(self) -> list[dict[str, Any]]:
        return self.payload["scores"]


def json_bytes(payload: Mapping[str, Any]) -> bytes:
    """The canonical bytes of `results.json` (stable: rebuilding a folder reproduces them exactly)."""
    return (strict_json.dumps(payload, RESULTS_FILE, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


#: the most rows in one Parquet row group
ROW_GROUP = 8_192
#: the most characters of text in one row group (a single longer row still gets a group of its own)
GROUP_TEXT = 8_000_000


def row_groups(rows: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """Consecutive runs of `rows`, each within `ROW_GROUP` rows and `GROUP_TEXT` characters of string values.

    Bounded by text as well as rows because Arrow keeps each group's columns several times over while it
    encodes them: a release's memory rows average nine thousand characters, so 8,192 of them would cost
    hundreds of megabytes at once."""
    start = size = 0
    for i, row in enumerate(rows):
        n = sum(len(v) for v in row.values() if isinstance(v, str))
        if i > start and (i - start == ROW_GROUP or size + n > GROUP_TEXT):
            yield rows[start:i]
            start, size = i, 0
        size += n
    if start < len(rows):
        yield rows[start:]


def parquet_bytes(rows: list[dict[str, Any]], types: Mapping[str, pa.DataType]) -> bytes:
    """Rows as Parquet; known columns get their declared type, unknown ones are inferred from all rows.

    Written a row group at a time (`row_groups`): Arrow holds one group's columns, never the whole table (a
    release's memories are half a gigabyte of text)."""
    names = list(dict.fromkeys(k for row in rows for k in row)) or list(types)
    schema = pa.schema(
        [pa.field(n, types[n] if n in types else pa.array([row.get(n) for row in rows]).type) for n in names]
    )
    buf = io.BytesIO()
    with pq.ParquetWriter(buf, schema) as writer:
        for chunk in row_groups(rows):
            columns = [pa.array([row.get(f.name) for row in chunk], type=f.type) for f in schema]
            writer.write_table(pa.Table.from_arrays(columns, schema=schema))
    return buf.getvalue()
