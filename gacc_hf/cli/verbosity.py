"""How the `gacc` command speaks: the --verbosity option and where its notes and the libraries' logs go."""

from __future__ import annotations

import argparse
import logging
import os
import sys

VERBOSITY = ("DEBUG", "INFO", "WARNING", "ERROR")


log = logging.getLogger("gacc_hf")


def add_verbosity(parser: argparse.ArgumentParser, default: str) -> None:
    parser.add_argument(
        "--verbosity",
        type=str.upper,
        choices=VERBOSITY,
        default=default,
        help="DEBUG (also the resolved run), INFO (progress bars and notes; the default), WARNING or ERROR "
        "(only the results and the errors)",
    )


class _Stderr(logging.Handler):
    """Writes to the sys.stderr of the moment (tests and notebooks swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        print(self.format(record), file=sys.stderr)


def configure_logging(level: str) -> None:
    """Our notes at `level`; the libraries' at WARNING (DEBUG passes theirs through too)."""
    import datasets

    if not any(isinstance(h, _Stderr) for h in log.handlers):
        handler = _Stderr()
        handler.setFormatter(logging.Formatter("gacc: %(message)s"))
        log.addHandler(handler)
        log.propagate = False
    log.setLevel(level)
    libraries = logging.DEBUG if level == "DEBUG" else max(logging.WARNING, logging.getLevelName(level))
    datasets.utils.logging.set_verbosity(libraries)
    if libraries > logging.INFO:
        datasets.disable_progress_bars()
    else:
        datasets.enable_progress_bars()
    if "transformers" in sys.modules:
        sys.modules["transformers"].utils.logging.set_verbosity(libraries)
    else:  # read by transformers when it is first imported
        os.environ["TRANSFORMERS_VERBOSITY"] = logging.getLevelName(libraries).lower()
