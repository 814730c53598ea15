"""`gacc run`: its options, the checks made before any model is called, and the run itself."""

from __future__ import annotations

import argparse
import logging
import sys
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gacc_hf import errors
from gacc_hf.cli.trackers import add_tracker_options, check_tracker_options, log_to_trackers
from gacc_hf.cli.verbosity import add_verbosity, log
from gacc_hf.results.writable import writable_folder

if TYPE_CHECKING:
    from gacc_hf.cost.limits import SpendingLimits
    from gacc_hf.run.config import RunConfig
    from gacc_hf.run.rank import Topology

DEFAULT_RUNS = "runs"


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _ratios(text: str) -> list[float | Fraction]:
    """`0.25,1/3`: a decimal is read as written (0.29 is exactly 29/100), `p/q` as the exact fraction."""
    from gacc_hf.run.config import as_ratio

    try:
        return [as_ratio(x) if "/" in x else float(x) for x in _csv(text)]
    except (ValueError, ZeroDivisionError) as exc:
        raise argparse.ArgumentTypeError(
            f"ratios must be comma-separated numbers or p/q fractions, got {text!r}"
        ) from exc


_RATIO_HELP = (
    "decimals as written (0.29 is exactly 29/100) or exact fractions such as 1/3; "
    "a decimal for a third (0.333) is a little under it, so L can be one token less"
)


def _limit(text: str) -> int | float:
    from gacc_hf.run.config import RunConfigError, parse_limit

    try:
        return parse_limit(text)
    except RunConfigError as exc:
        note = "unlike lm-eval's --limit, which counts examples, this counts groups: a goal with its questions"
        raise argparse.ArgumentTypeError(f"{exc} ({note})") from exc


def add_run_parser(sub: argparse._SubParsersAction) -> None:
    from gacc_hf.run.presets import DEFAULT_PRESET

    p = sub.add_parser(
        "run",
        help="run the benchmark and write a results folder",
        description="Run settings come from the preset, then the --config file, then the options given here. "
        f"Defaults below are those of the {DEFAULT_PRESET!r} preset.",
    )
    # Every setting defaults to None (not given), so that a config file can fill what the command line leaves.
    _add_experiment_options(p)
    _add_execution_options(p)
    add_verbosity(p, argparse.SUPPRESS)
    p.set_defaults(func=cmd_run)


def _add_experiment_options(p: argparse.ArgumentParser) -> None:
    """What is measured: preset, config, data, methods, ratios, conditions, seed."""
    from gacc_hf.cli.run_selection import add_selection_options
    from gacc_hf.methods import BUILTINS
    from gacc_hf.run.conditions import CONDITIONS
    from gacc_hf.run.config import parse_methods
    from gacc_hf.run.presets import DEFAULT_PRESET, PRESETS, RUN_DEFAULTS

    main = PRESETS[DEFAULT_PRESET]
    p.add_argument(
        "--preset",
        help=f"named experiment: {', '.join(f'{k} ({v.description})' for k, v in PRESETS.items())} "
        f"(default: {DEFAULT_PRESET}; `gacc list presets`)",
    )
    p.add_argument("--config", help="run config file (.yaml/.toml), e.g. the config.yaml of a results folder")
    p.add_argument(
        "--data",
        help="dataset: 'sample' (English; 'sample:zh' Chinese, 'sample:all' both), "
        "'synthetic[:contexts=N,seed=S,...]', a .jsonl/.parquet/.csv/.tsv file or folder, a "
        f"save_to_disk folder or a Hub repo id (default: {main.data})",
    )
    p.add_argument("--split", help="split to run when the data has several")
    p.add_argument(
        "--columns",
        type=_columns,
        help="the data's names for schema columns, e.g. context=text,goal=user_goal,question=query (data in "
        "another layout; one row per question is grouped by goal_id; IDs the data lacks are derived from its text)",
    )
    p.add_argument(
        "--limit",
        type=_limit,
        help="run on the first N groups of each language only, or a fraction (0.1): a partial run, a quick try",
    )
    add_selection_options(p)
    p.add_argument(
        "--compressors", type=_csv, help=f"comma-separated compressor names (default: {','.join(main.compressors)})"
    )
    p.add_argument("--reader", type=parse_methods, help=f"reader name, or several comma-separated ({main.reader})")
    p.add_argument(
        "--judge",
        type=parse_methods,
        help=f"judge name: {', '.join(e.name for e in BUILTINS if e.role == 'judge')}, or a prefixed one; several "
        f"comma-separated (default: {main.judge}: a small reader answers in sentences)",
    )
    p.add_argument(
        "--ratios",
        type=_ratios,
        help=f"retention ratios (default: {','.join(f'{r:g}' for r in main.ratios)}): {_RATIO_HELP}",
    )
    p.add_argument(
        "--conditions",
        type=_csv,
        help=f"conditions among {','.join(CONDITIONS)} (full and oracle are ceilings, closed the floor: bounds, "
        "not methods; "
        f"default: {','.join(main.conditions)})",
    )
    p.add_argument(
        "--seed", type=int, help=f"run seed: cross-goal pairing and bootstrap (default: {RUN_DEFAULTS['seed']})"
    )


