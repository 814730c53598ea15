"""The `eval.yaml` of a GACC dataset (what makes a Hub dataset a Benchmark) and the task ids it shares with publishing.

A task is one score a model can be ranked on: `<metric>-<condition>-r<ratio>`, with `-<language>` after it for
each language of a dataset that has several (`micro-own-r0.2`, `macro-none-r0.1`, `micro-own-r0.2-zh`). The
metrics are Micro and Macro, the conditions the three a compressor runs under (own, none, cross; the ceilings
are upper bounds, never ranked), the ratios `TASK_RATIOS`. Values are fractions in [0, 1], as in `results.json`.
Every task reads the judge-free `public` config of the evaluation split (`test` when the data has one). The
same `task_id` names a run's scores when `gacc publish` writes `.eval_results/`, so the two cannot drift.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gacc_hf.safe_yaml import dump_yaml, load_yaml

EVAL_YAML = "eval.yaml"
FRAMEWORK = "gacc-hf"
TASK_METRICS = ("micro", "macro")
TASK_CONDITIONS = ("own", "none", "cross")
TASK_RATIOS = (0.1, 0.2, 0.25)
TASK_CONFIG = "public"
UNIT = "Micro, the share of questions answered correctly, and Macro, the share of goals whose every question is"


class BenchmarkError(ValueError):
    """An `eval.yaml` that does not hold what a Benchmark needs; the message names the file and field."""


def task_id(metric: str, condition: str, ratio: float, language: str | None = None) -> str:
    """The task id of one score (see the module doc)."""
    return f"{metric}-{condition}-r{float(ratio):g}" + (f"-{language}" if language else "")


def benchmark_task_ids(languages: Sequence[str] = ()) -> list[str]:
    """Every task a dataset declares: the overall scores, then each language's when it has several."""
    per = [None, *languages] if len(languages) > 1 else [None]
    return [task_id(m, c, r, lang) for lang in per for m in TASK_METRICS for c in TASK_CONDITIONS for r in TASK_RATIOS]


def eval_split(splits: Iterable[str]) -> str:
    """The split a benchmark is ranked on: `test` when there is one, else the first."""
    names = list(splits)
    return "test" if "test" in names else names[0]


def eval_yaml(name: str, description: str, splits: Iterable[str], languages: Sequence[str] = ()) -> str:
    """The `eval.yaml` text: name, description (with the unit), `evaluation_framework`, and the tasks."""
    split = eval_split(splits)
    doc = {
        "name": name,
        "description": f"{description.strip()} Scores, in [0, 1]: GACC {UNIT}.",
        "evaluation_framework": FRAMEWORK,
        "tasks": [{"id": t, "config": TASK_CONFIG, "split": split} for t in benchmark_task_ids(languages)],
    }
    return dump_yaml(doc, width=100)


def write_eval_yaml(folder: str | Path, name: str, description: str, languages: Sequence[str] = ()) -> Path:
    """Write `eval.yaml` into a folder built by `gacc data build`, for the splits its public config holds."""
    folder = Path(folder)
    splits = sorted(p.name.split("-", 1)[0] for p in (folder / TASK_CONFIG).glob("*.parquet"))
    if not splits:
        raise BenchmarkError(f"{folder}: no {TASK_CONFIG}/*.parquet to declare tasks on (run `gacc data build`)")
    path = folder / EVAL_YAML
    path.write_text(eval_yaml(name, description, splits, languages), encoding="utf-8")
    return path


def _field(mapping: Mapping[str, Any], key: str, where: str) -> str:
    value = mapping.get(key)
    if not isinstance(value, str) or not value.strip():
        raise BenchmarkError(f"{where}: field {key!r} must be a non-empty string, got {value!r}")
    return value


def parse_eval_yaml(text: str, where: str = EVAL_YAML) -> dict[str, dict[str, str]]:
    """The tasks of an `eval.yaml` by id (`{id: {config, split}}`), each required field checked."""
    doc = load_yaml(text, where, "eval.yaml", BenchmarkError)
    if not isinstance(doc, Mapping):
        raise BenchmarkError(f"{where}: must be a mapping with name, description and tasks")
    _field(doc, "name", where)
    _field(doc, "description", where)
    tasks = doc.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        raise BenchmarkError(f"{where}: field 'tasks' must be a non-empty list")
    out: dict[str, dict[str, str]] = {}
    for i, task in enumerate(tasks):
        at = f"{where}: tasks[{i}]"
        if not isinstance(task, Mapping):
            raise BenchmarkError(f"{at}: must be a mapping with id, config and split")
        tid = _field(task, "id", at)
        if tid in out:
            raise BenchmarkError(f"{at}: task id {tid!r} is declared twice")
        out[tid] = {"config": _field(task, "config", at), "split": _field(task, "split", at)}
    return out
