"""The `gacc` parser and dispatch: each subcommand family lives in its own module beside this one."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from gacc_hf import errors
from gacc_hf.cli.board import add_board_parser
from gacc_hf.cli.cache import add_cache_parser
from gacc_hf.cli.data import add_data_parser
from gacc_hf.cli.hints import HintingParser
from gacc_hf.cli.info import add_install_metric_parser, add_list_parser
from gacc_hf.cli.rescore import add_rescore_parser
from gacc_hf.cli.results import add_compare_parser, add_publish_parser, add_report_parser, add_view_parser
from gacc_hf.cli.run import add_run_parser
from gacc_hf.cli.serve_test import add_serve_test_parser
from gacc_hf.cli.verbosity import add_verbosity, configure_logging
from gacc_hf.exiting import exit_process


def build_parser() -> argparse.ArgumentParser:
    from gacc_hf import __version__

    parser = HintingParser(
        prog="gacc",
        description="GACC-Bench: goal-conditioned context compression",
        epilog=errors.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--verbose", action="store_true", help="print the traceback of an error (anywhere on the line)")
    parser.add_argument("--version", action="version", version=f"gacc {__version__}")
    add_verbosity(parser, "INFO")
    sub = parser.add_subparsers(dest="command", required=True)
    add_run_parser(sub)
    add_list_parser(sub)
    add_install_metric_parser(sub)
    add_data_parser(sub)
    add_report_parser(sub)
    add_view_parser(sub)
    add_compare_parser(sub)
    add_rescore_parser(sub)
    add_publish_parser(sub)
    add_board_parser(sub)
    add_cache_parser(sub)
    add_serve_test_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit code (see `gacc_hf.errors`). Expected failures print one line on stderr."""
    given = list(sys.argv[1:] if argv is None else argv)
    verbose = "--verbose" in given
    args = build_parser().parse_args([a for a in given if a != "--verbose"])
    args.argv = given  # relaunched as is by `--num-processes`
    configure_logging(args.verbosity)
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except BrokenPipeError:  # `gacc ... | head`: the reader has all it wants
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return errors.OK
    except KeyboardInterrupt:
        print(f"gacc {args.command}: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    except Exception as exc:
        code = errors.exit_code(exc)
        if verbose or code == errors.BUG:
            print(_traceback(exc), file=sys.stderr, end="")
        print(f"gacc {args.command}: error: {errors.describe(exc)}", file=sys.stderr)
        return code


def entry() -> NoReturn:
    """The `gacc` command and `python -m gacc_hf`: `main()`, then the process ends through
    `gacc_hf.exiting.exit_process` (no native library's teardown can abort it after its work)."""
    try:
        code = main()
    except SystemExit as exc:  # argparse's own exits: --help, --version, a usage error
        code = _system_exit_code(exc)
    exit_process(code)


def _system_exit_code(exc: SystemExit) -> int:
    """The status Python would give `exc` at exit (a message is printed, as Python prints it, with status 1)."""
    if exc.code is None or isinstance(exc.code, int):
        return exc.code or 0
    print(exc.code, file=sys.stderr)
    return 1


def _traceback(exc: BaseException) -> str:
    from gacc_hf.redaction import redact

    return redact("".join(traceback.format_exception(exc)))  # a traceback quotes messages: hide credentials
