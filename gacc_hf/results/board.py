"""`gacc board`: one self-contained leaderboard page over several runs, with each run's own page beside it.

The bundle is a folder: `index.html` (the board: inline CSS, script and data, strict CSP, nothing fetched, so it
works from file:// and as a static Space) and `runs/<name>/report.html` for each run, rendered again from the
verified run as `gacc view` and a publish do (never a file read back from the folder, which could have been
edited), or taken from the seal that rendering left when the run's exact files and this exact gacc-hf were
checked before (`gacc_hf.results.seal`). The board's table, filters and plots are drawn by `templates/board.js`
from the rows of `gacc_hf.results.board_data`, every text set as `textContent`. No timestamp: the same runs give
the same bytes.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gacc_hf import strict_json
from gacc_hf.collector import collector_paused
from gacc_hf.results.atomic import write_atomic
from gacc_hf.results.board_data import BoardRun, board_rows, board_run, data_groups, data_name, load_runs
from gacc_hf.results.by_language import is_language_png
from gacc_hf.results.folder import setting_suffix, verify_folder
from gacc_hf.results.layout import ResultsError, RunResults
from gacc_hf.results.outcome_plot import OUTCOMES_PNG
from gacc_hf.results.page import render_page, script_json
from gacc_hf.results.plots import GAPS_PNG, SCORES_PNG
from gacc_hf.results.seal import Sealed, read_seal, seal_name, write_seal
from gacc_hf.results.views import settings_line, several_settings
from gacc_hf.scoring.settings import config_settings
from gacc_hf.templates import render, template_text

BOARD_FILE = "index.html"
#: the runs a board was written from (paths relative to the board), read back to publish it
MANIFEST = "board.json"
RUNS_DIR = "runs"
#: the line that marks a folder as a board, so that writing a board again may replace it (and nothing else)
MARK = '<meta name="generator" content="gacc board">'


def run_page_path(label: str) -> str:
    """Where a run's page lies in the bundle, relative to the board."""
    return f"{RUNS_DIR}/{label}/report.html"


def board_document(runs: Sequence[BoardRun]) -> dict[str, Any]:
    """The JSON the board embeds: its rows, and each data group with its runs."""
    groups = [
        {"key": key, "name": data_name(members[0]), "runs": [r.label for r in members]}
        for key, members in data_groups(runs).items()
    ]
    pages = {r.label: run_page_path(r.label) for r in runs}
    return {"groups": groups, "pages": pages, "rows": board_rows(runs)}


def render_board(runs: Sequence[BoardRun]) -> str:
    """The board page's HTML."""
    groups = data_groups(runs)
    return render(
        __file__,
        "board.html.j2",
        mark=MARK,
        heading="GACC-Bench leaderboard",
        summary=f"{len(runs)} run(s) on {len(groups)} data set(s)",
        runs=[(r.label, run_page_path(r.label), run_setup(r), data_name(r)) for r in runs],
        data=script_json(board_document(runs)),
        script=template_text(__file__, "board.js"),
    )


def run_setup(run: BoardRun) -> str:
    """A run's methods and date in one line: its compressors, reader, judge and UTC end."""
    cfg = run.config
    names = ", ".join(c["name"] for c in cfg.get("compressors") or [])
    date = str(cfg.get("finished_at") or cfg.get("started_at") or "date not recorded")
    return f"{names}; {settings_line(cfg)}; {date}"


def run_page(run: RunResults, folder: Path) -> str:
    """The run's results page as `gacc report` writes it, from the verified run and the plots its folder has."""
    return render_page(run, page_plots(run, folder))


def page_plots(run: RunResults, folder: Path) -> list[Path]:
    """The plots of a run's folder that its page inlines, in the page's order (per setting in a run of several,
    in the order `setting_outputs` writes them)."""
    if several_settings(run.config):
        stems = [Path(n).stem for n in (SCORES_PNG, GAPS_PNG, OUTCOMES_PNG)]
        names = [f"{stem}.{setting_suffix(s)}.png" for s in config_settings(run.config) for stem in stems]
    else:
        names = [SCORES_PNG, GAPS_PNG, OUTCOMES_PNG]
        names += sorted(p.name for p in folder.iterdir() if is_language_png(p.name))
    return [folder / n for n in names if (folder / n).is_file()]


@collector_paused()  # the run is read, checked, shown and let go within one pause (`gacc_hf.collector`)
def with_page(stage: Path, seals: Path | None, path: Path, label: str) -> BoardRun:
    """The run verified (`verified`), its page written under `stage` where the bundle holds it: in the process
    that holds the run, so that only its cells travel back. With `seals` (a folder), a run whose exact files
    passed before is taken from its seal (`from_seal`), and one verified now without a warning is sealed."""
    name = seal_name(path, label) if seals is not None else None
    sealed = _sealed(stage, seals, name, path, label)
    if sealed is not None:
        return sealed
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = verify_folder(path)
    for w in caught:  # given again as they came, after the checks
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    content = run_page(run, path).encode("utf-8")
    _write_page(stage, label, content)
    board = board_run(path, label, run)
    if name and seals is not None and not caught and seal_name(path, label) == name:
        write_seal(name, seals, Sealed(board.payload, board.cells, content))
    return board


