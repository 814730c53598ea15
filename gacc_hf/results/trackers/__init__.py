"""A run's results to experiment trackers: Trackio, TensorBoard, Weights & Biases (the `trackers` extra).

`check_trackers` refuses, before any model call, a tracker name it does not know, one whose package is not
installed (one line naming the extra) and a log folder that cannot be written. `log_run` then logs what
`values.logged_values` takes from the run (config, every number of `results.json`, its tables, the answers
as per-sample traces) to each tracker, one module each (`to_trackio`, `to_tensorboard`, `to_wandb`), all
under one log folder and offline unless the tracker's own environment says otherwise.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from gacc_hf.results.trackers import to_tensorboard, to_trackio, to_wandb
from gacc_hf.results.trackers.values import logged_values
from gacc_hf.results.writable import writable_folder

#: The trackers by the name `--log-to` and `log_to=` take.
TRACKERS: dict[str, ModuleType] = {"trackio": to_trackio, "tensorboard": to_tensorboard, "wandb": to_wandb}
#: Where the trackers write when no folder is given.
DEFAULT_LOG_DIR = "gacc-logs"
#: gacc-hf is not on the package index: the extra installs from a checkout of the repository.
INSTALL_HINT = 'pip install -e ".[trackers]"'


def tracker_names(log_to: str | Sequence[str] | None) -> list[str]:
    """The trackers asked for (a comma list or a list of names; None or empty: none), each known and once."""
    if log_to is None:
        return []
    given = log_to.split(",") if isinstance(log_to, str) else list(log_to)
    names = [n.strip() for n in given if n.strip()]
    for name in names:
        if name not in TRACKERS:
            known = ", ".join(TRACKERS)
            raise ValueError(f"unknown tracker {name!r} (--log-to, log_to=): use {known} (comma-separated)")
    if len(set(names)) != len(names):
        raise ValueError(f"--log-to (log_to=) names a tracker twice: {','.join(names)}")
    return names


def _installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):  # a package set to None in sys.modules, or a broken parent
        return False


def check_trackers(log_to: str | Sequence[str] | None, log_dir: str | Path | None) -> list[str]:
    """The trackers asked for, after checking each one's package and the log folder; returns their names."""
    names = tracker_names(log_to)
    for name in names:
        package = TRACKERS[name].PACKAGE
        if not _installed(package):
            raise ValueError(
                f"logging to {name} needs the `{package}` package, which is not installed: install the "
                f"`trackers` extra with `{INSTALL_HINT}` in a checkout of gacc-hf"
            )
    if names:
        writable_folder(log_dir or DEFAULT_LOG_DIR, "tracker log folder (--log-dir)")
    return names


def free_name(names: Sequence[str], log_dir: Path, name: str) -> str:
    """`name`, or `name-2`, `name-3`, ... when a tracker asked for already holds a run of that name."""
    candidate, n = name, 1
    while any(TRACKERS[t].taken(log_dir, candidate) for t in names):
        n += 1
        candidate = f"{name}-{n}"
    return candidate


def log_run(
    document: Mapping[str, Any],
    answers: Sequence[Mapping[str, Any]],
    memories: Sequence[Mapping[str, Any]],
    log_to: str | Sequence[str] | None,
    log_dir: str | Path | None,
    name: str,
) -> dict[str, Path]:
    """Log a run (its `results.json` document, answer rows and memory ledger) to each tracker under the run
    name `name` (made unique among the runs a tracker holds); returns where each one wrote."""
    names = check_trackers(log_to, log_dir)
    if not names:
        return {}
    folder = Path(log_dir or DEFAULT_LOG_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    logged = logged_values(document, answers, memories)
    run_name = free_name(names, folder, name)
    return {t: TRACKERS[t].log(logged, folder, run_name) for t in names}


def run_name(document: Mapping[str, Any]) -> str:
    """A run's name in the trackers when it has no results folder: its UTC start and compressors,
    `20261206T021500Z-bm25+truncate`, as `gacc run` names a new results folder."""
    config = document["config"]
    started = str(config.get("started_at") or "").replace("-", "").replace(":", "")
    return "-".join(p for p in (started, "+".join(c["name"] for c in config["compressors"])) if p)
