"""The rule-only run most tests share: no model, deterministic, seconds."""

from __future__ import annotations

from typing import Any

from gacc_hf import run_benchmark
from gacc_hf.results.result import BenchmarkResult


def rules_run(dataset: Any, **kwargs: Any) -> BenchmarkResult:
    """`run_benchmark` with the `fields` reader, the `exact` judge and no progress bar; keyword arguments add to or
    override these."""
    return run_benchmark(dataset, **{"reader": "fields", "judge": "exact", "progress": False, **kwargs})
