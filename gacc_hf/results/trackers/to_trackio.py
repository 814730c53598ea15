"""A run to Trackio: its local store in `<log dir>/trackio/` (`TRACKIO_DIR`), project `gacc-hf`.

Trackio reads its folder when it is first imported, so the folder is set then; a process that imported
Trackio with another folder is told so. One `trackio.log` at step 0 holds every scalar, each table as a
`trackio.Table`, and the answers as `trackio.Trace`s (memory, question, answer; the row as metadata),
which Trackio's dashboard shows as per-sample traces. Local unless the environment names a Space or a
server (`TRACKIO_SPACE_ID`, `TRACKIO_SERVER_URL`), Trackio's own switches.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any

from gacc_hf.results.trackers.values import Logged

PACKAGE = "trackio"
PROJECT = "gacc-hf"


def store(log_dir: Path) -> Path:
    return log_dir / "trackio"


def _module(log_dir: Path) -> Any:
    """`trackio`, imported with its store at `log_dir/trackio`."""
    wanted = store(log_dir).resolve()
    if "trackio" not in sys.modules:
        os.environ["TRACKIO_DIR"] = str(wanted)
    import trackio
    from trackio import utils

    if Path(utils.TRACKIO_DIR).resolve() != wanted:
        raise ValueError(
            f"trackio was imported in this process with its store at {utils.TRACKIO_DIR}; log to {wanted} "
            "from a new process (Trackio reads its folder once, when imported)"
        )
    return trackio


def taken(log_dir: Path, name: str) -> bool:
    db = store(log_dir) / f"{PROJECT}.db"
    if not db.exists():
        return False
    from trackio.sqlite_storage import SQLiteStorage

    _module(log_dir)
    return name in SQLiteStorage.get_runs(PROJECT)


def log(logged: Logged, log_dir: Path, name: str, step: int = 0) -> Path:
    """Log the run to the local store; returns the store's folder. Trackio's notices go to stderr."""
    with contextlib.redirect_stdout(sys.stderr):
        trackio = _module(log_dir)
        trackio.init(
            project=PROJECT, name=name, config=logged.config, embed=False, auto_log_cpu=False, auto_log_gpu=False
        )
        try:
            values: dict[str, Any] = dict(logged.scalars)
            values.update({f"tables/{k}": trackio.Table(columns=c, data=r) for k, (c, r) in logged.tables.items()})
            if logged.traces:
                values["answers"] = [trackio.Trace(t["messages"], metadata=t["metadata"]) for t in logged.traces]
            trackio.log(values, step=step)
        finally:
            trackio.finish()
    return store(log_dir)
