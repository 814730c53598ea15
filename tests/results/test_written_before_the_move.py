"""A results folder and a cache written by the code before the package was split into stages (commit d5b2d0d,
`tests/fixtures/premove/`) are read by today's code, and a rerun on that cache calls only what changed since.

The fixture is a rules run: `gacc run --preset rules --data synthetic:contexts=3,seed=0 --compressors
truncate,goal-lines --conditions own,none,full,oracle --ratios 0.3 --bootstrap 200`. Expected calls of the rerun,
counted by hand: the move itself changes no cache key (built-in revisions are explicit strings, not module paths),
but the script-aware matcher that came after it bumped `goal-lines-v1` -> `v2` and `exact-v1` -> `v2`. So the
12 goal-lines memories (9 groups under `own` + 3 contexts' shared `none` goal) are recomputed, every reader answer
is a cache hit (the memory texts are unchanged and reader keys bind the memory text), and the 69 judge verdicts the
first run computed are computed again. Scores are identical.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers.paths import FIXTURES

FIXTURE = FIXTURES / "premove"


def _gacc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gacc_hf", *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


def test_the_old_results_folder_is_read_and_verified(tmp_path):
    run_dir = tmp_path / "results"
    shutil.copytree(FIXTURE / "results", run_dir)
    done = _gacc("report", str(run_dir), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (run_dir / "report.md").is_file()


def test_a_rerun_on_the_old_cache_calls_only_what_changed(tmp_path):
    shutil.copytree(FIXTURE / "cache", tmp_path / "cache")
    config = FIXTURE / "results" / "config.yaml"
    done = _gacc(
        "run", "--config", str(config), "--cache-dir", "cache", "--output-dir", "out", "--no-progress", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    new = json.loads((tmp_path / "out" / "results.json").read_text())
    old = json.loads((FIXTURE / "results" / "results.json").read_text())
    assert new["calls"] == {"compressor": 12, "reader": 0, "judge": 69}
    # schema 5 names each score row's reader and judge; the old folder's rows (one setting) name none
    assert [{k: v for k, v in s.items() if k not in ("reader", "judge")} for s in new["scores"]] == old["scores"]
    assert {(s["reader"], s["judge"]) for s in new["scores"]} == {("fields", "exact")}
    assert new["integrity"] == {"budget_violations": 0, "count_errors": 0, "exposures": 0}
