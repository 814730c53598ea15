"""The local servers' common ground (`gacc view --serve`, `gacc serve-test`): 127.0.0.1 only, a port that cannot
be taken said in one line naming it, and an end by Ctrl-C or SIGTERM that is a normal stop, not a failure.

Ctrl-C or SIGTERM ends a server with "stopped serving" and exit 0, as `python -m http.server` ends on Ctrl-C:
stopping a server is how it is meant to end, not an error and not an interrupted job to resume.
"""

from __future__ import annotations

import errno
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

HOST = "127.0.0.1"
FIRST_UNPRIVILEGED_PORT = 1024
T = TypeVar("T")


def check_port(option: str, port: int) -> None:
    """ValueError naming `option` for a port outside 0 to 65535 (0: any free port)."""
    if not 0 <= port <= 65535:
        raise ValueError(f"{option} {port}: a port is 0 to 65535 (0: any free port)")


def bind(option: str, port: int, listen: Callable[[], T]) -> T:
    """`listen()` (which binds HOST:`port`), with a port in use or not allowed to this user said in one line
    naming the port (ValueError: exit 2); other OS errors pass unchanged."""
    check_port(option, port)
    try:
        return listen()
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ValueError(
                f"{option} {port}: port {port} on {HOST} is in use (another server?); "
                f"pass another port, or 0 for any free one"
            ) from None
        if exc.errno in (errno.EACCES, errno.EPERM):
            below = f" (below {FIRST_UNPRIVILEGED_PORT}: a privileged port)" if port < FIRST_UNPRIVILEGED_PORT else ""
            raise ValueError(
                f"{option} {port}: port {port} on {HOST} may not be opened by this user{below}; "
                f"pass a port from {FIRST_UNPRIVILEGED_PORT} up, or 0 for any free one"
            ) from None
        raise


class Stopped(BaseException):
    """SIGTERM to a server: a BaseException, as KeyboardInterrupt is, so that no `except Exception` takes it."""


@contextmanager
def until_stopped(command: str) -> Iterator[None]:
    """Run a server's loop inside this: Ctrl-C or SIGTERM ends it with "`command`: stopped serving" on stderr
    (the caller returns 0). SIGTERM is caught only in the main thread, where Python can handle signals."""
    import sys

    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _raise_stopped)
    try:
        yield
    except (KeyboardInterrupt, Stopped):
        print(f"{command}: stopped serving", file=sys.stderr, flush=True)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _raise_stopped(signum: int, frame: object) -> None:
    raise Stopped