def from_seal(stage: Path, seals: Path | None, path: Path, label: str) -> BoardRun | None:
    """The run from its seal (`gacc_hf.results.seal`), its page written under `stage`; None where it has none."""
    return _sealed(stage, seals, seal_name(path, label) if seals is not None else None, path, label)


def _sealed(stage: Path, seals: Path | None, name: str | None, path: Path, label: str) -> BoardRun | None:
    """`from_seal` for a run whose seal name (`seal_name`) is known."""
    sealed = read_seal(name, seals) if name and seals is not None else None
    if sealed is None:
        return None
    _write_page(stage, label, sealed.page)
    return BoardRun(path, label, sealed.payload, sealed.cells)


def _write_page(stage: Path, label: str, content: bytes) -> None:
    page = stage / run_page_path(label)
    page.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(page, content)


def collect(
    paths: Sequence[str | Path],
    stage: Path,
    allow_mixed_data: bool = False,
    jobs: int | str = 1,
    seals: Path | None = None,
    progress: bool = False,
) -> tuple[list[BoardRun], list[str]]:
    """`load_runs` with each run's page written under `stage` (`with_page`); the runs with a seal are taken here,
    before any process starts for the others."""
    prepare = functools.partial(with_page, stage, seals)
    ready = functools.partial(from_seal, stage, seals) if seals is not None else None
    return load_runs(paths, allow_mixed_data, jobs, prepare, ready, progress)


def write_board(
    paths: Sequence[str | Path],
    out_dir: str | Path,
    allow_mixed_data: bool = False,
    jobs: int | str = 1,
    seals: Path | None = None,
    progress: bool = False,
) -> tuple[Path, list[str]]:
    """Verify the runs (on `jobs` processes; "auto": as many as `board_data.auto_jobs` says) and write the bundle
    into `out_dir` (new, empty, or a board written before, replaced whole); returns the board's path and the notes
    to print. With `seals` (a folder, e.g. `gacc_hf.results.seal.seals_dir()`), runs whose exact files were
    verified before are taken from their seals. With `progress`, a bar on a terminal counts the runs checked."""
    out = Path(out_dir)
    check_board_dir(out)
    stage = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(stage, ignore_errors=True)
    try:
        stage.mkdir(parents=True)
        runs, notes = collect(paths, stage, allow_mixed_data, jobs, seals, progress)
        write_atomic(stage / BOARD_FILE, render_board(runs).encode("utf-8"))
        write_atomic(stage / MANIFEST, _manifest(runs, out, allow_mixed_data))
        if out.exists():
            aside = out.with_name(f".{out.name}.old-{os.getpid()}")
            out.rename(aside)
            stage.rename(out)
            shutil.rmtree(aside)
        else:
            stage.rename(out)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return out / BOARD_FILE, notes


def _manifest(runs: Sequence[BoardRun], out: Path, allow_mixed_data: bool) -> bytes:
    paths = [Path(os.path.relpath(r.path.resolve(), out.resolve())).as_posix() for r in runs]
    return strict_json.dumps({"runs": paths, "allow_mixed_data": allow_mixed_data}, MANIFEST, indent=1).encode()


def read_board(folder: str | Path, stage: Path, jobs: int | str = 1) -> tuple[list[BoardRun], list[str]]:
    """The runs of a board written before, read and verified again from the folders it names, their pages
    rendered afresh under `stage`."""
    root = Path(folder)
    if not is_board(root) or not (root / MANIFEST).is_file():
        raise ResultsError(f"{root}: not a board (no {BOARD_FILE} and {MANIFEST} written by `gacc board`)")
    try:
        manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
        paths = [root / p for p in manifest["runs"]]
        allow = bool(manifest["allow_mixed_data"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ResultsError(f"{root / MANIFEST}: not a board manifest ({exc}); run `gacc board` again") from None
    return collect(paths, stage, allow, jobs)


def is_board(folder: Path) -> bool:
    """Whether a folder holds a board written by `write_board`."""
    page = folder / BOARD_FILE
    return page.is_file() and MARK.encode() in page.read_bytes()[:2000]


def check_board_dir(out: Path) -> None:
    """Refuse, before any work, an output folder that holds anything but a board: other files are never deleted."""
    if out.exists() and not is_board(out) and (not out.is_dir() or any(out.iterdir())):
        raise ResultsError(f"{out}: exists and is not a board; refusing to replace it, choose another --output-dir")
