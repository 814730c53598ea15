"""`rescore`: a results folder's stored answers judged again by other judges, into a new results folder.

No compressor or reader is called: the memories and answers are the folder's own, checked first as `gacc
report` checks them (`verify_folder`: an answer edited by hand no longer gives the recorded scores and is
refused). The judges' calls go through the cache under the verdict keys a run files (`run.read.verdict_tasks`:
question, answer, references and source, and the judge's name and revision), so a judge already run on these
answers costs no call, and a run reuses these verdicts. The source each verdict binds comes from the run's
data, loaded again and refused unless its fingerprint is the one the folder records.

The new folder is a run of the folder's readers and the given judges (schema 5, one setting per reader and
judge); its config keeps the data identity, compressors, readers and their revisions, and `rescored_from`
names the folder it came from and the sha256 of that folder's results.json.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gacc_hf.budget import PROTOCOL_VERSION
from gacc_hf.data.fingerprint import fingerprint
from gacc_hf.data.loading import load_any
from gacc_hf.data.schema import validate
from gacc_hf.results.folder import verify_folder
from gacc_hf.results.layout import RESULTS_FILE, SCHEMA_VERSION, RunResults
from gacc_hf.results.result import BenchmarkResult
from gacc_hf.run.benchmark import harness_version, utc_now
from gacc_hf.run.cache import Cache
from gacc_hf.run.calls import Executor, OnError, check_bool, resolve_method
from gacc_hf.run.config import DATA_FILE, one_or_list
from gacc_hf.run.read import Asked, asked_of, verdict_tasks
from gacc_hf.run.tasks import Method
from gacc_hf.scoring.judging import label_figures, matched_labels
from gacc_hf.scoring.labels import read_labels
from gacc_hf.scoring.outcomes import outcome
from gacc_hf.scoring.reading import setting_scores
from gacc_hf.scoring.settings import config_methods, setting_of

__all__ = ["RescoreError", "rescore"]

SCHEMAS = (4, SCHEMA_VERSION)  # rows of schema 4 name no reader or judge: they are the run's one setting


class RescoreError(ValueError):
    """A folder that cannot be judged again (another protocol or schema, other data, no data to read the
    sources from) or an output folder that is not new."""


def rescore(
    run_dir: str | Path,
    judge: Any,
    output_dir: str | Path,
    *,
    cache_dir: str | None = None,
    on_error: OnError = "raise",
    batch_size: int = 8,
    progress: bool = True,
    labels: str | Path | None = None,
    command: Sequence[str] | None = None,
) -> BenchmarkResult:
    """Judge the stored answers of the results folder `run_dir` with `judge` (one method or a list, names or
    callables) and write the new results folder `output_dir` (new or empty); returns its result.

    `on_error` is `run_benchmark`'s: "raise" stops at the first failed verdict (done ones stay cached),
    "record" writes each failure into its answer row. `labels` (a labels file, `gacc_hf.scoring.labels`) adds
    each judge's accuracy against a person's verdicts (read, and matched to the answers, before any call).
    `command` is the command line recorded in the new folder."""
    out = Path(output_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise RescoreError(f"{out}: the output folder exists and is not empty; name a new one")
    if on_error not in ("raise", "record"):
        raise ValueError(f"on_error must be 'raise' or 'record', got {on_error!r}")
    source = Path(run_dir)
    run = _checked(source)
    given = judge if isinstance(judge, list | tuple) else [judge]
    judges = [resolve_method("judge", j, cache_dir is not None) for j in given]
    if len({j.name for j in judges}) < len(judges):
        raise ValueError(f"judge names must be distinct: {[j.name for j in judges]}")
    questions = _questions(source, run.config)
    labelled = None if labels is None else read_labels(labels)
    if labelled is not None:  # labels of another run are refused before any call
        matched_labels(labelled, run.answers, str(labels))
    started = utc_now()
    cache = Cache(cache_dir)
    try:
        ex = Executor(cache, on_error, batch_size, progress)
        answers = [row for rows in _by_reader(run.answers) for j in judges for row in _judged(rows, questions, j, ex)]
    finally:
        cache.close()
    result = _result(run, source, judges, answers, ex, started, cache_dir)
    if labelled is not None:
        n_boot, seed = int(result.config.get("n_bootstrap", 1000)), int(result.config.get("seed", 0))
        result.labels = label_figures(labelled, answers, str(labels), n_boot, seed)
    result.save(out, command)
    return result


def _checked(source: Path) -> RunResults:
    """The folder, verified as `gacc report` verifies it, if it is of this protocol and a schema rescore reads."""
    payload_path = source / RESULTS_FILE
    run = verify_folder(source)
    version = run.payload.get("schema_version")
    if version not in SCHEMAS:
        raise RescoreError(
            f"{payload_path}: schema_version {version!r}; rescore reads schema {SCHEMAS[0]} to {SCHEMAS[-1]} "
            "(`gacc report` upgrades an older folder)"
        )
    protocol = run.config.get("protocol_version")
    if protocol != PROTOCOL_VERSION:
        raise RescoreError(
            f"{payload_path}: config.protocol_version {protocol!r} is not this gacc-hf's {PROTOCOL_VERSION!r}: "
            "its answers were made under other rules"
        )
    return run


def _questions(source: Path, config: Mapping[str, Any]) -> dict[tuple[str, str], Asked]:
    """Each (goal, question) of the run's data with the hashes its verdict key binds, the data loaded again
    as the run loaded it and refused unless it is the same data (fingerprint)."""
    data = config.get("data") or {}
    spec = data.get("spec")
    where = f"{source / RESULTS_FILE}: config.data"
    if spec is None and (source / DATA_FILE).is_file():
        spec = str(source / DATA_FILE)  # an in-memory dataset, saved beside the folder's config
    if spec is None:
        raise RescoreError(f"{where} names no data spec: the judges need each answer's source")
    split, columns, revision = data.get("split"), data.get("columns"), data.get("revision")
    try:
        groups = validate(load_any(spec, split=split, columns=columns, revision=revision))
    except (OSError, ValueError) as exc:
        raise RescoreError(f"{where}: cannot load {spec!r} again ({exc})") from None
    found, recorded = fingerprint(groups), data.get("fingerprint")
    if recorded is not None and found != recorded:
        raise RescoreError(f"{where}: {spec!r} has changed since the run (fingerprint {found}, recorded {recorded})")
    return {(g.goal_id, a[0].question_id): a for g in groups for a in asked_of(g)}


def _by_reader(answers: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """The answer rows of each reader once (those of the reader's first judge: every judge saw the same)."""
    first: dict[str | None, Any] = {}
    parts: dict[str | None, list[Mapping[str, Any]]] = {}
    for row in answers:
        setting = setting_of(row)
        reader = None if setting is None else setting[0]
        if first.setdefault(reader, setting) == setting:
            parts.setdefault(reader, []).append(row)
    return list(parts.values())


def _judged(
    rows: Sequence[Mapping[str, Any]], questions: Mapping[tuple[str, str], Asked], judge: Method, ex: Executor
) -> list[dict[str, Any]]:
    """The rows judged by `judge` (through the cache, under a run's verdict keys), each row's judge,
    verdict, outcome and error replaced; a row whose memory or answer failed keeps its error (an answer the
    folder's judge failed on is judged again)."""
    keys: list[str | None] = []
    asked: list[Asked] = []
    answers: dict[str, dict[str, Any]] = {}
    for i, row in enumerate(rows):
        at = (str(row["goal_id"]), str(row["question_id"]))
        if at not in questions:
            raise RescoreError(f"answer row {i}: question {at[1]!r} of goal {at[0]!r} is not in the run's data")
        asked.append(questions[at])
        failed = row.get("answer") is None  # its memory or its reading failed; a failed verdict is asked again
        keys.append(None if failed else f"row{i}")
        if not failed:
            answers[f"row{i}"] = {"answer": str(row["answer"])}
    verdict_keys = list(keys)
    planned = verdict_tasks(verdict_keys, asked, judge)(answers)
    verdicts = ex.run(judge, "verdict", planned, lambda _item, out: {"correct": check_bool(out)})
    out = []
    for row, key in zip(rows, verdict_keys, strict=True):
        error, correct = row.get("error"), False
        if key is not None:
            error = verdicts[key].get("error")
            correct = error is None and bool(verdicts[key]["correct"])
        reader = row.get("reader")
        fields = {k: v for k, v in row.items() if k not in ("reader", "judge", "correct", "outcome", "error")}
        out.append(
            {
                "reader": reader,
                "judge": judge.name,
                **fields,
                "correct": correct,
                "outcome": outcome(correct if error is None else None, bool(row.get("evidence"))),
                "error": error,
            }
        )
    return out


def _result(
    run: RunResults,
    source: Path,
    judges: list[Method],
    answers: list[dict[str, Any]],
    ex: Executor,
    started: str,
    cache_dir: str | None,
) -> BenchmarkResult:
    config = dict(run.config)
    readers = config_methods(config, "reader")
    for row in answers:  # rows of a schema 4 folder name no reader: the run's one
        if row["reader"] is None:
            row["reader"] = readers[0]["name"]
    raw = (source / RESULTS_FILE).read_bytes()
    config.update(
        judge=one_or_list([{"name": j.name, "revision": j.revision} for j in judges]),
        methods={**(config.get("methods") or {}), "judge": one_or_list([j.spec for j in judges])},
        rescored_from={
            "path": str(source),
            "results_sha256": hashlib.sha256(raw).hexdigest(),
            "judge": run.config.get("judge"),
            "started_at": run.config.get("started_at"),
        },
        on_error=ex.on_error,
        cache_dir=cache_dir,
        gacc_hf_version=harness_version(),
        started_at=started,
        finished_at=utc_now(),
    )
    n_boot, seed = int(config.get("n_bootstrap", 1000)), int(config.get("seed", 0))
    scored = setting_scores(answers, n_boot, seed)
    payload = run.payload
    return BenchmarkResult(
        scores=scored["scores"],
        scores_by_language=scored["scores_by_language"],
        memories=run.memories,
        answers=answers,
        calls=dict(ex.calls),
        integrity=dict(payload["integrity"]),
        config=config,
        tokenizer=payload["tokenizer"],
        errors=ex.errors,
        exposures=list(payload.get("exposures") or []),
        seconds={role: round(s, 3) for role, s in ex.seconds.items()},
        method_seconds={role: {n: round(s, 3) for n, s in m.items()} for role, m in ex.method_seconds.items()},
        generated_tokens=dict(ex.generated_tokens),
        usage=None,  # type: ignore[arg-type]  # the answers' tokens are the source run's; not counted here
    )
