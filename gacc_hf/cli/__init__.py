"""The `gacc` command: a thin argparse layer over the library; each subcommand lives in one function."""

from __future__ import annotations

import argparse
import functools
import logging
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gacc_hf import errors

if TYPE_CHECKING:
    from gacc_hf.run.config import RunConfig

DEFAULT_RUNS = "runs"
VERBOSITY = ("DEBUG", "INFO", "WARNING", "ERROR")
log = logging.getLogger("gacc_hf")


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _ratios(text: str) -> list[float]:
    try:
        return [float(x) for x in _csv(text)]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"ratios must be comma-separated numbers, got {text!r}") from exc


def _limit(text: str) -> int | float:
    from gacc_hf.run.config import RunConfigError, parse_limit

    try:
        return parse_limit(text)
    except RunConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def add_run_parser(sub: argparse._SubParsersAction) -> None:
    from gacc_hf.run.presets import DEFAULT_PRESET, PRESETS, RUN_DEFAULTS

    main = PRESETS[DEFAULT_PRESET]
    p = sub.add_parser(
        "run",
        help="run the benchmark and write a results folder",
        description="Run settings come from the preset, then the --config file, then the options given here. "
        f"Defaults below are those of the {DEFAULT_PRESET!r} preset.",
    )
    # Every setting defaults to None (not given), so that a config file can fill what the command line leaves.
    p.add_argument(
        "--preset",
        help=f"named experiment: {', '.join(f'{k} ({v.description})' for k, v in PRESETS.items())} "
        f"(default: {DEFAULT_PRESET}; `gacc list presets`)",
    )
    p.add_argument("--config", help="run config file (.yaml/.toml), e.g. the config.yaml of a results folder")
    p.add_argument(
        "--data",
        help="dataset: 'sample', 'synthetic[:contexts=N,seed=S,...]', a .jsonl/.parquet file or folder, a "
        f"save_to_disk folder or a Hub repo id (default: {main.data})",
    )
    p.add_argument("--split", help="split to run when the data has several")
    p.add_argument(
        "--limit", type=_limit, help="run on the first N groups only, or a fraction (0.1): a partial run, a quick try"
    )
    p.add_argument(
        "--compressors", type=_csv, help=f"comma-separated compressor names (default: {','.join(main.compressors)})"
    )
    p.add_argument("--reader", help=f"reader name (default: {main.reader})")
    p.add_argument(
        "--judge",
        help=f"judge name: exact, contains, f1, smollm2 (default: {main.judge}: a small reader answers in sentences)",
    )
    p.add_argument(
        "--ratios", type=_ratios, help=f"retention ratios (default: {','.join(f'{r:g}' for r in main.ratios)})"
    )
    p.add_argument(
        "--conditions",
        type=_csv,
        help=f"conditions among own,none,cross,full (default: {','.join(main.conditions)})",
    )
    p.add_argument(
        "--seed", type=int, help=f"run seed: cross-goal pairing and bootstrap (default: {RUN_DEFAULTS['seed']})"
    )
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
        "--num-processes",
        type=int,
        default=1,
        help="run on N local processes through `accelerate launch`, sharded by context (default: 1)",
    )
    _add_verbosity(p, argparse.SUPPRESS)
    p.set_defaults(func=cmd_run)


def resolve_run(args: argparse.Namespace) -> RunConfig:
    """The run the options ask for: preset, then the --config file, then the options given."""
    from gacc_hf.run import config as run_config

    file_values = run_config.load(args.config) if args.config else {}
    return run_config.resolve(file_values, {key: getattr(args, key) for key in run_config.KEYS})


def check_run(run: RunConfig, num_processes: int) -> None:
    """Refuse impossible settings (from the options or a config file) before any work, one message each."""
    from gacc_hf.redaction import redact

    for name, values in {"compressors": run.compressors, "conditions": run.conditions, "ratios": run.ratios}.items():
        if not values:
            raise ValueError(f"--{name} names nothing; give at least one (comma-separated)")
    for name, value in {"reader": run.reader, "judge": run.judge, "data": run.data}.items():
        if not value.strip():
            raise ValueError(f"--{name} is empty; name one")
    minimums = {"bootstrap": (run.bootstrap, 0), "batch-size": (run.batch_size, 1), "seed": (run.seed, 0)}
    minimums["num-processes"] = (num_processes, 1)
    for name, (value, low) in minimums.items():
        if value < low:
            raise ValueError(f"--{name} must be >= {low}, got {value}")
    specs = {"data": [run.data], "compressors": run.compressors, "reader": [run.reader], "judge": [run.judge]}
    for name, values in specs.items():
        for spec in values:
            if redact(spec) != spec:  # refused here, before a launch could echo the command line
                raise ValueError(
                    f"--{name} {redact(spec)}: credentials in a URL are never sent; remove them "
                    "(an openai: server's key goes in $OPENAI_API_KEY)"
                )


