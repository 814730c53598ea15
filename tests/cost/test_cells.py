"""Tokens per cell: a memory's usage shared by the questions that read it, shared answers and verdicts split."""

from __future__ import annotations

from typing import Any

from gacc_hf.cost.cells import cell_usage, merge_cells
from gacc_hf.cost.usage import usage

# cell own: one memory, 2 questions; cell none: one memory shared by two goals (2 + 1 questions), whose
# last question is answered alike in both rows (one answer key); the full ceiling: the own goal's questions,
# answered like own's, so their verdicts are shared with own's.
LEDGER = [
    {"compressor": "c", "condition": "own", "ratio": 0.5, "memory_key": "M1", "n_questions": 2},
    {"compressor": "c", "condition": "none", "ratio": 0.5, "memory_key": "M0", "n_questions": 2},
    {"compressor": "c", "condition": "none", "ratio": 0.5, "memory_key": "M0", "n_questions": 1},
    {"compressor": "full", "condition": "full", "ratio": 1.0, "memory_key": "F", "n_questions": 2, "ceiling": True},
]
MEMORIES = {
    "M1": {"memory": "m1", "usage": usage(100, 10, "server")},
    "M0": {"memory": "m0", "usage": usage(90, 30, "server")},
    "F": {"memory": "source"},
}
KEPT: dict[str, Any] = {
    "answer_keys": ["a1", "a2", "b1", "b2", "b2", "f1", "f2"],
    "verdict_keys": ["va1", "va2", "vb1", "vb2", "vb3", "va1", "va2"],
    "answers": {
        "a1": {"answer": "x", "usage": usage(20, 1, "server")},
        "a2": {"answer": "x", "usage": usage(20, 1, "server")},
        "b1": {"answer": "x", "usage": usage(30, 2, "server")},
        "b2": {"answer": "x", "usage": usage(30, 2, "server")},
        "f1": {"answer": "x", "usage": usage(60, 1, "server")},
        "f2": {"answer": "x", "usage": usage(60, 1, "server")},
    },
    "verdicts": {k: {"correct": True, "usage": usage(10, 1, "local")} for k in ("va1", "va2", "vb1", "vb2", "vb3")},
}
ROWS = [{"answer": "x"}] * 7


def _tokens(p: float, c: float) -> dict[str, float]:
    return {"prompt_tokens": p, "completion_tokens": c}


def test_each_cell_gets_its_share_counted_by_hand() -> None:
    own, none, full = cell_usage(LEDGER, MEMORIES, ROWS, KEPT)
    assert (own["questions"], own["answered"], own["memories"]) == (2, 2, 1)
    assert own["tokens"] == {
        "compressor": _tokens(100, 10),  # its memory, read by its 2 questions alone
        "reader": _tokens(40, 2),  # a1 + a2
        "judge": _tokens(10, 1),  # half of va1 and half of va2: the full ceiling shares them
    }
    assert (none["questions"], none["memories"], none["memory_tokens"]) == (3, 1, _tokens(90, 30))
    assert none["tokens"] == {
        "compressor": _tokens(90, 30),  # one memory read by 3 questions, all in this cell: counted once
        "reader": _tokens(60, 4),  # b1 + b2 (b2 read by two rows, both here)
        "judge": _tokens(30, 3),
    }
    assert full["ceiling"] and full["tokens"] == {
        "compressor": _tokens(0, 0),
        "reader": _tokens(120, 2),
        "judge": _tokens(10, 1),
    }
    # nothing counted twice, nothing lost: the 5 distinct verdicts' 50 + 5 tokens in all
    assert sum(c["tokens"]["judge"]["prompt_tokens"] for c in (own, none, full)) == 50


def test_a_memory_read_by_two_cells_is_split_by_their_questions() -> None:
    ledger = [
        {"compressor": "c", "condition": "own", "ratio": 0.5, "memory_key": "M", "n_questions": 3},
        {"compressor": "c", "condition": "cross", "ratio": 0.5, "memory_key": "M", "n_questions": 1},
    ]
    kept = {"answer_keys": [None] * 4, "verdict_keys": [None] * 4, "answers": {}, "verdicts": {}}
    rows = [{"answer": None}] * 4
    own, cross = cell_usage(ledger, {"M": {"memory": "m", "usage": usage(40, 8, "server")}}, rows, kept)
    assert own["tokens"]["compressor"] == _tokens(30, 6) and cross["tokens"]["compressor"] == _tokens(10, 2)
    assert own["answered"] == 0 and own["memory_tokens"] == cross["memory_tokens"] == _tokens(40, 8)


def test_shards_add_up() -> None:
    cells = cell_usage(LEDGER, MEMORIES, ROWS, KEPT)
    merged = merge_cells([cells[:2], cells])
    assert merged[0]["questions"] == 4 and merged[0]["tokens"]["reader"] == _tokens(80, 4)
    assert merged[2] == cells[2]
