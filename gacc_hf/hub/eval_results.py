"""A run's scores as Hub Eval Results: the entries of `.eval_results/gacc-bench.yaml` in the model repo.

One entry per task id (`benchmark_yaml.task_id`) the run has a score for, checked against the tasks the
benchmark dataset's `eval.yaml` defines. One file for the benchmark, not one per run: a model has one value
per task on the leaderboard, so a later publish replaces its entries by (dataset id, task id) and keeps every
other entry of the file. Entries are checked against the fields the Hub's format names (`check_entries`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml

from gacc_hf.hub.benchmark_yaml import TASK_CONFIG, TASK_METRICS, parse_eval_yaml, task_id
from gacc_hf.hub.commit import PublishError
from gacc_hf.protocol import is_ceiling
from gacc_hf.results.layout import RunResults
from gacc_hf.safe_yaml import dump_yaml, load_yaml
from gacc_hf.scoring.by_language import run_languages

EVAL_RESULTS_FILE = ".eval_results/gacc-bench.yaml"
_KEYS = {"dataset": True, "value": True, "verifyToken": False, "date": False, "source": False, "notes": False}
_DATASET_KEYS = {"id": True, "task_id": True, "revision": False}
_SOURCE_KEYS = {"url": True, "name": False, "user": False, "org": False}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")
_URL = re.compile(r"^https?://\S+$")


def _check_keys(value: Any, keys: Mapping[str, bool], where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise PublishError(f"{where}: must be a mapping with {', '.join(k for k, need in keys.items() if need)}")
    unknown = sorted(set(value) - set(keys))
    if unknown:
        raise PublishError(f"{where}: unknown field(s) {', '.join(unknown)}; the format names {', '.join(keys)}")
    missing = [k for k, need in keys.items() if need and value.get(k) is None]
    if missing:
        raise PublishError(f"{where}: required field(s) missing: {', '.join(missing)}")
    for key in keys:
        if key in value and key not in ("dataset", "source", "value") and not isinstance(value[key], str):
            raise PublishError(f"{where}: field {key!r} must be a string, got {value[key]!r}")
    return value


def check_entries(entries: Any, where: str = EVAL_RESULTS_FILE) -> None:
    """Refuse an `.eval_results` document that is not a list of entries with the format's fields."""
    if not isinstance(entries, list):
        raise PublishError(f"{where}: must be a list of entries")
    for i, entry in enumerate(entries):
        at = f"{where}: entry {i}"
        entry = _check_keys(entry, _KEYS, at)
        _check_keys(entry["dataset"], _DATASET_KEYS, f"{at}: dataset")
        if isinstance(entry["value"], bool) or not isinstance(entry["value"], int | float):
            raise PublishError(f"{at}: field 'value' must be a number, got {entry['value']!r}")
        if "date" in entry and not _DATE.match(entry["date"]):
            raise PublishError(f"{at}: field 'date' must be an ISO-8601 date or datetime, got {entry['date']!r}")
        if "source" in entry:
            source = _check_keys(entry["source"], _SOURCE_KEYS, f"{at}: source")
            if not _URL.match(source["url"]):
                raise PublishError(f"{at}: source: field 'url' must be an http(s) URL, got {source['url']!r}")


def run_task_scores(run: RunResults, compressor: str) -> dict[str, tuple[str, str | None, Mapping[str, Any]]]:
    """`{task id: (metric, language, score row)}` of one compressor: overall rows, and each language's rows
    when the run's data has several languages. Ceilings are never a task."""
    rows: list[tuple[str | None, Mapping[str, Any]]] = [(None, s) for s in run.scores]
    if len(run_languages(run.config)) > 1:
        rows += [(s["language"], s) for s in run.payload.get("scores_by_language") or []]
    return {
        task_id(m, s["condition"], s["ratio"], lang): (m, lang, s)
        for lang, s in rows
        if s["compressor"] == compressor and not is_ceiling(s)
        for m in TASK_METRICS
    }


