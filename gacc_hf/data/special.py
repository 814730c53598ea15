"""Names for paths that exist but are neither a file nor a folder, so a message never says they are missing."""

from __future__ import annotations

import stat
from pathlib import Path

_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def special_file(path: str | Path) -> str | None:
    """What `path` is when it exists but is not a regular file or a folder (None otherwise).

    >>> special_file("/dev/null")
    'a character device'
    """
    try:
        mode = Path(path).stat().st_mode
    except OSError:
        return None
    return next((name for test, name in _KINDS if test(mode)), None)


def not_data(path: str | Path) -> str:
    """Why a path that is not a regular file or a folder cannot be data: what it is, or that it is missing."""
    what = special_file(path)
    return (
        f"{what}, not a data file or folder: give a .jsonl/.parquet/.csv/.tsv file or a folder"
        if what
        else "no such file or folder"
    )
