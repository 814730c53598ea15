"""`gacc rescore`: a results folder's stored answers judged again by other judges (`gacc_hf.run.rescore`)."""

from __future__ import annotations

import argparse
import sys

from gacc_hf import errors
from gacc_hf.run.presets import RUN_DEFAULTS


def add_rescore_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "rescore",
        help="judge a results folder's stored answers with other judges into a new results folder "
        "(no compressor or reader call)",
    )
    p.add_argument("run_dir", metavar="RUN", help="results folder written by `gacc run` (or by `gacc rescore`)")
    p.add_argument("--judge", required=True, help="the judges, comma-separated: exact,f1,contains,...")
    p.add_argument("--labels", metavar="FILE", help="a labels file: each judge's accuracy against a person's verdicts")
    p.add_argument("--output-dir", help="the new results folder, new or empty (default: RUN-rescored)")
    p.add_argument("--cache-dir", help=f"cache directory (default: {RUN_DEFAULTS['cache_dir']})")
    p.add_argument(
        "--on-error",
        choices=["raise", "record"],
        default="raise",
        help="stop at the first failed verdict (raise, the default) or record it and go on (record)",
    )
    p.add_argument("--batch-size", type=int, default=RUN_DEFAULTS["batch_size"], help="items per judge call")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p.set_defaults(func=cmd_rescore)


def cmd_rescore(args: argparse.Namespace) -> int:
    from gacc_hf.run.rescore import rescore

    judges = [j.strip() for j in args.judge.split(",") if j.strip()]
    if not judges:
        raise ValueError("--judge names no judge")
    output = args.output_dir or f"{str(args.run_dir).rstrip('/')}-rescored"
    result = rescore(
        args.run_dir,
        judges if len(judges) > 1 else judges[0],
        output,
        cache_dir=args.cache_dir or RUN_DEFAULTS["cache_dir"],
        on_error=args.on_error,
        batch_size=args.batch_size,
        progress=not args.no_progress,
        labels=args.labels,
        command=["gacc", *getattr(args, "argv", [])],
    )
    print(result.score_table())
    print(f"\nwrote {output} (judge calls: {result.calls.get('judge', 0)}; no compressor or reader call)")
    if result.errors:
        print(f"{len(result.errors)} judge failure(s) recorded; rerun the same command to retry them", file=sys.stderr)
        return errors.MODEL_FAILURES
    return errors.OK
