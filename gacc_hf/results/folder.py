"""A run's results folder as a whole: write it, read it back, verify it, rebuild its report.

`write_results` writes a fresh run, whole folder at once (`gacc_hf.results.atomic`); `read_folder` reads
schema 1 to 5 (`gacc_hf.results.layout`). Rows of a folder before schema 5 name no reader and judge (they are
the run's: every figure re-derived from them is keyed as stored); schema 1 (ledger and answers embedded in
`results.json`) is still read, answers of schema 1 and 2 get their `outcome` from their verdict and evidence
flag, a folder written before schema 4 reads with `usage` None (not recorded: its tokens are unknown), and rows written
before another column existed read without it; anything else is refused with a message naming the file. The
recorded sha256 of each parquet file ties the files of a folder together. `verify_folder` runs every check a
folder can be given without a model (file checksums, every figure re-derived from `answers.parquet`), and
`rebuild` regenerates report and plots after those checks. Report and plots are deterministic, so a rebuild
reproduces them byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from gacc_hf.collector import collector_paused
from gacc_hf.protocol import is_ceiling
from gacc_hf.results.agreement_plot import AGREEMENT_PNG, plot_agreement
from gacc_hf.results.atomic import aside_path, recover, replace_folder, target_path, write_atomic
from gacc_hf.results.by_language import is_language_png, plot_languages
from gacc_hf.results.judging_check import checked_judging
from gacc_hf.results.layout import (
    ANSWERS_FILE,
    MEMORIES_FILE,
    RESULTS_FILE,
    SCHEMA_VERSION,
    TABLES,
    ResultsError,
    RunResults,
    json_bytes,
    parquet_bytes,
    read_table,
    table_rows,
)
from gacc_hf.results.outcome_plot import OUTCOMES_PNG, plot_outcomes
from gacc_hf.results.page import PAGE_FILE, write_page
from gacc_hf.results.plots import GAPS_PNG, SCORES_PNG, plot_gaps, plot_scores
from gacc_hf.results.report import REPORT_FILE, render_report
from gacc_hf.results.views import setting_views, settings_line, several_settings
from gacc_hf.scoring.by_language import language_mismatch
from gacc_hf.scoring.groups import Rows
from gacc_hf.scoring.judging import format_judging
from gacc_hf.scoring.outcomes import outcome
from gacc_hf.scoring.reading import KEYS, all_figures
from gacc_hf.scoring.settings import SETTING, Setting, config_settings, setting_label
from gacc_hf.strict_json import check_finite, dumps


def folder_files(run: RunResults) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The `results.json` document (current schema, file checksums) and the bytes of every data file."""
    data: dict[str, bytes] = {}
    files = {}
    for key, (name, types) in TABLES.items():
        data[name] = parquet_bytes(getattr(run, key), types)
        files[key] = {"path": name, "rows": len(getattr(run, key)), "sha256": hashlib.sha256(data[name]).hexdigest()}
    payload = {**run.payload, "schema_version": SCHEMA_VERSION, "files": files}
    data[RESULTS_FILE] = json_bytes(payload)
    return payload, data


def write_folder(
    run: RunResults, out_dir: str | Path, extra: Callable[[RunResults, Path], object] | None = None
) -> Path:
    """Write a whole results folder atomically: the data files, then `extra(run, staging_dir)` (report, plots).

    `run.payload` is updated to the document written. Returns the path of results.json.
    """
    run.payload, data = folder_files(run)

    def fill(stage: Path) -> None:
        for name, content in data.items():
            write_atomic(stage / name, content)
        if extra is not None:
            extra(run, stage)

    return replace_folder(out_dir, fill) / RESULTS_FILE


