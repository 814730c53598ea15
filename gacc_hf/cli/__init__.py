"""The `gacc` command: a thin argparse layer over the library.

`app` builds the parser and dispatches; `run`, `data`, `results` (report, compare, publish), `cache` and `info`
(list, install-metric) hold one subcommand family each; `verbosity` sets up logging.
"""

from gacc_hf.cli.app import build_parser, entry, main

__all__ = ["build_parser", "entry", "main"]
