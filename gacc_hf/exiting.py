"""How a `gacc` process ends: Python's own shutdown, then no C++ teardown.

When a command is done, the process still holds native threads that Python neither started nor can stop:
pyarrow's CPU pool (`arrow::internal::ThreadPool` workers) and its jemalloc background thread, OpenBLAS's
server threads (numpy), torch's pools and, in a launch, gloo's and the rendezvous store's. Python's exit
finalizes the interpreter and then runs these libraries' C++ static destructors; a pool whose worker is
still joinable when its `std::thread` is destroyed aborts the process ("terminate called without an active
exception", SIGABRT, exit 134) after the command's output was written, now and then, more often on a
loaded machine (1 in 40 of `gacc data validate` on a parquet file, with no torch in the process).

`exit_process` does what Python's exit does before that point, in its order (`Py_FinalizeEx`): it waits
for Python's own non-daemon threads (`threading._shutdown`, which also lets idle thread pools end), runs
the `atexit` functions (logging's flush, temporary folders removed, child processes ended), flushes
stdout, stderr and C's stdio buffers, and ends the process with `os._exit`. Left out are the teardown of
the interpreter's modules and the native libraries' destructors: by then files are closed and cache
transactions committed, and the system takes back memory, threads and sockets, so they have nothing to
save. Only the command's entry points (`gacc`, `python -m gacc_hf`) end this way: `gacc_hf.cli.main`
called as a function returns its exit code.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import sys
import threading
from typing import NoReturn


def exit_process(code: int) -> NoReturn:
    """End this process with `code` after Python's shutdown steps, without the native libraries' teardown."""
    try:
        shutdown = getattr(threading, "_shutdown", None)  # what the interpreter calls first at exit
        if shutdown is not None:
            shutdown()
        atexit._run_exitfuncs()
    finally:
        flush_output()
        os._exit(code)


def flush_output() -> None:
    """Write out what Python's streams and C's stdio (native libraries' `printf`) still hold."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):  # closed pipe or stream, or none at all
            stream.flush()
    with contextlib.suppress(OSError, AttributeError, TypeError):  # no C library to ask (not a POSIX system)
        ctypes.CDLL(None).fflush(None)