@collector_paused()
def read_folder(run_dir: str | Path) -> RunResults:
    """Read a results folder of schema 1 to 5; raise ResultsError naming the file at fault.

    A folder caught between the two renames of a replace is read from its aside copy (the previous run).
    """
    root = Path(run_dir)
    if not root.is_dir() and aside_path(target_path(root)).is_dir():
        root = aside_path(target_path(root))
    if not root.is_dir():
        raise ResultsError(f"{root}: not a results folder (no such directory)")
    payload = _read_json(root / RESULTS_FILE)
    version = payload.get("schema_version")
    if isinstance(version, int) and version < 4:
        payload.setdefault("usage", None)  # not recorded before schema 4
    if version == 1:
        return _with_outcomes(_from_schema_1(root / RESULTS_FILE, payload))
    if version not in (2, 3, 4, SCHEMA_VERSION):
        if isinstance(version, int) and version > SCHEMA_VERSION:
            raise ResultsError(
                f"{root / RESULTS_FILE}: schema_version {version} was written by a newer gacc-hf; "
                f"this one reads schema 1 to {SCHEMA_VERSION}: upgrade gacc-hf"
            )
        raise ResultsError(
            f"{root / RESULTS_FILE}: unknown schema_version {version!r}; this gacc-hf reads 1 to {SCHEMA_VERSION}"
        )
    _require(root / RESULTS_FILE, payload, ("config", "scores", "integrity", "calls", "tokenizer", "files"))
    tables = {key: _read_table(root, key, payload["files"]) for key in TABLES}
    run = RunResults(payload, tables["answers"], tables["memories"])
    return run if version in (3, 4, SCHEMA_VERSION) else _with_outcomes(run)


def _with_outcomes(run: RunResults) -> RunResults:
    """Answers of an older schema with their outcome filled in (rows without an evidence flag get none)."""
    for row in run.answers:
        if "outcome" not in row and "evidence" in row:
            row["outcome"] = outcome(None if row.get("error") else row["correct"], row["evidence"])
    return run


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ResultsError(f"{path}: missing; a results folder holds {RESULTS_FILE}, {ANSWERS_FILE}, {MEMORIES_FILE}")
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{path}: not valid JSON (truncated or corrupted?): {exc}") from exc
    if not isinstance(payload, dict):
        raise ResultsError(f"{path}: expected a JSON object, got {type(payload).__name__}")
    check_finite(payload, str(path), ResultsError)  # NaN, Infinity, 1e999: named here, not when written again
    if "schema_version" not in payload:
        raise ResultsError(f"{path}: no schema_version; not a gacc-hf results file")
    return payload


def _require(path: Path, payload: Mapping[str, Any], keys: tuple[str, ...]) -> None:
    missing = [k for k in keys if k not in payload]
    if missing:
        raise ResultsError(f"{path}: missing field(s) {', '.join(missing)}")


def _read_table(root: Path, key: str, files: Any) -> list[dict[str, Any]]:
    name = TABLES[key][0]
    path = root / name
    entry = files.get(key) if isinstance(files, Mapping) else None
    if not isinstance(entry, Mapping) or not {"rows", "sha256"} <= entry.keys():
        raise ResultsError(f"{root / RESULTS_FILE}: field files.{key} must record the rows and sha256 of {name}")
    if not path.is_file():
        raise ResultsError(f"{path}: missing (results.json lists it with {entry['rows']} rows)")
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise ResultsError(
            f"{path}: content does not match the sha256 recorded in {RESULTS_FILE} (truncated or replaced?)"
        )
    try:
        table = read_table(data)
    except (pa.ArrowException, OSError) as exc:
        raise ResultsError(f"{path}: not a readable parquet file: {exc}") from exc
    _check_finite_columns(table, path)
    rows = table_rows(table)
    if len(rows) != entry["rows"]:
        raise ResultsError(f"{path}: {len(rows)} rows, but {RESULTS_FILE} records {entry['rows']}")
    return rows


def _check_finite_columns(table: pa.Table, path: Path) -> None:
    """Refuse a NaN or infinite number in a float column, naming its row and column (scores built on it
    would be NaN, and `results.json` could not hold them)."""
    for field in table.schema:
        if pa.types.is_floating(field.type):
            column = table.column(field.name)
            bad = pc.invert(pc.is_finite(column))  # a null stays null: a missing value is not a bad one
            if pc.any(bad).as_py():
                row = pc.index(bad, True).as_py()
                value = column[row].as_py()
                raise ResultsError(f"{path}: row {row}, column {field.name} is {value}, not a finite number")


