"""`gacc run --log-to ... --log-dir DIR`: the options, their checks before any work, and the logging after the
results folder is written (`gacc_hf.results.trackers`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_tracker_options(p: argparse.ArgumentParser) -> None:
    """Where the results go besides the results folder: experiment trackers."""
    from gacc_hf.results.trackers import DEFAULT_LOG_DIR, TRACKERS

    p.add_argument(
        "--log-to",
        metavar="TRACKERS",
        help=f"also log the run to experiment trackers: {', '.join(TRACKERS)} (comma-separated; the `trackers` "
        "extra): config, every score with its CIs, outcomes, retention, AUC, usage, cost, integrity counters, "
        "and the answers as per-sample traces; offline (Trackio's local store, TensorBoard event files, "
        "W&B offline mode)",
    )
    p.add_argument(
        "--log-dir",
        metavar="DIR",
        help=f"the trackers' folder (default: {DEFAULT_LOG_DIR}): DIR/trackio, DIR/tensorboard/<run>, DIR/wandb",
    )


def check_tracker_options(args: argparse.Namespace) -> None:
    """`--log-to`'s trackers installed and `--log-dir` writable; `--log-dir` only with `--log-to`."""
    from gacc_hf.results.trackers import check_trackers

    if args.log_dir is not None and not args.log_to:
        raise ValueError(f"--log-dir {args.log_dir} sets where --log-to writes: give --log-to with it, or leave it out")
    check_trackers(args.log_to, args.log_dir)


def log_to_trackers(args: argparse.Namespace, result: Any, results_file: Path) -> None:
    """The run as its results.json records it, logged to `--log-to`'s trackers under its folder's name."""
    import json

    from gacc_hf.results.trackers import log_run

    if not args.log_to:
        return
    document = json.loads(results_file.read_text(encoding="utf-8"))
    where = log_run(document, result.answers, result.memories, args.log_to, args.log_dir, results_file.parent.name)
    for tracker, folder in where.items():
        print(f"{tracker}: {folder}")
