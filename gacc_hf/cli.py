"""The `gacc` command: a thin argparse layer over the library; each subcommand lives in one function."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

DEFAULT_OUTPUT = "runs/latest"
DEFAULT_CACHE = ".gacc_cache"


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _ratios(text: str) -> list[float]:
    try:
        return [float(x) for x in _csv(text)]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"ratios must be comma-separated numbers, got {text!r}") from exc


def add_run_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run the benchmark and write a results folder")
    p.add_argument("--data", default="synthetic", help="dataset: 'sample', 'synthetic' or a path (default: synthetic)")
    p.add_argument(
        "--compressors",
        type=_csv,
        default=["truncate", "goal-lines"],
        help="comma-separated compressor names (default: truncate,goal-lines)",
    )
    p.add_argument("--reader", default="fields", help="reader name (default: fields)")
    p.add_argument("--judge", default="exact", help="judge name: exact, contains, f1 (default: exact)")
    p.add_argument("--ratios", type=_ratios, default=[0.1, 0.25], help="retention ratios (default: 0.1,0.25)")
    p.add_argument(
        "--conditions",
        type=_csv,
        default=["own", "none", "cross"],
        help="conditions among own,none,cross,full (default: own,none,cross)",
    )
    p.add_argument("--seed", type=int, default=0, help="run seed: cross-goal pairing and bootstrap (default: 0)")
    p.add_argument("--cache-dir", default=DEFAULT_CACHE, help=f"cache directory (default: {DEFAULT_CACHE})")
    p.add_argument("--output-dir", default=DEFAULT_OUTPUT, help=f"results folder (default: {DEFAULT_OUTPUT})")
    p.add_argument("--batch-size", type=int, default=32, help="items per model call and cache write (default: 32)")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for CIs, 0 = none")
    p.add_argument(
        "--on-error",
        choices=["raise", "record"],
        default="raise",
        help="stop at the first failed call (raise) or record it and go on (record)",
    )
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p.set_defaults(func=cmd_run)


def load_data(spec: str, seed: int = 0):  # type: ignore[no-untyped-def]
    """The dataset named on the command line."""
    if spec == "synthetic":
        from gacc_hf.synthetic import synthetic

        return synthetic(seed=seed, contexts=20)
    if spec == "sample":
        from gacc_hf.data import load_sample

        return load_sample("judge")
    raise SystemExit(f"gacc: unknown --data {spec!r}; use 'sample', 'synthetic' or a path")


def cmd_run(args: argparse.Namespace) -> int:
    from gacc_hf.report import write_results
    from gacc_hf.runner import run_benchmark

    dataset = load_data(args.data, args.seed)
    result = run_benchmark(
        dataset,
        compressor=args.compressors,
        reader=args.reader,
        judge=args.judge,
        ratios=args.ratios,
        conditions=args.conditions,
        cache_dir=args.cache_dir,
        seed=args.seed,
        n_bootstrap=args.bootstrap,
        batch_size=args.batch_size,
        on_error=args.on_error,
        progress=not args.no_progress,
    )
    print(result.score_table())
    print(f"calls: {result.calls}")
    print(f"integrity: {result.integrity}")
    path = write_results(result, args.output_dir)
    print(f"results: {path}")
    return 1 if any(result.integrity.values()) else 0


def add_install_metric_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("install-metric", help="make evaluate.load('gacc') resolve offline from any directory")
    p.set_defaults(func=cmd_install_metric)


def cmd_install_metric(args: argparse.Namespace) -> int:
    from gacc_hf.metric import install_metric

    print(install_metric())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gacc", description="GACC-Bench: goal-conditioned context compression")
    sub = parser.add_subparsers(dest="command", required=True)
    add_run_parser(sub)
    add_install_metric_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, RuntimeError) as exc:
        print(f"gacc {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