def _from_schema_1(path: Path, payload: dict[str, Any]) -> RunResults:
    """Schema 1 kept the ledger and answers inside results.json and had no top-level seed."""
    _require(path, payload, ("config", "scores", "integrity", "calls", "tokenizer", "memories", "answers"))
    rest = {k: v for k, v in payload.items() if k not in ("schema_version", "memories", "answers")}
    body = {"schema_version": SCHEMA_VERSION, "seed": payload["config"].get("seed"), **rest}
    return RunResults(body, list(payload["answers"]), list(payload["memories"]))


# what `rebuild` regenerates (and the per-language plots, scores_<language>.png); every other file is kept as it is
DERIVED = (REPORT_FILE, PAGE_FILE, SCORES_PNG, GAPS_PNG, OUTCOMES_PNG, AGREEMENT_PNG)


def derived_figures(answers: Sequence[Mapping[str, Any]], config: Mapping[str, Any]) -> dict[str, Any]:
    """Scores, goal gaps and reading aids computed from the answer rows alone, with the run's bootstrap settings."""
    n_boot, seed = int(config.get("n_bootstrap", 1000)), int(config.get("seed", 0))
    return all_figures(answers, n_boot, seed)


class Documented(Protocol):
    """What a fresh run's folder is written from (a `gacc_hf.results.result.BenchmarkResult`): its
    `results.json` document and its per-row tables."""

    answers: list[dict[str, Any]]
    memories: list[dict[str, Any]]

    def results_document(self, command: Sequence[str] | None = None) -> dict[str, Any]: ...


def write_results(
    result: Documented,
    out_dir: str | Path,
    command: Sequence[str] | None = None,
    extra: Callable[[Path], object] | None = None,
) -> Path:
    """Write the whole results folder of a run into `out_dir`, atomically; returns the path of `results.json`.

    `command` is the command line that made the run, recorded as given; `extra(folder)` writes further files
    into the folder before it is moved into place.
    """
    run = RunResults(result.results_document(command), result.answers, result.memories)

    def outputs(r: RunResults, stage: Path) -> None:
        write_outputs(r, stage)
        if extra is not None:
            extra(stage)

    return write_folder(run, out_dir, extra=outputs)


@collector_paused()
def write_outputs(run: RunResults, out_dir: str | Path) -> list[Path]:
    """`report.md`, `report.html` and the PNG plots of a run (deterministic bytes); a run of several (reader,
    judge) settings gets a report section and plots per setting (`setting_outputs`)."""
    if several_settings(run.config):
        return setting_outputs(run, out_dir)
    out = Path(out_dir)
    paths = []
    if any(not is_ceiling(s) for s in run.scores):
        paths.append(plot_scores(run.scores, out / SCORES_PNG))
    if run.payload.get("gaps"):
        paths.append(plot_gaps(run.payload["gaps"], out / GAPS_PNG))
    if run.payload.get("outcomes"):
        paths.append(plot_outcomes(run.payload["outcomes"], out / OUTCOMES_PNG))
    paths += plot_languages(run.payload.get("scores_by_language") or [], out)
    judging, plotted = judging_outputs(run, out)
    report = out / REPORT_FILE
    write_atomic(report, (render_report(run, [p.name for p in paths]) + judging).encode("utf-8"))
    return [report, write_page(run, out, paths), *paths, *plotted]


