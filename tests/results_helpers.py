"""A real rule-based run written as a results folder, shared by the report/plots/compare/model card tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gacc_hf import run_benchmark
from gacc_hf.data.synthetic import synthetic
from gacc_hf.results.folder import write_results
from gacc_hf.results.result import BenchmarkResult

RATIOS = (0.1, 0.25, 0.5)


def real_run(
    out_dir: Path, cache_dir: Path, compressor: Any = ("truncate", "goal-lines"), contexts: int = 10, **kw: Any
) -> BenchmarkResult:
    """Run the rule-based pipeline on synthetic data and write its results folder into `out_dir`."""
    kw = {"ratios": RATIOS, "conditions": ("own", "none", "cross"), "data_spec": "synthetic", **kw}
    result = run_benchmark(
        synthetic(seed=0, contexts=contexts),
        compressor=list(compressor) if isinstance(compressor, tuple) else compressor,
        reader="fields",
        judge="exact",
        cache_dir=str(cache_dir),
        progress=False,
        **kw,
    )
    write_results(result, out_dir)
    return result
