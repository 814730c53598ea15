"""`gacc board` (a leaderboard over several runs) and `gacc publish --board` (that board as a static Space)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_board_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "board", help="one leaderboard page over several results folders, with each run's page beside it"
    )
    p.add_argument("runs", nargs="*", metavar="RUN", help="results folders written by `gacc run`")
    p.add_argument("--output-dir", required=True, metavar="DIR", help="the board's folder (new, empty or a board)")
    p.add_argument(
        "--allow-mixed-data",
        action="store_true",
        help="take runs on different data, each data set shown as its own group (refused by default)",
    )
    p.add_argument(
        "--jobs",
        default="auto",
        metavar="N|auto",
        help="runs checked at once, one at a time in each process: this one and N - 1 fresh ones, from both ends "
        "of the list (default auto: one process while "
        "the runs to check hold fewer than 100,000 answer rows in all, as starting a process costs about what "
        "checking that many costs; else one a core)",
    )
    p.add_argument(
        "--no-seals",
        action="store_true",
        help="verify every run afresh, reading and writing no seal (a seal, in the gacc-hf cache folder, records that "
        "a run's exact files and this exact gacc-hf passed every check)",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the bar of runs checked")
    p.set_defaults(func=cmd_board)


def _jobs(text: str) -> int | str:
    """`--jobs`: a whole number of processes, 1 or more, or `auto` (refused in one line, as every bad value)."""
    if text != "auto" and (not (text.isascii() and text.isdigit()) or int(text) < 1):
        raise ValueError(f"--jobs {text}: runs verified at once must be 1 or more, or auto")
    return text if text == "auto" else int(text)


def cmd_board(args: argparse.Namespace) -> int:
    from gacc_hf.results.board import write_board
    from gacc_hf.results.seal import seals_dir

    seals = None if args.no_seals else seals_dir()
    jobs = _jobs(args.jobs)
    path, notes = write_board(
        args.runs, args.output_dir, args.allow_mixed_data, jobs, seals, progress=not args.no_progress
    )
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    print(path)
    return 0


#: the options of `gacc publish` that belong to one run's model card, never to a board
RUN_OPTIONS = ("run_dir", "repo_id", "compressor", "dataset_repo", "split", "card", "details_repo_id", "eval_yaml")


def publish_board(args: argparse.Namespace) -> int:
    """`gacc publish --board DIR --space OWNER/NAME`: the board's Space in one commit; a dry run as for a run."""
    from gacc_hf.hub import commit as hub
    from gacc_hf.hub.space import check_space_id

    given = [name for name in RUN_OPTIONS if getattr(args, name, None)] + (["pr"] if args.pr else [])
    if given:
        flags = ", ".join("RUN_DIR" if n == "run_dir" else "--" + n.replace("_", "-") for n in given)
        raise ValueError(f"--board publishes a board to a Space alone; {flags} belong to one run's publish")
    if args.space is None:
        raise ValueError("--board needs --space OWNER/NAME, the static Space the board is uploaded to")
    check_space_id(args.space)
    if args.dry_run_dir is not None:
        hub.check_dry_run_dir(args.dry_run_dir)
    if args.dry_run:
        return _board_plan(args, None)
    with hub.reaching_hub(f"publish the board to {args.space}"):
        from huggingface_hub import HfApi

        return _board_plan(args, HfApi())


def _board_plan(args: argparse.Namespace, api: object | None) -> int:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="gacc-board-") as stage:  # the pages, until they are pushed
        return _push_board(args, api, Path(stage))


def _push_board(args: argparse.Namespace, api: object | None, stage: Path) -> int:
    from gacc_hf.hub import commit as hub
    from gacc_hf.hub.board_space import board_space_plan

    plan, notes = board_space_plan(args.board, args.space, stage, args.allow_errors, jobs="auto")
    hub.check_no_secrets([plan])
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    print(plan.describe())
    if api is None:
        if args.dry_run_dir is not None:
            print(f"(dry run: wrote {len(hub.write_plans([plan], args.dry_run_dir))} file(s) under {args.dry_run_dir})")
        readme = plan.operations[0]
        print(hub.shown_file(f"{plan.repo_id}:{readme.path_in_repo}", readme.path_or_fileobj.decode("utf-8")), end="")
        return 0
    print(hub.commit(api, plan.repo_id, plan.repo_type, plan.operations, plan.message))
    return 0