def setting_outputs(run: RunResults, out_dir: str | Path) -> list[Path]:
    """The outputs of a run of several settings: per setting its plots (`scores.<reader>.<judge>.png`, ...,
    titled with the setting) and its report, as a run of that setting alone would have them, one after the
    other in `report.md`; the page shows every setting (`gacc_hf.results.page`)."""
    out = Path(out_dir)
    paths: list[Path] = []
    sections = [
        f"# GACC-Bench results: {len(config_settings(run.config))} (reader, judge) settings\n\n"
        f"This run read the same memories with each reader and judged each answer with each judge: "
        f"{settings_line(run.config)}. Each setting is reported below as a run of its own.\n"
    ]
    for setting, view in setting_views(run):
        label, suffix = setting_label(setting), setting_suffix(setting)
        mine = []
        if any(not is_ceiling(s) for s in view.scores):
            mine.append(plot_scores(view.scores, out / f"scores.{suffix}.png", title=f"Scores, {label}"))
        if view.payload.get("gaps"):
            mine.append(plot_gaps(view.payload["gaps"], out / f"gaps.{suffix}.png", title=f"Goal gaps, {label}"))
        if view.payload.get("outcomes"):
            path = out / f"outcomes.{suffix}.png"
            mine.append(plot_outcomes(view.payload["outcomes"], path, title=f"Outcomes, {label}"))
        text = render_report(view, [p.name for p in mine])
        head, _, rest = text.partition("\n")
        sections.append(f"{head}: {label}\n{rest}")
        paths += mine
    judging, plotted = judging_outputs(run, out)
    report = out / REPORT_FILE
    write_atomic(report, ("\n".join(sections) + judging).encode("utf-8"))
    return [report, write_page(run, out, paths), *paths, *plotted]


def judging_outputs(run: RunResults, out: Path) -> tuple[str, list[Path]]:
    """The judging sections of the report (agreement, survival, labels: `gacc_hf.scoring.judging`), after
    the rest, and the agreement plot; nothing for a run without them."""
    plotted = [plot_agreement(run.payload["agreement"], out / AGREEMENT_PNG)] if run.payload.get("agreement") else []
    text = format_judging(run.payload, AGREEMENT_PNG if plotted else None)
    return (f"\n{text}" if text else ""), plotted


def setting_suffix(setting: Setting) -> str:
    """A setting in a file name: its reader and judge names, any character but letters, digits, `-` and `_`
    as `-`.

    >>> setting_suffix(("hf:org/model", "contains"))
    'hf-org-model.contains'
    """
    return ".".join(re.sub(r"[^A-Za-z0-9_-]+", "-", name) for name in setting)


@collector_paused()
def verify_folder(run_dir: str | Path) -> RunResults:
    """Read a results folder and run every check it can be given without a model.

    The parquet files must match the sha256 recorded in `results.json` (`read_folder`), and every figure is
    re-derived from `answers.parquet`: point estimates and counts must match `results.json` exactly (else
    ResultsError); a CI that differs only because the bootstrap of another harness version drew differently
    gives a warning and the stored figures are kept. The exposures counter must count the exposure rows
    recorded beside it. Gaps and reading aids (`gacc_hf.scoring.reading`) missing from an older file are filled in;
    the judges' agreement and the survival of the ranking are held to the answers too (`judging_check`).
    """
    run = read_folder(run_dir)
    path = Path(run_dir) / RESULTS_FILE
    rows, counted = run.payload.get("exposures"), run.payload["integrity"].get("exposures")
    if rows is not None and counted != len(rows):
        raise ResultsError(f"{path}: integrity.exposures is {counted} but {len(rows)} exposure row(s) are recorded")
    answers = Rows(run.answers)  # split by setting once, for the figures and the judging figures
    if problem := language_mismatch(run.payload, answers):
        raise ResultsError(f"{path}: {problem} ({ANSWERS_FILE}); this file was edited or is damaged")
    derived = derived_figures(answers, run.config)
    _verify(path, "scores", run.scores, derived["scores"], ("compressor", "condition", "ratio"))
    if "scores_by_language" in run.payload:  # absent from folders written before answers carried a language
        key = ("language", "compressor", "condition", "ratio")
        _verify(path, "scores_by_language", run.payload["scores_by_language"], derived["scores_by_language"], key)
    elif derived["scores_by_language"]:  # a language's scores are never left out of a report or card
        run.payload = {**run.payload, "scores_by_language": derived["scores_by_language"]}
    for what, key in {"gaps": ("compressor", "gap", "ratio"), **KEYS}.items():
        if what in run.payload:
            _verify(path, what, run.payload[what], derived[what], key)
        else:
            run.payload = {**run.payload, what: derived[what]}
    n_boot, seed = int(run.config.get("n_bootstrap", 1000)), int(run.config.get("seed", 0))
    judged = checked_judging(path, run.payload, answers, n_boot, seed)
    run.payload = {**run.payload, **judged}  # a stored figure keeps its place in the file
    return run


