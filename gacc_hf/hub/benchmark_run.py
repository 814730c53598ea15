"""The run a benchmark's `eval.yaml` ranks: the conditions, ratios and split of its tasks, so that the cells a run
makes are the ones its leaderboard ranks.

`gacc run` reads the `eval.yaml` of `--data OWNER/NAME` (from the Hub) or of a local folder that holds one (what
`gacc data build` writes and `gacc data push` uploads), or a file given as `--eval-yaml FILE` for any data;
`--task ID,ID` keeps some of its tasks. A task id names its cell (`<metric>-<condition>-r<ratio>[-<language>]`,
`benchmark_yaml.task_id`): the run crosses the conditions and the ratios of the tasks kept, on their split, in
the judge twin of their `public` config, the view every gacc run reads.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gacc_hf.hub.benchmark_yaml import (
    EVAL_YAML,
    TASK_CONDITIONS,
    TASK_CONFIG,
    TASK_METRICS,
    BenchmarkError,
    read_eval_yaml,
)

_TASK = re.compile(
    rf"^(?P<metric>{'|'.join(TASK_METRICS)})-(?P<condition>{'|'.join(TASK_CONDITIONS)})"
    r"-r(?P<ratio>\d+(?:\.\d+)?)(?:-(?P<language>[A-Za-z][\w-]*))?$"
)
#: task ids a message names before "and N more"
SHOWN_TASKS = 8


def _listed(ids: Sequence[str]) -> str:
    more = f" and {len(ids) - SHOWN_TASKS} more" if len(ids) > SHOWN_TASKS else ""
    return ", ".join(ids[:SHOWN_TASKS]) + more


def parse_task_id(tid: str) -> tuple[str, str, float, str | None] | None:
    """(metric, condition, ratio, language) of a GACC task id, None for any other id.

    >>> parse_task_id("micro-own-r0.2"), parse_task_id("macro-cross-r0.25-zh"), parse_task_id("accuracy")
    (('micro', 'own', 0.2, None), ('macro', 'cross', 0.25, 'zh'), None)
    """
    m = _TASK.match(tid)
    if m is None or not 0 <= float(m["ratio"]) <= 1:
        return None
    return m["metric"], m["condition"], float(m["ratio"]), m["language"]


@dataclass(frozen=True)
class BenchmarkRun:
    """What a run takes from an `eval.yaml`: the tasks kept, their conditions (in the order own, none, cross),
    ratios (ascending) and split, and the (condition, ratio) cells they rank."""

    where: str
    tasks: list[str]
    conditions: list[str]
    ratios: list[float]
    split: str
    cells: frozenset[tuple[str, float]]

    def unranked(self, conditions: Sequence[str], ratios: Sequence[float]) -> list[str]:
        """The cells (`condition@ratio`) of a run crossing these conditions and ratios that no task kept ranks
        (the bounds, never ranked, aside)."""
        return [f"{c}@{float(r):g}" for c in conditions if c in TASK_CONDITIONS for r in ratios
                if (c, float(r)) not in self.cells]  # fmt: skip


def benchmark_run(text: str, where: str, chosen: Sequence[str] | None = None) -> BenchmarkRun:
    """The run of the tasks of an `eval.yaml` (`chosen`: some of its ids, else every one); BenchmarkError in one
    line naming the ids when a chosen id is not defined, a task is no GACC cell, the tasks rank several splits
    or a config other than `public`."""
    _framework, tasks = read_eval_yaml(text, where)
    ids = list(chosen) if chosen else list(tasks)
    unknown = [t for t in ids if t not in tasks]
    if unknown:
        raise BenchmarkError(f"--task {_listed(unknown)}: not defined by {where}; it defines {_listed(list(tasks))}")
    cells = {t: parse_task_id(t) for t in ids}
    foreign = [t for t, cell in cells.items() if cell is None]
    if foreign:
        raise BenchmarkError(
            f"{where}: task(s) {_listed(foreign)} name no GACC cell (<metric>-<condition>-r<ratio>[-<language>]); "
            "choose the GACC tasks with --task ID,ID"
        )
    configs = sorted({tasks[t]["config"] for t in ids} - {TASK_CONFIG})
    if configs:
        raise BenchmarkError(
            f"{where} ranks its tasks on config {', '.join(configs)}; a gacc run reads the judge twin of the "
            f"{TASK_CONFIG!r} config only"
        )
    splits = list(dict.fromkeys(tasks[t]["split"] for t in ids))
    if len(splits) > 1:
        raise BenchmarkError(f"{where} ranks these tasks on several splits ({', '.join(splits)}): choose with --task")
    conditions = [c for c in TASK_CONDITIONS if any(cell and cell[1] == c for cell in cells.values())]
    ratios = sorted({c[2] for c in cells.values() if c})
    ranked = frozenset((c[1], c[2]) for c in cells.values() if c)
    return BenchmarkRun(where, ids, conditions, ratios, splits[0], ranked)


def local_eval_yaml(spec: str) -> tuple[str, str] | None:
    """(text, path) of the `eval.yaml` of a local dataset folder, None when the spec names no such folder."""
    path = Path(spec) / EVAL_YAML
    return (path.read_text(encoding="utf-8"), str(path)) if path.is_file() else None


def hub_eval_yaml(repo_id: str) -> tuple[str, str] | None:
    """(text, `OWNER/NAME:eval.yaml`) of a Hub dataset's `eval.yaml`, None when it has none (online only)."""
    from huggingface_hub import HfApi

    from gacc_hf.hub.model_card import fetch_file
    from gacc_hf.online import require_online

    require_online(f"read the {EVAL_YAML} of the Hub dataset {repo_id!r}")
    text = fetch_file(HfApi(), repo_id, EVAL_YAML, "dataset")
    return None if text is None else (text, f"{repo_id}:{EVAL_YAML}")