def writable_folder(path: str | Path, what: str, *, staged: bool = False) -> None:
    """Raise ValueError unless `path` is a folder that can be written, or can be created (nothing is created).

    `staged`: the folder is written as a sibling and renamed into place, so its parent must be writable.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{what} {path} is a file, not a folder: pass another path")
    probe = path.parent if staged else path
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise ValueError(f"{what} {path} cannot be created: {probe} is a file")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ValueError(f"{what} {path} is not writable ({probe}: permission denied or read-only file system)")


def check_run_paths(output_dir: str | None, cache_dir: str | None) -> None:
    """The results folder must be writable and the cache usable, before any model is called.

    A cache that exists is opened once (a damaged or foreign file is a clear error now, not after the
    work); a read-only one is accepted, because a warm rerun only reads.
    """
    from gacc_hf.run.cache import CACHE_FILENAME, Cache

    if output_dir is None:  # a new folder under DEFAULT_RUNS
        writable_folder(DEFAULT_RUNS, "runs folder")
    else:
        writable_folder(output_dir, "results folder (--output-dir)", staged=True)
    if cache_dir is None:
        return
    if (Path(cache_dir) / CACHE_FILENAME).exists():
        Cache(cache_dir).close()
    else:
        writable_folder(cache_dir, "cache folder (--cache-dir)")


def cmd_run(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime
    from pathlib import Path

    from gacc_hf.data.loading import load_any
    from gacc_hf.results.folder import check_output_dir, new_run_dir, point_latest
    from gacc_hf.run import distributed

    started = datetime.now(UTC)
    if args.output_dir is not None:
        check_output_dir(args.output_dir, args.overwrite)  # before any model work
    run = resolve_run(args)
    check_run(run, args.num_processes)
    topology = distributed.detect()
    if args.num_processes > 1 and topology.world_size == 1:
        check_run_paths(args.output_dir, run.cache_dir)
        return distributed.launch(args.argv, args.num_processes)
    if args.num_processes not in (1, topology.world_size):
        raise ValueError(
            f"--num-processes {args.num_processes} inside a launch of {topology.world_size} processes: "
            "leave --num-processes out when starting gacc with accelerate launch or torchrun"
        )
    check_run_paths(args.output_dir, run.cache_dir)
    if args.no_progress:
        import datasets

        datasets.disable_progress_bars()  # the builder's "Generating split" bars too
    dataset = load_any(run.data, "judge", split=run.split)
    log.info("data %s: %d groups", run.data, len(dataset))
    log.debug("resolved run: %s", run.to_dict())
    result, rank_calls = distributed.run_benchmark_sharded(
        dataset,
        topology=topology,
        compressor=run.compressors,
        reader=run.reader,
        judge=run.judge,
        ratios=run.ratios,
        conditions=run.conditions,
        cache_dir=run.cache_dir,
        seed=run.seed,
        n_bootstrap=run.bootstrap,
        batch_size=run.batch_size,
        on_error=run.on_error,
        progress=not args.no_progress and log.isEnabledFor(logging.INFO),
        data_spec=run.data,
        split=run.split,
        limit=run.limit,
    )
    if result is None:  # another rank: rank 0 reports and writes the merged results
        return 0
    if result.config["limit"]:
        log.info("limit %(value)s: the first %(groups)d of %(of)d groups (a partial run)", result.config["limit"])
    print(result.score_table())
    print(f"calls: {result.calls}")
    if len(rank_calls) > 1:
        print("calls per process: " + "; ".join(f"{rank}: {calls}" for rank, calls in enumerate(rank_calls)))
    print(f"integrity: {result.integrity}")
    out = args.output_dir or new_run_dir(started, [Path(run.data).name, "+".join(run.compressors)], DEFAULT_RUNS)
    path = result.save(out, command=["gacc", *args.argv])
    if args.output_dir is None:
        point_latest(out)
    print(f"results: {path}")
    if any(result.integrity.values()):
        return errors.INTEGRITY
    if result.errors:
        print(f"{len(result.errors)} model failure(s) recorded; rerun the same command to retry them", file=sys.stderr)
        return errors.MODEL_FAILURES
    return errors.OK


def add_list_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("list", help="the built-in methods, name prefixes and presets, one line each")
    p.add_argument("role", nargs="?", choices=[*LIST_ROLES, *(f"{r}s" for r in LIST_ROLES)], help="list only these")
    p.set_defaults(func=cmd_list)


LIST_ROLES = ("compressor", "reader", "judge", "preset")


def cmd_list(args: argparse.Namespace) -> int:
    from gacc_hf.methods import BUILTINS, PREFIXES
    from gacc_hf.run.presets import DEFAULT_PRESET, PRESETS

    roles = [args.role.removesuffix("s")] if args.role else list(LIST_ROLES)
    for role in roles:
        if role == "preset":
            rows = [(n, p.description + (" (default)" if n == DEFAULT_PRESET else "")) for n, p in PRESETS.items()]
        else:
            rows = [(e.name, e.description) for e in BUILTINS if e.role == role]
            rows += [(f"{e.name}:...", e.description) for e in PREFIXES if e.role == role]
        print(f"{role}s:")
        width = max(len(name) for name, _ in rows)
        for name, description in rows:
            print(f"  {name:<{width}}  {description}")
    return 0


def add_install_metric_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("install-metric", help="make evaluate.load('gacc') resolve offline from any directory")
    p.set_defaults(func=cmd_install_metric)


def cmd_install_metric(args: argparse.Namespace) -> int:
    from gacc_hf.metric import install_metric

    print(install_metric())
    return 0


def add_report_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="rebuild report.md and the plots of a results folder (no model is called)")
    p.add_argument("run_dir", help="results folder written by `gacc run`")
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    from gacc_hf.results.report import rebuild

    for path in rebuild(args.run_dir):
        print(path)
    return 0


def add_compare_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="paired difference B − A with CIs, per condition and ratio")
    p.add_argument("run_a", help="results folder of side A")
    p.add_argument("run_b", nargs="?", help="results folder of side B (default: RUN_A, comparing two compressors)")
    p.add_argument("--a", help="compressor of side A (needed when its run has several)")
    p.add_argument("--b", help="compressor of side B (needed when its run has several)")
    p.add_argument("--bootstrap", type=int, help="bootstrap resamples for the CIs (default: side A's run setting)")
    p.add_argument("--seed", type=int, help="bootstrap seed (default: side A's run seed)")
    p.add_argument(
        "--allow-different-data",
        action="store_true",
        help="compare runs on different data, readers or judges anyway, with a warning (refused by default)",
    )
    p.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    from gacc_hf.results.folder import read_folder
    from gacc_hf.scoring.compare import (
        CompareError,
        format_table,
        paired_table,
        select,
        setup_differences,
        shared_cells,
    )

    run_a = read_folder(args.run_a)
    run_b = read_folder(args.run_b) if args.run_b else run_a
    if args.run_b is None and (args.a is None or args.b is None):
        raise ValueError("comparing two compressors of one run needs both --a and --b")
    same_run = args.run_b is None  # two compressors of one run share its data, reader and judge
    differ, unknown = ([], []) if same_run else setup_differences(run_a.config, run_b.config, (args.run_a, args.run_b))
    if differ and not args.allow_different_data:
        raise CompareError(
            "the runs are not comparable: " + "; ".join(differ) + " (pass --allow-different-data to compare anyway)"
        )
    for line in [*differ, *(f"{u}: cannot check that both ran on the same data" for u in unknown)]:
        print(f"WARNING: {line}", file=sys.stderr)
    rows_a, rows_b = select(run_a.answers, args.a, args.run_a), select(run_b.answers, args.b, args.run_b or args.run_a)
    labels = (f"{args.run_a}:{rows_a[0]['compressor']}", f"{args.run_b or args.run_a}:{rows_b[0]['compressor']}")
    n_boot = run_a.config.get("n_bootstrap", 1000) if args.bootstrap is None else args.bootstrap
    seed = run_a.config.get("seed", 0) if args.seed is None else args.seed
    rows_a, rows_b, skipped = shared_cells(rows_a, rows_b, ("A", "B"))
    table = format_table(paired_table(rows_a, rows_b, n_boot, seed, labels=labels), *labels)
    print("\n".join([*(f"WARNING, NOT COMPARABLE: {line}" for line in differ), table]))
    if skipped:
        print(f"skipped {len(skipped)} cell(s) not in both runs: {'; '.join(skipped)}")
    return 0


def add_publish_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("publish", help="add a run's results to a model's card on the Hugging Face Hub")
    p.add_argument("run_dir", help="results folder written by `gacc run`")
    p.add_argument("--repo-id", required=True, help="the model repo whose card gets the results (owner/name)")
    p.add_argument("--compressor", help="the run's compressor this model is (needed when the run has several)")
    p.add_argument(
        "--dataset-repo",
        help="the Hub dataset the run's data is (needed for a run on a local file; the sample and synthetic data "
        "are named as what they are)",
    )
    p.add_argument("--allow-errors", action="store_true", help="publish a run with failed calls, stating how many")
    p.add_argument("--card", help="merge into this local card instead of the model's current card on the Hub")
    p.add_argument("--details-repo-id", help="also push answers + memory ledger as this dataset repo, with a card")
    p.add_argument("--eval-results-task", help="also write .eval_results/ for this task of a Hub-registered benchmark")
    p.add_argument("--headline-ratio", type=float, help="ratio of the .eval_results headline (own-condition Micro)")
    p.add_argument("--dry-run", action="store_true", help="print the plan and the generated files; push nothing")
    p.set_defaults(func=cmd_publish)


def cmd_publish(args: argparse.Namespace) -> int:
    from pathlib import Path

    from huggingface_hub import HfApi

    from gacc_hf.hub import commit as hub
    from gacc_hf.hub import model_card

    if not args.dry_run:
        hub.require_online(f"publish to {args.repo_id}")
    if args.card and not Path(args.card).is_file():
        raise ValueError(f"--card {args.card}: no such file")
    plan = functools.partial(
        model_card.publish_plan,
        args.run_dir,
        args.repo_id,
        compressor=args.compressor,
        dataset_repo=args.dataset_repo,
        allow_errors=args.allow_errors,
        details_repo_id=args.details_repo_id,
        eval_results_task=args.eval_results_task,
        headline_ratio=args.headline_ratio,
    )
    plans = plan(existing_card=Path(args.card).read_text(encoding="utf-8") if args.card else None)  # every check
    api = None if args.dry_run else HfApi()
    if api is not None and not args.card:  # checked above, before the Hub is asked for anything
        plans = plan(existing_card=model_card.fetch_card(api, args.repo_id))
    for p in plans:
        print(p.describe())
    if api is None:
        if not args.card:
            print("(dry run: a real publish merges into the model's current card on the Hub, if it has one)")
        for label, text in model_card.planned_texts(plans):
            print(f"\n==> {label} <==\n{text}", end="" if text.endswith("\n") else "\n")
        return 0
    for url in model_card.publish(api, plans):
        print(url)
    return 0


def add_data_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("data", help="validate, build, describe and publish GACC datasets")
    data = p.add_subparsers(dest="data_command", required=True)
    v = data.add_parser("validate", help="list every problem of a dataset (file, row and field); exit 2 if any")
    v.add_argument("path", help="'sample', a .jsonl/.parquet file or folder, a save_to_disk folder or a Hub repo id")
    v.add_argument(
        "--config", choices=["judge", "public"], default=None, help="view to check (default: every view the data holds)"
    )
    v.set_defaults(func=cmd_data_validate)
    b = data.add_parser("build", help="write a Hub-ready folder: Parquet for both views plus a generated card")
    b.add_argument("src", help="'sample' or a .jsonl/.parquet file or folder in the judge schema")
    b.add_argument("out", help="output folder (its README.md and <view>/*.parquet are rewritten)")
    b.add_argument("--pretty-name", default=None, help="card title (default: GACC-Bench)")
    b.add_argument("--license", default=None, help="card license (default: apache-2.0)")
    b.add_argument("--description", default=None, help="card description paragraph")
    b.add_argument("--repo-id", default=None, help="Hub repo id shown in the card's loading example")
    b.set_defaults(func=cmd_data_build)
    s = data.add_parser("stats", help="contexts, goals, questions and the token-length distribution")
    s.add_argument("path", help="any data spec that `gacc run --data` accepts")
    s.add_argument("--config", choices=["judge", "public"], default="judge", help="view to read (default: judge)")
    s.add_argument("--split", default=None, help="split to describe when the data has several")
    s.set_defaults(func=cmd_data_stats)
    u = data.add_parser("push", help="upload a folder built by `gacc data build` to a Hub dataset repo")
    u.add_argument("path", help="folder written by `gacc data build`")
    u.add_argument("repo_id", help="Hub dataset repo id, owner/name")
    u.add_argument("--dry-run", action="store_true", help="print the upload plan and stop")
    u.add_argument("--message", default="Upload GACC-Bench data", help="commit message")
    u.set_defaults(func=cmd_data_push)


def cmd_data_validate(args: argparse.Namespace) -> int:
    from gacc_hf.data.loading import find_spec_problems

    problems = find_spec_problems(args.path, args.config)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problem(s) in {args.path}")
        return errors.BAD_INPUT
    print(f"ok: no problems in {args.path}")
    return 0


def cmd_data_build(args: argparse.Namespace) -> int:
    from gacc_hf.data.builder import write_hub_folder
    from gacc_hf.data.card import SAMPLE_CARD
    from gacc_hf.data.loading import data_files
    from gacc_hf.data.schema import SAMPLE_PATH

    sample = args.src == "sample"
    files, _ = data_files(SAMPLE_PATH if sample else args.src, "judge")
    given = {"pretty_name": args.pretty_name, "license": args.license, "description": args.description}
    card = {**(SAMPLE_CARD if sample else {}), **{k: v for k, v in given.items() if v is not None}}
    for path in write_hub_folder(files, args.out, repo_id=args.repo_id, **card):
        print(path)
    return 0


def cmd_data_stats(args: argparse.Namespace) -> int:
    from gacc_hf.data.loading import load_any
    from gacc_hf.data.schema import data_stats

    print(data_stats(load_any(args.path, args.config, split=args.split)).text())
    return 0


def cmd_data_push(args: argparse.Namespace) -> int:
    from gacc_hf.data.loading import check_hub_folder
    from gacc_hf.hub.commit import commit, describe_plan, folder_operations, require_online

    check_hub_folder(args.path)
    operations = folder_operations(args.path)
    print(describe_plan(args.repo_id, "dataset", operations))
    if args.dry_run:
        return 0
    require_online(f"push to {args.repo_id}")
    from huggingface_hub import HfApi

    print(commit(HfApi(), args.repo_id, "dataset", operations, args.message))
    return 0


def add_cache_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cache", help="check a cache folder, or merge the caches of several machines into one")
    cache = p.add_subparsers(dest="cache_command", required=True)
    c = cache.add_parser("check", help="list every problem of a cache (damaged file, unusable entries); exit 2 if any")
    c.add_argument("cache_dir", help="a --cache-dir folder")
    c.set_defaults(func=cmd_cache_check)
    m = cache.add_parser("merge", help="copy every usable entry of the SOURCE caches into TARGET")
    m.add_argument("target", help="the cache folder to fill (created if missing)")
    m.add_argument("sources", nargs="+", help="cache folders to read, e.g. one per machine")
    m.set_defaults(func=cmd_cache_merge)


def cmd_cache_check(args: argparse.Namespace) -> int:
    from gacc_hf.run.cache import CACHE_FILENAME, check_cache

    if not (Path(args.cache_dir) / CACHE_FILENAME).is_file():
        raise ValueError(f"{args.cache_dir} holds no cache ({CACHE_FILENAME})")
    problems = check_cache(args.cache_dir)
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problem(s) in {args.cache_dir}" if problems else f"ok: no problems in {args.cache_dir}")
    return errors.BAD_INPUT if problems else errors.OK


def cmd_cache_merge(args: argparse.Namespace) -> int:
    from gacc_hf.run.cache import CACHE_FILENAME, merge_caches

    for source in args.sources:
        if not (Path(source) / CACHE_FILENAME).is_file():
            raise ValueError(f"{source} holds no cache ({CACHE_FILENAME})")
    print(f"{merge_caches(args.target, args.sources)} new entries in {args.target}")
    return errors.OK


def _add_verbosity(parser: argparse.ArgumentParser, default: str) -> None:
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


def build_parser() -> argparse.ArgumentParser:
    from gacc_hf import __version__

    parser = argparse.ArgumentParser(
        prog="gacc",
        description="GACC-Bench: goal-conditioned context compression",
        epilog=errors.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--verbose", action="store_true", help="print the traceback of an error (anywhere on the line)")
    parser.add_argument("--version", action="version", version=f"gacc {__version__}")
    _add_verbosity(parser, "INFO")
    sub = parser.add_subparsers(dest="command", required=True)
    add_run_parser(sub)
    add_list_parser(sub)
    add_install_metric_parser(sub)
    add_data_parser(sub)
    add_report_parser(sub)
    add_compare_parser(sub)
    add_publish_parser(sub)
    add_cache_parser(sub)
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


def _traceback(exc: BaseException) -> str:
    from gacc_hf.redaction import redact

    return redact("".join(traceback.format_exception(exc)))  # a traceback quotes messages: hide credentials


if __name__ == "__main__":
    raise SystemExit(main())
