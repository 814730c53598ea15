"""Build this folder (the bundled sample as a Hub-ready dataset: Parquet for the `public` and `judge` views, a
generated card and the benchmark's `eval.yaml`) and, with `--push OWNER/NAME`, upload it.

    python dataset_scripts/gacc_bench/build.py                 # rewrite this folder from the package's sample
    python dataset_scripts/gacc_bench/build.py --output DIR    # write it elsewhere
    python dataset_scripts/gacc_bench/build.py --push OWNER/NAME [--dry-run]

It is the `gacc data build sample <folder>` and `gacc data push` commands, kept beside the data they write so the
folder says how it is made. Exit codes are the `gacc` command's.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gacc_hf.cli import main

HERE = Path(__file__).resolve().parent


def build(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=HERE, help="folder to write (default: this folder)")
    parser.add_argument("--push", metavar="REPO_ID", default=None, help="then upload it to this Hub dataset repo")
    parser.add_argument("--dry-run", action="store_true", help="with --push: print the upload plan and stop")
    args = parser.parse_args(argv)
    code = main(["data", "build", "sample", str(args.output), *(["--repo-id", args.push] if args.push else [])])
    if code or not args.push:
        return code
    return main(["data", "push", str(args.output), args.push, *(["--dry-run"] if args.dry_run else [])])


if __name__ == "__main__":
    sys.exit(build())