def rebuild(run_dir: str | Path) -> list[Path]:
    """Regenerate report and plots from a results folder alone (no model is loaded or called).

    The folder is checked first (`verify_folder`) and replaced as a whole, like a fresh run: its other files
    (data, config.yaml) are kept byte for byte; a folder of an older schema is upgraded (schema 1's ledger and
    answers move to parquet files; answers get their outcome column), and figures `results.json` lacks are added
    to it. Returns the files written.
    """
    recover(run_dir)
    run = verify_folder(run_dir)
    if "files" not in run.payload or run.payload.get("schema_version") != SCHEMA_VERSION:
        run.payload, data = folder_files(run)
    else:  # figures this version derives and the file lacks were filled in by the checks: written too
        data = {RESULTS_FILE: json_bytes(run.payload)}
    stored = (Path(run_dir) / RESULTS_FILE).read_bytes()
    names = [name for name in data if name != RESULTS_FILE or data[name] != stored]
    source = Path(run_dir).resolve()

    def fill(stage: Path) -> None:  # the run's own files (data, config.yaml) as they are; outputs afresh
        for path in source.iterdir():
            if path.is_file() and path.name not in {*DERIVED, *data} and not is_language_png(path.name):
                shutil.copyfile(path, stage / path.name)
        for name, content in data.items():
            write_atomic(stage / name, content)
        names.extend(p.name for p in write_outputs(run, stage))

    replace_folder(run_dir, fill)
    return [Path(run_dir) / name for name in names]


def _written_alike(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two rows are written as the same bytes in `results.json` (`json_bytes`): their compact JSON is
    compared, the same tokens without the indent, which Python's encoder writes in C (an indented dump runs in
    Python, and a run has hundreds of rows to compare)."""
    written_a, written_b = (dumps(row, RESULTS_FILE, ensure_ascii=False) for row in (a, b))
    return written_a == written_b


def _verify(path: Path, what: str, stored: list[dict[str, Any]], derived: list[dict[str, Any]], key: tuple) -> None:
    """Stored rows must equal the re-derived ones; CI-only differences warn instead of failing."""
    key = (*key, *SETTING)  # and a row's reader and judge, where it names them (schema 5)
    by_cell = {tuple(r.get(k) for k in key): r for r in derived}
    if len(stored) != len(derived) or any(tuple(r.get(k) for k in key) not in by_cell for r in stored):
        raise ResultsError(f"{path}: {what} cover other cells than those derived from {ANSWERS_FILE}")
    ci_only = 0
    for row in stored:
        fresh = by_cell[tuple(row.get(k) for k in key)]
        if _written_alike(row, fresh):
            continue
        points = [k for k in {*row, *fresh} if "_ci_" not in k and row.get(k) != fresh.get(k)]
        if points:
            where = ", ".join(f"{k}={row[k]}" for k in key if k in row)
            raise ResultsError(
                f"{path}: {what} at {where} differ from {ANSWERS_FILE} in {', '.join(sorted(points))} "
                f"(stored {[row.get(k) for k in sorted(points)]}, recomputed {[fresh.get(k) for k in sorted(points)]})"
            )
        ci_only += 1
    if ci_only:
        warnings.warn(
            f"{path}: {ci_only} {what} row(s) have CIs that this harness version's bootstrap does not reproduce; "
            "keeping the stored figures",
            stacklevel=3,
        )
