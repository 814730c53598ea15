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
