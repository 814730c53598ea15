"""`report.md`: the markdown report of a results folder, rendered from its `RunResults` alone.

Ceilings (full context, oracle) are shown apart from the methods, as upper bounds.
"""

from __future__ import annotations

import shlex
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gacc_hf.results.layout import ANSWERS_FILE, MEMORIES_FILE, RESULTS_FILE, SCHEMA_VERSION, RunResults, is_ceiling
from gacc_hf.results.plots import GAPS_PNG, SCORES_PNG

REPORT_FILE = "report.md"


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


def _score_table(scores: Sequence[Mapping[str, Any]], evidence: bool) -> list[str]:
    head = ["compressor", "condition", "ratio", "Micro [95% CI]", "Macro [95% CI]"]
    head += ["Evidence Micro [95% CI]", "Evidence Macro [95% CI]"] if evidence else []
    rows = []
    for s in scores:
        row = [f"`{s['compressor']}`", s["condition"], f"{s['ratio']:g}"]
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