def _add_execution_options(p: argparse.ArgumentParser) -> None:
    """How it runs: cache, output folder, batching, bootstrap, failures, progress, processes."""
    from gacc_hf.run.presets import RUN_DEFAULTS

    p.add_argument("--cache-dir", help=f"cache directory (default: {RUN_DEFAULTS['cache_dir']})")
    p.add_argument(
        "--output-dir",
        default=None,
        help=f"results folder (default: a new {DEFAULT_RUNS}/<UTC time>-<data>-<compressors>, with "
        f"{DEFAULT_RUNS}/latest pointing at it)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace the run an explicit --output-dir holds")
    p.add_argument(
        "--batch-size", type=int, help=f"items per model call and cache write (default: {RUN_DEFAULTS['batch_size']})"
    )
    p.add_argument(
        "--bootstrap", type=int, help=f"bootstrap resamples for CIs, 0 = none (default: {RUN_DEFAULTS['n_bootstrap']})"
    )
    p.add_argument(
        "--on-error",
        choices=["raise", "record"],
        help="stop at the first failed call (raise, the default) or record it and go on (record)",
    )
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p.add_argument(
        "--max-calls",
        type=int,
        help="stop before the model call that would pass N calls made by this run (cache hits are free); exit 3, "
        "everything done stored: the same command goes on",
    )
    p.add_argument(
        "--max-cost",
        type=float,
        help="stop before the call that could pass this cost at the --prices given (each call counted at its "
        "bound until its server reports its usage); exit 3, everything done stored",
    )
    p.add_argument(
        "--prices",
        metavar="FILE",
        help="prices file (YAML, per million prompt and completion tokens): the run's cost per role, method, "
        "cell and answered question; every openai: method must have a price",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="validate everything, load no model, send no request, and print the calls, tokens (and, with "
        "--prices, the cost) the run needs and how many the cache already holds",
    )
    p.add_argument("--format", choices=["text", "json"], help="--dry-run output (default: text); only with --dry-run")
    p.add_argument(
        "--num-processes",
        type=int,
        default=1,
        help="run on N local processes through `accelerate launch`, sharded by context (default: 1)",
    )
    add_tracker_options(p)


