"""`report.md`: the markdown report of a results folder, rendered from its `RunResults` alone.

Ceilings (full context, oracle) and the closed-book floor are shown apart from the methods, and from each
other: upper bounds, and a lower one.
"""

from __future__ import annotations

import shlex
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gacc_hf.protocol import FLOOR, is_ceiling
from gacc_hf.results.layout import ANSWERS_FILE, MEMORIES_FILE, RESULTS_FILE, SCHEMA_VERSION, RunResults
from gacc_hf.results.plots import GAPS_PNG, SCORES_PNG
from gacc_hf.results.reading_report import auc_table, curve_note, outcome_table, retention_note, retention_table
from gacc_hf.results.reading_report import md_table as _table
from gacc_hf.results.usage_report import cost_table, not_recorded, usage_table
from gacc_hf.run.config import partial_run
from gacc_hf.run.silence import silent_reader
from gacc_hf.scoring.by_language import named_languages, run_languages
from gacc_hf.templates import render

REPORT_FILE = "report.md"


def _ci(low: Any, high: Any, scale: float = 1.0, fmt: str = ".3f") -> str:
    return "" if low is None else f" [{scale * low:{fmt}}, {scale * high:{fmt}}]"


def _points(gap: Mapping[str, Any], metric: str) -> str:
    ci = _ci(gap[f"{metric}_diff_ci_low"], gap[f"{metric}_diff_ci_high"], 100, "+.1f")
    return f"{100 * gap[f'{metric}_diff']:+.1f}{ci}"


def _method(m: Mapping[str, Any]) -> str:
    return f"`{m['name']}` ({m['revision']})"


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


def _score_table(scores: Sequence[Mapping[str, Any]], evidence: bool, language: bool = False) -> str:
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


def render_report(run: RunResults, plots: Sequence[str] = (SCORES_PNG, GAPS_PNG)) -> str:
    """The markdown report of a results folder (`templates/report.md.j2`; no timestamps: the same folder gives
    the same bytes)."""
    p, cfg = run.payload, run.config
    evidence = _has_evidence(run.scores)
    ceilings = [s for s in run.scores if is_ceiling(s) and s["condition"] != FLOOR]
    floor = [s for s in run.scores if is_ceiling(s) and s["condition"] == FLOOR]
    exposures = p.get("exposures") or []
    command = p.get("command")
    return render(
        __file__,
        "report.md.j2",
        cfg=cfg,
        compressors=", ".join(_method(c) for c in cfg["compressors"]),
        reader=_method(cfg["reader"]),
        judge=_method(cfg["judge"]),
        data_line=_data_line(cfg),
        ratios=", ".join(f"{r:g}" for r in cfg["ratios"]),
        conditions=", ".join(cfg["conditions"]),
        seed=p.get("seed"),
        evidence=evidence,
        clean=not any(p["integrity"].values()),
        integrity_table=_table(["counter", "value"], [[k, v] for k, v in p["integrity"].items()]),
        exposures=len(exposures),
        exposure_table=_exposure_table(exposures),
        methods=any(not is_ceiling(s) for s in run.scores),
        score_table=_score_table([s for s in run.scores if not is_ceiling(s)], evidence),
        ceiling_table=_score_table(ceilings, evidence) if ceilings else "",
        floor_table=_score_table(floor, evidence) if floor else "",
        gap_table=_gap_table(p["gaps"]) if p.get("gaps") else "",
        languages=named_languages(cfg),
        language_table=_score_table(p.get("scores_by_language") or [], evidence, language=True)
        if len(run_languages(cfg)) > 1
        else "",
        plots=[(Path(name).stem, name) for name in plots],
        outcome_table=outcome_table(p.get("outcomes") or []),
        outcome_language_table=outcome_table(p.get("outcomes_by_language") or [], language=True),
        retention_table=retention_table(p.get("retention") or []),
        retention_note=retention_note(p.get("retention") or [], cfg["conditions"]),
        auc_table=auc_table(p.get("auc") or []),
        auc_language_table=auc_table(p.get("auc_by_language") or [], language=True),
        curve_note=curve_note(cfg["ratios"]),
        budget_table=_table(
            ["compressor", "ratio", "memories", "budget used", "truncated", "cached"], _budget_rows(run.memories)
        ),
        command=f"`{shlex.join(command)}`" if command else "not recorded",
        calls=", ".join(f"{k} {v}" for k, v in p["calls"].items()),
        usage_table=usage_table(p.get("usage"), p.get("cost"), not_recorded(p)),
        cost_table=cost_table(p.get("cost")),
        prices_source=(p.get("prices") or {}).get("source"),
        tokenizer=p["tokenizer"],
        git_revision=p.get("git_revision") or "unknown",
        versions=", ".join(f"{k} {v}" for k, v in (p.get("versions") or {}).items() if v),
        schema_version=SCHEMA_VERSION,
        answers_file=ANSWERS_FILE,
        memories_file=MEMORIES_FILE,
        results_file=RESULTS_FILE,
        errors=[e["error"] for e in p.get("errors") or []],
        silent=silent_reader(run.answers),
        partial=partial_run(cfg),
    )


def _exposure_table(exposures: Sequence[Mapping[str, Any]]) -> str:
    head = ["compressor", "condition", "ratio", "context", "goal", "kind", "text"]
    return _table(
        head,
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
    )


def _gap_table(gaps: Sequence[Mapping[str, Any]]) -> str:
    head = ["compressor", "gap", "ratio", "ΔMicro pp [95% CI]", "ΔMacro pp [95% CI]"]
    return _table(
        head,
        [
            [
                f"`{g['compressor']}`",
                g["gap"].replace("-", " − "),
                f"{g['ratio']:g}",
                _points(g, "micro"),
                _points(g, "macro"),
            ]
            for g in gaps
        ],
    )
