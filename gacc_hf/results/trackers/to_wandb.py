"""A run to Weights & Biases: offline by default, its run folder in `<log dir>/wandb/offline-run-*`.

`WANDB_MODE` chooses otherwise (`online` sends it now; `wandb sync <run folder>` sends an offline run
later). One `run.log` at step 0 holds every scalar (which also become the run's summary), each table as a
`wandb.Table`, and the answers as the `answers` table, one row per question with the memory it was read
from: W&B's per-sample view. Project `gacc-hf`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any

from gacc_hf.results.trackers.values import Logged

PACKAGE = "wandb"
PROJECT = "gacc-hf"


def taken(log_dir: Path, name: str) -> bool:
    return False  # each W&B run has a folder of its own id


def log(logged: Logged, log_dir: Path, name: str, step: int = 0) -> Path:
    """Log the run; returns its run folder."""
    import wandb

    mode = os.environ.get("WANDB_MODE") or "offline"
    settings = wandb.Settings(silent=True, console="off", x_disable_stats=True)
    with contextlib.redirect_stdout(sys.stderr):
        run = wandb.init(
            project=PROJECT, name=name, config=logged.config, mode=mode, dir=str(log_dir), settings=settings
        )
        try:
            values: dict[str, Any] = dict(logged.scalars)
            tables = {f"tables/{k}": (c, r) for k, (c, r) in logged.tables.items() if k != "answers"}
            if logged.traces:
                tables["answers"] = _answers(logged)
            values.update({k: wandb.Table(columns=c, data=r, allow_mixed_types=True) for k, (c, r) in tables.items()})
            run.log(values, step=step)
            folder = Path(run.dir).parent
        finally:
            run.finish()
    return folder


def _answers(logged: Logged) -> tuple[list[str], list[list[Any]]]:
    """The answer rows with the memory each was read from, from the traces."""
    columns = ["memory", "question", "answer", *logged.traces[0]["metadata"]]
    rows = []
    for trace in logged.traces:
        memory, question, answer = (m["content"] for m in trace["messages"])
        rows.append([memory, question, answer, *(trace["metadata"].get(c) for c in columns[3:])])
    return columns, rows
