"""`gacc run`'s options that choose part of the data: `--goals ID,ID` and `--goals-file FILE`."""

from __future__ import annotations

import argparse
from typing import Any


def add_selection_options(p: argparse.ArgumentParser) -> None:
    """`--goals` and `--goals-file`: one of them, or neither (every goal)."""
    from gacc_hf.run.goals import parse_goal_list

    chosen = p.add_mutually_exclusive_group()
    chosen.add_argument(
        "--goals",
        type=parse_goal_list,
        metavar="ID,ID,...",
        help="run these goals only (goal_id values, comma-separated; before --limit): a partial run, recorded as "
        "such, that publishing refuses; each goal's cross condition is paired over the whole data",
    )
    chosen.add_argument(
        "--goals-file",
        metavar="FILE",
        help="like --goals, the ids read from FILE: one goal id a line, blank lines and #-comment lines skipped",
    )


def given_goals(args: argparse.Namespace) -> list[str] | None:
    """The goal ids the command line names (None: not given, a config file's `goals:` then applies)."""
    from gacc_hf.run.goals import read_goals_file

    goals_file: Any = getattr(args, "goals_file", None)
    return read_goals_file(goals_file) if goals_file is not None else getattr(args, "goals", None)
