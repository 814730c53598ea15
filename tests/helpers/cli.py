"""The small rules run the exit-code and red-team tests drive through `gacc run`, and how they read its outcome."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gacc_hf.cli import main
from gacc_hf.data.synthetic import synthetic_rows

ROWS = synthetic_rows(seed=4, contexts=2, goals_per_context=1, questions_per_goal=2)


def data_file(tmp_path: Path) -> Path:
    """`ROWS` written as `tmp_path/data.jsonl`."""
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def run_args(tmp_path: Path, *extra: str) -> list[str]:
    """`gacc run` arguments for a seconds-long rules run into `tmp_path/out` with cache `tmp_path/cache`; `extra`
    options come last and win."""
    args = ["run", "--data", str(data_file(tmp_path)), "--compressors", "truncate", "--reader", "fields"]
    args += ["--judge", "exact", "--ratios", "0.5", "--conditions", "own", "--bootstrap", "0", "--no-progress"]
    args += ["--verbosity", "WARNING"]  # stderr holds only the errors
    args += ["--cache-dir", str(tmp_path / "cache"), "--output-dir", str(tmp_path / "out")]
    return [*args, *extra]


def outcome(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of `gacc argv` run in-process."""
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err
