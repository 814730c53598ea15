"""Helpers shared by the data tests: the sample rows read independently, file writers, a private cache."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gacc_hf.data.schema import SAMPLE_PATH
from tests.helpers.paths import ROOT

SHIPPED_FOLDER = ROOT / "dataset_scripts" / "gacc_bench"


def sample_rows() -> list[dict[str, Any]]:
    """The bundled sample, parsed with `json` alone (not through the code under test)."""
    with SAMPLE_PATH.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def write_parquet(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def mutated(change: Any) -> list[dict[str, Any]]:
    """A deep copy of the sample rows after `change(rows)` edits them in place."""
    rows = copy.deepcopy(sample_rows())
    change(rows)
    return rows


@pytest.fixture
def hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private `datasets` cache, so that a test sees exactly what it wrote (and nothing else is touched)."""
    root = tmp_path / "hf-datasets"
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", root)
    return root


# One row per question (the flat layout), in English and Chinese, written by hand: two goals, four questions.
EN_TEXT = "Movers pack up to four boxes per person.\nOld badges stop working on 4 October.\n"
ZH_TEXT = "搬家公司为每人打包最多四个箱子。\n新工牌在一楼前台领取。\n"
FLAT_ROWS: list[dict[str, Any]] = [
    {"context_id": "en-1", "context": EN_TEXT, "goal_id": "en-1/g1", "goal": "Pack for the move",
     "question_id": "q1", "question": "How many boxes may each person pack?", "references": ["four", "4"]},
    {"context_id": "en-1", "context": EN_TEXT, "goal_id": "en-1/g1", "goal": "Pack for the move",
     "question_id": "q2", "question": "When do old badges stop working?", "references": "4 October"},
    {"context_id": "zh-1", "context": ZH_TEXT, "goal_id": "zh-1/g1", "goal": "准备搬家",
     "question_id": "q3", "question": "新工牌在哪里领取？", "references": ["一楼前台"]},
    {"context_id": "zh-1", "context": ZH_TEXT, "goal_id": "zh-1/g1", "goal": "准备搬家",
     "question_id": "q4", "question": "每人最多打包几个箱子？", "references": "四个"},
]  # fmt: skip


def flat_rows(**renamed: str) -> list[dict[str, Any]]:
    """A deep copy of FLAT_ROWS, its columns renamed (`context="text"` names the context column `text`)."""
    return [{renamed.get(k, k): v for k, v in row.items()} for row in copy.deepcopy(FLAT_ROWS)]
