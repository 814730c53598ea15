"""Whether a folder a command will write (results, cache, tracker logs) can be written, asked before any work."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def writable_folder(path: str | Path, what: str, *, staged: bool = False) -> None:
    """Raise ValueError unless `path` is a folder that can be written, or can be created (nothing is left:
    an empty folder is made and removed in the first existing one).

    `staged`: the folder is written as a sibling and renamed into place, so its parent must be writable.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{what} {path} is a file, not a folder: pass another path")
    probe = path.parent if staged else path
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise ValueError(f"{what} {path} cannot be created: {probe} is a file")
    try:  # a real try: os.access says yes to root on /sys and on some network file systems
        os.rmdir(tempfile.mkdtemp(prefix=".gacc-write-check-", dir=probe))
    except OSError as exc:
        raise ValueError(f"{what} {path} is not writable ({probe}: {exc.strerror or exc})") from None