def _columns(text: str) -> dict[str, str]:
    """`--columns context=text,...`, its errors shown by argparse as they are."""
    from gacc_hf.data.columns import parse_columns

    try:
        return parse_columns(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def resolve_run(args: argparse.Namespace) -> RunConfig:
    """The run the options ask for: preset, then the --config file, then the options given."""
    from gacc_hf.cli.run_selection import given_goals, with_benchmark
    from gacc_hf.run import config as run_config

    file_values = run_config.load(args.config) if args.config else {}
    given = {key: getattr(args, key, None) for key in run_config.KEYS} | {"goals": given_goals(args)}
    run = run_config.resolve(file_values, given, args.config or "the config")
    set_by = {key: str(args.config) for key in file_values} | {k: f"--{k}" for k, v in given.items() if v is not None}
    return with_benchmark(run, args, set_by)


def check_run(run: RunConfig, num_processes: int) -> None:
    """Refuse impossible settings (from the options or a config file) before any work, one message each."""
    from gacc_hf.limits import check_resampling
    from gacc_hf.redaction import redact
    from gacc_hf.run.config import as_list, check_method_names
    from gacc_hf.run.goals import check_goal_ids

    for name, values in {"compressors": run.compressors, "conditions": run.conditions, "ratios": run.ratios}.items():
        if not values:
            raise ValueError(f"--{name} names nothing; give at least one (comma-separated)")
    if not run.data.strip():
        raise ValueError("--data is empty; name one")
    check_method_names(run)
    if run.goals is not None:
        check_goal_ids(run.goals, "--goals")
    check_resampling(run.bootstrap, run.seed)  # as `gacc compare` checks its own
    for name, (value, low) in {"batch-size": (run.batch_size, 1), "num-processes": (num_processes, 1)}.items():
        if value < low:
            raise ValueError(f"--{name} must be >= {low}, got {value}")
    specs = {
        "data": [run.data],
        "compressors": run.compressors,
        "reader": as_list(run.reader),
        "judge": as_list(run.judge),
    }
    for name, values in specs.items():
        for spec in values:
            if redact(spec) != spec:  # refused here, before a launch could echo the command line
                raise ValueError(
                    f"--{name} {redact(spec)}: credentials in a URL are never sent; remove them "
                    "(an openai: server's key goes in $OPENAI_API_KEY)"
                )


def spending_limits(args: argparse.Namespace) -> SpendingLimits:
    """`--max-calls`, `--max-cost` and `--prices`, checked before any work (a bad value or file is exit 2)."""
    from gacc_hf.cost.limits import SpendingLimits
    from gacc_hf.cost.prices import load_prices

    prices = load_prices(args.prices) if args.prices else None
    return SpendingLimits(args.max_calls, args.max_cost, prices)


def check_run_paths(output_dir: str | None, cache_dir: str | None) -> None:
    """The results folder must be writable and the cache usable, before any model is called.

    A cache that exists is opened once (a damaged or foreign file is a clear error now, not after the
    work); a read-only one is accepted, because a warm rerun only reads.
    """
    from gacc_hf.cli.paths import check_cache_outside_output
    from gacc_hf.run.cache import CACHE_FILENAME, Cache

    if output_dir is None:  # a new folder under DEFAULT_RUNS
        writable_folder(DEFAULT_RUNS, "runs folder")
    else:
        writable_folder(output_dir, "results folder (--output-dir)", staged=True)
    check_cache_outside_output(output_dir, cache_dir)
    if cache_dir is None:
        return
    if (Path(cache_dir) / CACHE_FILENAME).exists():
        Cache(cache_dir).close()
    else:
        writable_folder(cache_dir, "cache folder (--cache-dir)")


def preflight(args: argparse.Namespace) -> tuple[RunConfig, SpendingLimits]:
    """Everything a run refuses before its first model call, in one place, so that `--dry-run` refuses
    exactly what the run would: the options, the config file, the prices file and limits, the results
    folder (writable; a run in it only with --overwrite) and the cache folder (usable)."""
    from gacc_hf.cli.paths import check_output_option
    from gacc_hf.results.atomic import check_output_dir

    if args.format is not None and not args.dry_run:
        raise ValueError(f"--format {args.format} sets what --dry-run prints: give --dry-run with it, or leave it out")
    check_output_option(args.output_dir)
    if args.output_dir is not None:
        check_output_dir(args.output_dir, args.overwrite)
    run = resolve_run(args)
    check_run(run, args.num_processes)
    limits = spending_limits(args)  # and the prices file
    check_run_paths(args.output_dir, run.cache_dir)
    check_tracker_options(args)
    return run, limits


def cmd_run(args: argparse.Namespace) -> int:
    from gacc_hf.results.lock import output_lock
    from gacc_hf.run.distributed import detect

    if args.dry_run:
        return _dry_run(args)
    with output_lock(args.output_dir, detect().rank):  # a second run writing the same folder is refused now
        return _run_locked(args)


def _dry_run(args: argparse.Namespace) -> int:
    """Validate the run and print what it needs (`gacc_hf.run.dry_run`); nothing is loaded, sent or written."""
    from gacc_hf.cli.dry_run import print_plan
    from gacc_hf.cli.run_selection import load_run_data
    from gacc_hf.methods.weights import tokenizer_only
    from gacc_hf.run.dry_run import dry_run

    run, limits = preflight(args)
    prices = limits.prices
    dataset, _revision = load_run_data(run)
    settings = {"seed": run.seed, "n_bootstrap": run.bootstrap, "batch_size": run.batch_size, "on_error": run.on_error}
    with tokenizer_only():
        plan = dry_run(dataset, **_design(run), settings=settings, prices=prices)
    return print_plan(plan, args)


def _design(run: RunConfig) -> dict[str, Any]:
    """What a run computes, as the keyword arguments `run_benchmark` and `dry_run` both take."""
    return {
        "compressor": run.compressors,
        "reader": run.reader,
        "judge": run.judge,
        "ratios": run.ratios,
        "conditions": run.conditions,
        "cache_dir": run.cache_dir,
        "limit": run.limit,
        "columns": run.columns,
        "data_spec": run.data,
        "goals": run.goals,
    }


def _launch_if_asked(args: argparse.Namespace, run: RunConfig, topology: Topology) -> int | None:
    """The exit status of the launch `--num-processes` asks for, or None when this process runs the work
    itself (one process, a rank of a launch, or a request capped to one core)."""
    from gacc_hf.run import launch
    from gacc_hf.run.rank import bind_to_launcher, stop_quietly_on_interrupt

    if args.num_processes > 1 and topology.world_size == 1:
        processes = launch.capped_processes(args.num_processes)
        return launch.launch(args.argv, processes) if processes > 1 else None
    if args.num_processes not in (1, topology.world_size):
        raise ValueError(
            f"--num-processes {args.num_processes} inside a launch of {topology.world_size} processes: "
            "leave --num-processes out when starting gacc with accelerate launch or torchrun"
        )
    if topology.world_size > 1:
        bind_to_launcher()
        stop_quietly_on_interrupt()
    return None


def _run_locked(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime
    from pathlib import Path

    from gacc_hf.cli.run_selection import load_run_data
    from gacc_hf.results.atomic import new_run_dir, point_latest
    from gacc_hf.results.usage_report import usage_line
    from gacc_hf.run import distributed
    from gacc_hf.run.silence import silent_reader
    from gacc_hf.scoring.by_language import language_table
    from gacc_hf.scoring.retention import missing_bound

    started = datetime.now(UTC)
    run, limits = preflight(args)  # under the lock: no other run changes the folder while it is checked
    prices = limits.prices
    topology = distributed.detect()
    launched = _launch_if_asked(args, run, topology)
    if launched is not None:
        return launched
    if args.no_progress:
        import datasets

        datasets.disable_progress_bars()  # the builder's "Generating split" bars too
    dataset, revision = load_run_data(run)
    log.info("data %s: %d groups", run.data, len(dataset))
    log.debug("resolved run: %s", run.to_dict())
    result, rank_calls = distributed.run_benchmark_sharded(
        dataset,
        topology=topology,
        **_design(run),
        seed=run.seed,
        n_bootstrap=run.bootstrap,
        batch_size=run.batch_size,
        on_error=run.on_error,
        progress=not args.no_progress and log.isEnabledFor(logging.INFO),
        split=run.split,
        data_revision=revision,
        limits=limits,
        prices=prices,
    )
    if result is None:  # another rank: rank 0 reports and writes the merged results
        return 0
    if result.config["goals"]:
        log.info("goals chosen by id: %(groups)d of %(of)d goals", result.config["goals"])
    if result.config["limit"]:
        log.info("limit %(value)s: the first %(groups)d of %(of)d groups (a partial run)", result.config["limit"])
    print(result.score_table())
    silent = silent_reader(result.answers)
    if silent:
        log.warning(silent)
    if len(result.config["data"]["languages"]) > 1:
        print(f"\nby language:\n{language_table(result.scores_by_language)}")
    if {"closed", "full"} & set(result.config["conditions"]) and (reason := missing_bound(result.answers)):
        print(f"retention: undefined ({reason})")
    print(f"calls: {result.calls}")
    if len(rank_calls) > 1:
        print("calls per process: " + "; ".join(f"{rank}: {calls}" for rank, calls in enumerate(rank_calls)))
    print(f"integrity: {result.integrity}")
    print(usage_line(result.usage, result.cost()))
    out = args.output_dir or new_run_dir(started, [Path(run.data).name, "+".join(run.compressors)], DEFAULT_RUNS)
    path = result.save(out, command=["gacc", *args.argv])
    if args.output_dir is None:
        point_latest(out)
    print(f"results: {path}")
    log_to_trackers(args, result, Path(path))
    if any(result.integrity.values()):
        return errors.INTEGRITY
    if result.errors:
        # the folder just written holds a run now: an explicit --output-dir takes it again only with --overwrite
        again = "the same command with --overwrite" if args.output_dir and not args.overwrite else "the same command"
        print(f"{len(result.errors)} model failure(s) recorded; rerun {again} to retry them", file=sys.stderr)
        return errors.MODEL_FAILURES
    return errors.OK
