"""One writer per results folder: a run that writes `--output-dir X` holds the lock file `.X.lock` beside it.

The lock is an advisory `flock` on that file, which holds the pid of its holder (for the message). The
kernel drops the lock when its holder dies, so a lock file left by a killed run is stale and simply taken
over; a clean exit deletes the file. A second run writing the same folder while the first is alive is
refused before any work, instead of silently replacing the first one's results. The processes started by
`--num-processes` run under their launcher's lock (named in `HELD_ENV`); under a launcher gacc did not
start (accelerate launch, torchrun), rank 0 takes it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from gacc_hf.results.atomic import target_path
from gacc_hf.results.layout import ResultsError

HELD_ENV = "GACC_OUTPUT_LOCK_HELD"


def lock_path(out_dir: str | Path) -> Path:
    out = target_path(out_dir)
    return out.with_name(f".{out.name}.lock")


def _holder(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip() or "unknown"
    except OSError:
        return "unknown"


def _take(path: Path) -> int:
    """An open descriptor of `path` holding its exclusive lock; ResultsError when a live run holds it."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            out = path.with_name(path.name[1 : -len(".lock")])
            raise ResultsError(
                f"{out}: another gacc run (pid {_holder(path)}) is writing this results folder now; wait for it "
                "to finish, or choose another --output-dir"
            ) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:  # not a file its previous holder deleted between our open and our lock
            with contextlib.suppress(OSError):  # the pid only names the holder in a message (a full disk)
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
            return fd
        os.close(fd)


@contextlib.contextmanager
def output_lock(out_dir: str | Path | None, rank: int = 0) -> Iterator[None]:
    """Hold the lock of results folder `out_dir` for the block (None: a new folder of its own, no lock)."""
    if out_dir is None or rank != 0 or not str(out_dir).strip():
        yield
        return
    path = lock_path(out_dir)
    if os.environ.get(HELD_ENV) == str(path.absolute()):  # a process of a launch: its launcher holds it
        yield
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = _take(path)
    except OSError:  # read-only, below a file, ...: no run can write there, and the folder checks that
        yield  # follow refuse it with their own message
        return
    os.environ[HELD_ENV] = str(path.absolute())  # inherited by the processes `--num-processes` launches
    try:
        yield
    finally:
        os.environ.pop(HELD_ENV, None)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        os.close(fd)
