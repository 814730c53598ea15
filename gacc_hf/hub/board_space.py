"""A board as a static Hugging Face Space: its `index.html`, each run's page under `runs/`, and a README naming every
run and its data.

Like a run's Space (`gacc_hf.hub.space`), nothing is read back from the board's folder but the list of runs it was
written from: the runs are verified again and every page is rendered afresh, so a page edited by hand never
leaves the machine.
"""

from __future__ import annotations

from pathlib import Path

from huggingface_hub import CommitOperationAdd, SpaceCard, SpaceCardData

from gacc_hf.hub.commit import PublishError, RepoPlan
from gacc_hf.hub.model_card import check_publishable
from gacc_hf.hub.space import check_space_id
from gacc_hf.results.board import BOARD_FILE, read_board, render_board, run_page_path, run_setup
from gacc_hf.results.board_data import BoardRun, data_name
from gacc_hf.results.layout import RunResults


def board_card(runs: list[BoardRun]) -> str:
    """The Space's README: a static Space showing the board, with every run, its methods and its data."""
    data = SpaceCardData(title="GACC-Bench leaderboard", sdk="static", app_file=BOARD_FILE, tags=["gacc-bench"])
    lines = [
        "# GACC-Bench leaderboard",
        "",
        f"A leaderboard of {len(runs)} GACC-Bench run(s), one row per scored cell; each run's own results page is "
        "linked from its rows. Cells on different data are shown as separate groups, never ranked together. "
        "Written by gacc-hf.",
        "",
        "| run | methods and date | data (rows fingerprint) |",
        "|---|---|---|",
        *(
            f"| [{_cell(r.label)}]({run_page_path(r.label)}) | {_cell(run_setup(r))} | {_cell(data_name(r))} |"
            for r in runs
        ),
    ]
    return str(SpaceCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(lines) + "\n"))


def _cell(text: str) -> str:
    """Text safe in a Markdown table cell: no pipe or line break ends it, no HTML tag opens."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace("\n", " ")


def board_space_plan(
    board_dir: str | Path, space_id: str, stage: Path, allow_errors: bool = False, jobs: int | str = 1
) -> tuple[RepoPlan, list[str]]:
    """The Space's one commit (README.md, index.html, runs/<name>/report.html), and the notes of reading its runs.

    The runs' pages are rendered into `stage`, which must outlive the commit. Each run must be publishable as a
    run's own Space must be (`check_publishable`): integrity counters at 0, the whole dataset, failed calls only
    with `allow_errors`."""
    check_space_id(space_id)
    runs, notes = read_board(board_dir, stage, jobs)
    for run in runs:
        try:
            check_publishable(RunResults(run.payload, [], []), allow_errors)
        except PublishError as exc:
            raise PublishError(f"{run.path}: {exc}") from None
    ops = [
        CommitOperationAdd("README.md", board_card(runs).encode("utf-8")),
        CommitOperationAdd(BOARD_FILE, render_board(runs).encode("utf-8")),
        *(CommitOperationAdd(run_page_path(r.label), str(stage / run_page_path(r.label))) for r in runs),
    ]
    return RepoPlan(space_id, "space", ops, f"GACC-Bench leaderboard of {len(runs)} run(s)"), notes
