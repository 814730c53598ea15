"""Pure work done in a process of its own while this one waits on model calls.

What the matcher finds in a release's memories costs about a minute of CPU, all of it in Python: on the main
process it holds the GIL the HTTP threads need, and after the calls it lengthens the run. Started before the
reader's calls, in a spawned process (nothing of this process's threads or open files is inherited), it is
done by the time they are. Its arguments and result travel pickled; a process that dies or fails gives no
result, and the work is then done here, with a warning, so the run's outcome never depends on it.
The process ignores SIGINT (Ctrl-C reaches a terminal's whole process group, and a launcher's agent
signals a rank's): its parent ends it, and it would otherwise print a traceback of whatever it was
importing when the key was pressed.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import signal
import threading
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from typing import Any, Generic, TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)


def _work(conn: Connection, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        result: tuple[bool, Any] = (True, fn(*args))
    except BaseException as exc:  # reported to the parent, which does the work itself
        result = (False, f"{type(exc).__name__}: {exc}")
    conn.send(result)
    conn.close()


@contextlib.contextmanager
def _interrupts_ignored() -> Iterator[None]:
    """SIGINT ignored meanwhile (a start takes milliseconds), where this thread may set it: the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        if before is not None:  # None: set outside Python, which cannot be restored from here
            signal.signal(signal.SIGINT, before)


class Aside(Generic[T]):
    """`fn(*args)`, in a process of its own when `apart`, else here when its result is asked for.

    Use it as a context manager: leaving it ends the process whether or not its result was taken."""

    def __init__(self, fn: Callable[..., T], *args: Any, apart: bool) -> None:
        self._fn, self._args = fn, args
        self._proc: Any = None
        if apart:
            ctx = multiprocessing.get_context("spawn")
            self._conn, child = ctx.Pipe(duplex=False)
            self._proc = ctx.Process(target=_work, args=(child, fn, args), name="gacc-aside", daemon=True)
            with _interrupts_ignored():  # from its first instruction: the child inherits the disposition
                self._proc.start()
            child.close()

    def result(self) -> T:
        """The work's result: from the process, or worked out here if it has none."""
        if self._proc is None:
            return self._fn(*self._args)
        try:
            done, value = self._conn.recv()
        except (EOFError, OSError) as exc:
            done, value = False, f"the process ended without a result ({type(exc).__name__})"
        self.close()
        if done:
            return value
        name = getattr(self._fn, "__qualname__", "the work")
        log.warning("%s in a process of its own failed (%s); doing it here instead", name, value)
        return self._fn(*self._args)

    def close(self) -> None:
        if self._proc is None:
            return
        if self._proc.is_alive():
            self._proc.kill()
        self._proc.join()
        self._conn.close()
        self._proc = None

    def __enter__(self) -> Aside[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
