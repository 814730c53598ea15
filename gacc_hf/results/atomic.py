"""All-or-nothing folder writes: staging, the renames that move a folder into place, recovery, `runs/latest`.

A folder is built in a hidden temporary sibling (`.NAME.tmp-PID-HEX`) and moved into place with one
`os.rename`. Replacing an existing folder takes three steps: rename it aside (`.NAME.old`), rename the new one
in, delete the aside. A kill at any moment therefore leaves, under NAME, either the previous complete folder or
the new complete one, never a mix, and no file of the previous run survives in the new one. The one in-between
state, NAME missing and `.NAME.old` present, is the previous complete folder: `read_folder` reads it there, and
the next writer (`recover`) renames it back or, when NAME exists, deletes it with any dead writer's temporary
folder.

Kept runs: by default each run gets its own folder `runs/<UTC start>-<data>-<compressors>` and the symlink
`runs/latest` is repointed at the newest in one `os.replace`.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from gacc_hf.results.layout import LATEST, RESULTS_FILE, RUNS_DIR, ResultsError


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file renamed into place (readers never see a partial file)."""
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def aside_path(out: Path) -> Path:
    return out.with_name(f".{out.name}.old")


def target_path(out_dir: str | Path) -> Path:
    """The folder a path names; a symlink (`runs/latest`) names the folder it points at."""
    out = Path(out_dir)
    return out.resolve() if out.is_symlink() else out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover(out_dir: str | Path) -> None:
    """Finish or undo a replace that was interrupted, and drop the temporary folders of dead writers."""
    out = target_path(out_dir)
    aside = aside_path(out)
    if aside.is_dir():
        if out.exists():
            shutil.rmtree(aside)  # the new folder was moved in: the previous one is garbage
        else:
            os.rename(aside, out)  # killed between the two renames: the previous folder comes back
    for tmp in out.parent.glob(f".{out.name}.tmp-*"):
        match = re.fullmatch(rf"\.{re.escape(out.name)}\.tmp-(\d+)-[0-9a-f]+", tmp.name)
        if tmp.is_dir() and match and not _alive(int(match.group(1))):
            shutil.rmtree(tmp, ignore_errors=True)


def is_results_folder(path: str | Path) -> bool:
    """Whether `path` holds a run (its results.json, or the aside copy an interrupted replace left)."""
    out = target_path(path)
    return (out / RESULTS_FILE).is_file() or (aside_path(out) / RESULTS_FILE).is_file()


def check_output_dir(path: str | Path, overwrite: bool) -> None:
    """Refuse, before any work, an output folder that holds another run (unless `overwrite`) or other files."""
    _refuse_foreign(target_path(path))
    if is_results_folder(path) and not overwrite:
        raise ResultsError(
            f"{path}: holds another run ({RESULTS_FILE}); pass --overwrite to replace it, or choose another "
            "--output-dir (without --output-dir every run gets its own folder under runs/)"
        )


def _refuse_foreign(out: Path) -> None:
    """Only a results folder or an empty one may be replaced: other files are never deleted."""
    if out.exists() and not is_results_folder(out) and (not out.is_dir() or any(out.iterdir())):
        raise ResultsError(f"{out}: exists and is not a results folder; refusing to replace it, choose another")


def replace_folder(out_dir: str | Path, fill: Callable[[Path], object]) -> Path:
    """Build a folder with `fill(staging_dir)` and move it into place atomically (see the module doc).

    The folder replaced must be a results folder or empty: other files are never deleted.
    """
    out = target_path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    recover(out)
    _refuse_foreign(out)
    stage = out.with_name(f".{out.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    stage.mkdir()
    try:
        fill(stage)
        _fsync_dir(stage)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    replacing = out.exists()
    if replacing:
        os.rename(out, aside_path(out))
    os.rename(stage, out)
    _fsync_dir(out.parent)
    if replacing:
        shutil.rmtree(aside_path(out))
    return out


def _slug(part: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+_-]+", "_", part).strip("._-")


def new_run_dir(started: datetime, parts: Sequence[str], root: str | Path = RUNS_DIR) -> Path:
    """A fresh folder name `<root>/<UTC start>-<parts...>` (lm-eval style), unique under `root`."""
    stamp = started.strftime("%Y%m%dT%H%M%SZ")
    name = "-".join(filter(None, [stamp, *(_slug(p)[:40] for p in parts)]))
    path, n = Path(root) / name, 1
    while path.exists() or aside_path(path).exists():
        n += 1
        path = Path(root) / f"{name}-{n}"
    return path


def point_latest(run_dir: str | Path) -> Path:
    """Repoint `<parent>/latest` at `run_dir` in one step (a temporary symlink moved over it).

    A real folder left there by an older gacc-hf is kept, renamed to a run folder of its own.
    """
    target = Path(run_dir)
    link = target.parent / LATEST
    if link.is_dir() and not link.is_symlink():
        os.rename(link, new_run_dir(datetime.fromtimestamp(link.stat().st_mtime, UTC), ["earlier"], link.parent))
    tmp = link.with_name(f".{LATEST}.tmp-{os.getpid()}")
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    os.symlink(target.name, tmp)
    os.replace(tmp, link)
    return link