def check_tasks(
    scores: Mapping[str, Any],
    eval_yaml: str,
    dataset_id: str,
    split: str | None,
    only_defined: bool = False,
    view: str = "judge",
) -> list[str]:
    """The task ids of `scores` the benchmark's `eval.yaml` does not define, skipped when `only_defined` (a run
    may hold cells the benchmark does not rank, such as another ratio) and refused, naming them and
    `--only-defined`, otherwise. Also refused: a task defined on another split or on a config other than
    `public` (the judge-free view of the judge rows a run reads, `view`), and a run that recorded no split (it read data
    with one split, a local file), which cannot be matched to a ranked split, saying how to name the split."""
    where = f"{dataset_id}:eval.yaml"
    defined = parse_eval_yaml(eval_yaml, where)
    unknown = [t for t in scores if t not in defined]
    kept = [t for t in scores if t in defined]
    if unknown and not only_defined:
        raise PublishError(
            f"{where} does not define task(s) {', '.join(unknown)}; it defines {', '.join(defined)}: pass "
            "--only-defined to publish the ones it defines, or publish a run at the ratios and conditions it ranks"
        )
    if not kept:
        raise PublishError(
            f"{where} defines none of the run's task(s) {', '.join(unknown)}; it defines {', '.join(defined)}"
        )
    configs = sorted({defined[t]["config"] for t in kept} - {TASK_CONFIG})
    if configs:
        raise PublishError(
            f"{where} ranks its tasks on config {', '.join(configs)}; the run read config {view!r}, the judge twin "
            f"of its {TASK_CONFIG!r} config only"
        )
    ranked = sorted({defined[t]["split"] for t in kept})
    if split is None:
        raise PublishError(
            f"the run recorded no split (it read data with one split), so it cannot be matched to split "
            f"{', '.join(ranked)}, which {where} ranks: pass --split {ranked[0]} if these rows are that split (the "
            f"card records their fingerprint), or rerun with --data {dataset_id} --split {ranked[0]}"
        )
    other = [s for s in ranked if s != split]
    if other:
        raise PublishError(f"the run used split {split!r}; {where} ranks its tasks on split {', '.join(other)}")
    return unknown


def _notes(run: RunResults, compressor: str, metric: str, language: str | None, row: Mapping[str, Any]) -> str:
    cfg, data = run.config, run.config["data"]
    revision = next((c["revision"] for c in cfg["compressors"] if c["name"] == compressor), "unknown")
    errors = len(run.payload.get("errors") or [])
    parts = [
        f"GACC {metric.capitalize()}, condition {row['condition']}, ratio {row['ratio']:g}"
        + (f", {language} groups only" if language else ""),
        f"compressor {compressor}@{revision}",
        f"reader {cfg['reader']['name']}@{cfg['reader']['revision']}",
        f"judge {cfg['judge']['name']}@{cfg['judge']['revision']}",
        f"data {data['fingerprint']} ({data.get('view') or 'judge'} view)",
        f"{row['n_questions']} questions, {row['n_goals']} goals",
        f"gacc-hf {cfg.get('gacc_hf_version', 'unknown')}, protocol {cfg.get('protocol_version', 'unknown')}",
    ]
    if errors:
        parts.append(f"{errors} failed call(s) scored as wrong")
    return "; ".join(parts)


def eval_results_entries(
    run: RunResults,
    compressor: str,
    dataset_id: str,
    *,
    dataset_revision: str | None = None,
    source: tuple[str, str] | None = None,
    skip: Collection[str] = (),
) -> list[dict[str, Any]]:
    """The run's entries, one per task id but those in `skip`, as the YAML holds them; `source` is (url, display
    name)."""
    url, name = source if source else (None, None)
    entries = [
        EvalResultEntry(
            dataset_id=dataset_id,
            task_id=tid,
            value=row[metric],
            dataset_revision=dataset_revision,
            date=run.config.get("finished_at") or run.config.get("started_at"),
            source_url=url,
            source_name=name,
            notes=_notes(run, compressor, metric, language, row),
        )
        for tid, (metric, language, row) in run_task_scores(run, compressor).items()
        if tid not in skip
    ]
    out = eval_result_entries_to_yaml(entries)
    check_entries(out)
    return out


def _key(entry: Any) -> tuple[Any, Any] | None:
    dataset = entry.get("dataset") if isinstance(entry, Mapping) else None
    return (dataset.get("id"), dataset.get("task_id")) if isinstance(dataset, Mapping) else None


def merge_entries(existing: str | None, ours: Sequence[Mapping[str, Any]], where: str) -> str:
    """The file's text: `existing` (the model repo's current file, if any) with ours replacing entries of the
    same (dataset id, task id); every other entry is kept as it was."""
    kept: list[Any] = []
    if existing is not None:
        doc = load_yaml(existing, where, "an .eval_results file", PublishError)
        if doc is not None and not isinstance(doc, list):
            raise PublishError(f"{where}: must be a list of entries, found {type(doc).__name__}")
        ids = {_key(e) for e in ours}
        kept = [e for e in doc or [] if _key(e) not in ids]
    return dump_yaml([*kept, *ours], width=100)
