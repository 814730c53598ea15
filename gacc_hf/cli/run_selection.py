"""`gacc run`'s options that choose what of the data a run covers: `--goals ID,ID` and `--goals-file FILE` (some
goals), `--eval-yaml FILE` and `--task ID,ID` (the cells a benchmark's eval.yaml ranks)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gacc_hf.cli.verbosity import log

if TYPE_CHECKING:
    from gacc_hf.hub.benchmark_run import BenchmarkRun
    from gacc_hf.run.config import RunConfig


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def add_selection_options(p: argparse.ArgumentParser) -> None:
    """`--goals` or `--goals-file` (or neither: every goal); `--eval-yaml` and `--task`."""
    chosen = p.add_mutually_exclusive_group()
    chosen.add_argument(
        "--goals",
        type=_csv,
        metavar="ID,ID,...",
        help="run these goals only (goal_id values, comma-separated; before --limit): a partial run, recorded as "
        "such, that publishing refuses; each goal's cross condition is paired over the whole data",
    )
    chosen.add_argument(
        "--goals-file",
        metavar="FILE",
        help="like --goals, the ids read from FILE: one goal id a line, blank lines and #-comment lines skipped",
    )
    p.add_argument(
        "--eval-yaml",
        metavar="FILE",
        help="run the cells this benchmark eval.yaml ranks: the conditions, ratios and split of its tasks (default: "
        "the eval.yaml of --data OWNER/NAME on the Hub, or of a local dataset folder, when it has one); "
        "--conditions, --ratios and --split given override it, and are said",
    )
    p.add_argument("--task", type=_csv, metavar="ID,ID,...", help="only these tasks of the eval.yaml (its task ids)")


def given_goals(args: argparse.Namespace) -> list[str] | None:
    """The goal ids the command line names (None: not given, a config file's `goals:` then applies)."""
    from gacc_hf.run.goals import read_goals_file

    goals_file: Any = getattr(args, "goals_file", None)
    return read_goals_file(goals_file) if goals_file is not None else getattr(args, "goals", None)


def _eval_yaml(args: argparse.Namespace, data: str) -> tuple[str, str] | None:
    """(text, where) of the eval.yaml a run follows: `--eval-yaml`, else the data's own, else None."""
    from gacc_hf.data.loading import DataSourceError, spec_kind
    from gacc_hf.hub.benchmark_run import hub_eval_yaml, local_eval_yaml

    given = getattr(args, "eval_yaml", None)
    if given is not None:
        if not Path(given).is_file():
            raise ValueError(f"--eval-yaml {given}: no such file")
        return Path(given).read_text(encoding="utf-8"), f"--eval-yaml {given}"
    try:
        kind = spec_kind(data)
    except DataSourceError:  # data that names nothing is refused after the run's other checks, by the load
        return None
    if kind == "hub":
        return hub_eval_yaml(data)
    return local_eval_yaml(data) if Path(data).is_dir() else None


def with_benchmark(run: RunConfig, args: argparse.Namespace, set_by: Mapping[str, str]) -> RunConfig:
    """The run with the conditions, ratios and split of the benchmark's tasks (`gacc_hf.hub.benchmark_run`) where
    no option or config file (`set_by`: key -> where it was set) chose them; each override that changes them is
    said, and so are the cells no task ranks. The bounds the run names (full, oracle, closed) are kept."""
    from gacc_hf.hub.benchmark_run import benchmark_run
    from gacc_hf.protocol import CEILINGS

    task = getattr(args, "task", None)
    found = _eval_yaml(args, run.data)
    if found is None:
        if task:
            raise ValueError(f"--task names tasks of a benchmark's eval.yaml; {run.data!r} has none: give --eval-yaml")
        return run
    bench = benchmark_run(*found, task)
    wanted: dict[str, Any] = {
        "conditions": [*bench.conditions, *(c for c in run.conditions if c in CEILINGS)],
        "ratios": bench.ratios,
        "split": bench.split,
    }
    changes = {key: value for key, value in wanted.items() if key not in set_by}
    for key in wanted.keys() - changes.keys():
        if _shown(getattr(run, key)) != _shown(wanted[key]):
            log.warning(
                "%s: %s %s overrides %s's %s", set_by[key], key, _shown(getattr(run, key)), bench.where,
                _shown(wanted[key]),
            )  # fmt: skip
    run = replace(run, **changes)
    log.info("%s: %d task(s), split %s, ratios %s", bench.where, len(bench.tasks), bench.split, _shown(run.ratios))
    _say_unranked(bench, run)
    return run


def _shown(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(f"{float(v):g}" if not isinstance(v, str) else v for v in value)
    return str(value)


def _say_unranked(bench: BenchmarkRun, run: RunConfig) -> None:
    unranked: Sequence[str] = bench.unranked(run.conditions, run.ratios)
    if unranked:
        log.warning(
            "%s ranks no task on the cell(s) %s: publishing refuses them unless --only-defined leaves them out",
            bench.where,
            ", ".join(unranked),
        )


def load_run_data(run: RunConfig) -> tuple[Any, str | None]:
    """The run's judge rows, and the Hub commit they were loaded at when they came from the Hub (recorded, so the
    results name the exact data; `gacc_hf.data.loading.hub_revision`)."""
    from gacc_hf.data.loading import hub_revision, load_any, spec_kind

    revision = hub_revision(run.data) if spec_kind(run.data) == "hub" else None
    dataset = load_any(run.data, "judge", split=run.split, columns=run.columns, revision=revision)
    return dataset, revision
