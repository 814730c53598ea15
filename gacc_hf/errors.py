"""Exit codes of the `gacc` command, one meaning each, and the one-line message of every expected failure.

    0  success
    1  the run finished but an integrity counter is not 0 (budget_violations, count_errors, exposures)
    2  bad input, bad configuration or environment: arguments, data files, permissions, the cache,
       an unreachable server or one whose usage is not credible, a --max-cost below one call's reserve;
       nothing was computed, or what was is in the cache
    3  the run did not finish its calls: model failures recorded (--on-error record), the first failed
       call (--on-error raise), or a spending limit reached (--max-calls, --max-cost); what was done is
       stored: rerun the same command to retry or go on
    4  an unexpected error (a bug): the traceback is printed; please report it
    5  a process of a multi-process run died of a signal (killed, aborted, out of memory); the others
       were stopped; rerun the same command to resume from the cache

Messages go through `gacc_hf.redaction.redact`, so no credential reaches the terminal.
"""

from __future__ import annotations

import sqlite3

from gacc_hf.redaction import redact

OK, INTEGRITY, BAD_INPUT, MODEL_FAILURES, BUG, RANK_DIED = 0, 1, 2, 3, 4, 5

EPILOG = """exit codes:
  0  success
  1  the run finished but an integrity counter is not 0
  2  bad input, configuration or environment (arguments, data, files, permissions, cache, server)
  3  calls left undone: model failures (--on-error) or a spending limit (--max-calls, --max-cost); rerun to go on
  4  an unexpected error (a bug; the traceback is printed)
  5  a process of a --num-processes run died of a signal; rerun the same command to resume
--verbose (anywhere on the line) prints the traceback of any error."""


def exit_code(exc: BaseException) -> int:
    """The exit code of an exception that reached the command line: the one its class states (`exit_code`:
    a model failure, a spending limit, a rank's death), so this module needs none of the stages that raise
    them, else by its kind."""
    if isinstance(code := getattr(type(exc), "exit_code", None), int):
        return code
    if isinstance(exc, OSError | sqlite3.Error | ValueError | RuntimeError):
        return BAD_INPUT
    return BUG


def describe(exc: BaseException) -> str:
    """What went wrong, said once, with the file / row / item the exception names (credentials hidden)."""
    if isinstance(exc, OSError) and exc.filename is not None:
        where = f"{exc.filename}" + (f" -> {exc.filename2}" if exc.filename2 else "")
        text = f"{where}: {exc.strerror or exc}: check the path, its permissions and the free space"
    elif isinstance(exc, sqlite3.Error):
        text = f"cache database error: {exc}: move the cache folder aside (or pass another --cache-dir) and rerun"
    else:
        text = str(exc) or type(exc).__name__
    if exit_code(exc) == BUG:
        text = f"unexpected {type(exc).__name__}: {text}"
    return redact(text)
