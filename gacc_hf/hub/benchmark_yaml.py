"""The `eval.yaml` of a GACC dataset (what makes a Hub dataset a Benchmark) and the task ids it shares with publishing.

A task is one score a model can be ranked on: `<metric>-<condition>-r<ratio>`, with `-<language>` after it for
each language of a dataset that has several (`micro-own-r0.2`, `macro-none-r0.1`, `micro-own-r0.2-zh`). The
metrics are Micro and Macro, the conditions the three a compressor runs under (own, none, cross; the ceilings
are upper bounds, never ranked), the ratios `TASK_RATIOS`. Values are fractions in [0, 1], as in `results.json`.
Every task reads the judge-free `public` config of the evaluation split (`test` when the data has one). The
same `task_id` names a run's scores when `gacc publish` writes `.eval_results/`, so the two cannot drift.

Read as the Hub's documentation words it: `name`, `description`, `evaluation_framework` and `tasks`, each task
an `id` with optional `config` (default: the dataset's default config) and `split` (default `test`). The Hub
refuses a framework its list does not name, so gacc says so before a push rather than after.
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
#: A task's split when its entry names none (the Hub's documentation).
DEFAULT_SPLIT = "test"
#: The keys of an eval.yaml and of one task; an `inspect-ai` task also carries Inspect's own keys (field_spec,
#: solvers, scorers, ...), whose schema is Inspect's, so they are left to the Hub.
TOP_KEYS = ("name", "description", "evaluation_framework", "tasks")
TASK_KEYS = ("id", "config", "split")
INSPECT = "inspect-ai"
#: The `evaluation_framework` names the Hub accepts, from huggingface.js `packages/tasks/src/eval.ts`
#: (EVALUATION_FRAMEWORKS, commit 0589d130, read 2026-12-04). That file held 30 names by 2026-08; these are the
#: ones read here, so a name missing from this tuple may still be accepted by the Hub: hence a warning, never
#: a refusal. `gacc-hf` is not among them.
HUB_FRAMEWORKS = (
    "exgentic",
    "inspect-ai",
    "math-arena",
    "mteb",
    "olmocr-bench",
    "harbor",
    "archipelago",
    "apex-evals",
    "screenspot-pro",
    "swe-bench",
    "swe-bench-pro",
    "nemo-evaluator",
    "yc-bench",
    "open-asr-leaderboard",
    "mdpbench",
    "parsebench",
    "video-mme-v2",
    "claw-eval",
    "wildclawbench",
)
FRAMEWORKS_SOURCE = "huggingface.js packages/tasks/src/eval.ts"
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


def framework_warning(framework: str, where: str = EVAL_YAML) -> str | None:
    """One line when the Hub's framework list (`HUB_FRAMEWORKS`) lacks `framework`, saying how it gets there
    and what the Hub does until then; None when the name is listed."""
    if framework in HUB_FRAMEWORKS:
        return None
    return (
        f"warning: {where}: evaluation_framework {framework!r} is not in the Hub's list of framework names "
        f"({FRAMEWORKS_SOURCE}): until a pull request to huggingface.js adds {framework!r} there, the Hub refuses "
        f'this eval.yaml at push time ("Invalid input" at evaluation_framework); push the data with '
        "--no-eval-yaml meanwhile"
    )


def _field(mapping: Mapping[str, Any], key: str, where: str, default: str | None = None) -> str:
    if key not in mapping and default is not None:
        return default
    value = mapping.get(key)
    if not isinstance(value, str) or not value.strip():
        raise BenchmarkError(f"{where}: field {key!r} must be a non-empty string, got {value!r}")
    return value


def _no_unknown(mapping: Mapping[str, Any], keys: Sequence[str], where: str) -> None:
    unknown = [str(k) for k in mapping if k not in keys]
    if unknown:
        raise BenchmarkError(f"{where}: unknown field(s) {', '.join(unknown)}; the spec names {', '.join(keys)}")


def read_eval_yaml(
    text: str, where: str = EVAL_YAML, default_config: str = TASK_CONFIG
) -> tuple[str, dict[str, dict[str, str]]]:
    """The framework and the tasks by id (`{id: {config, split}}`) of an `eval.yaml`, checked against the spec:
    every field it names, none it does not, no task id twice. A task without `config` reads the dataset's
    default config (`default_config`: `public` in the card `gacc data build` writes), without `split` `test`."""
    doc = load_yaml(text, where, "eval.yaml", BenchmarkError)
    if not isinstance(doc, Mapping):
        raise BenchmarkError(f"{where}: must be a mapping with name, description, evaluation_framework and tasks")
    _no_unknown(doc, TOP_KEYS, where)
    _field(doc, "name", where)
    _field(doc, "description", where)
    framework = _field(doc, "evaluation_framework", where)
    tasks = doc.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        raise BenchmarkError(f"{where}: field 'tasks' must be a non-empty list")
    out: dict[str, dict[str, str]] = {}
    for i, task in enumerate(tasks):
        at = f"{where}: tasks[{i}]"
        if not isinstance(task, Mapping):
            raise BenchmarkError(f"{at}: must be a mapping with an id (config and split optional)")
        if framework != INSPECT:
            _no_unknown(task, TASK_KEYS, at)
        tid = _field(task, "id", at)
        if tid in out:
            raise BenchmarkError(f"{at}: task id {tid!r} is declared twice")
        out[tid] = {
            "config": _field(task, "config", at, default_config),
            "split": _field(task, "split", at, DEFAULT_SPLIT),
        }
    return framework, out


def parse_eval_yaml(text: str, where: str = EVAL_YAML) -> dict[str, dict[str, str]]:
    """The tasks of an `eval.yaml` by id (`{id: {config, split}}`), the spec's defaults applied."""
    return read_eval_yaml(text, where)[1]
