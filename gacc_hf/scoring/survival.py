"""Do conclusions survive another reader or judge? Rankings, Kendall's τ-b between them, and k-of-m wins.

A setting is one (reader, judge) under which the same compressors' cells were answered and judged on the same
questions. Per setting the compressors are ranked by Micro; Kendall's τ-b says how far two settings' rankings
agree (1: the same order, −1: reversed; ties counted as τ-b counts them), with a goal-bootstrap CI drawn as the
scores' are (`scoring.scores`: whole goals resampled, seeded, one draw shared by every setting, so τ's interval
is paired). For every pair of compressors A, B: in how many of the m settings B − A > 0 (k of m), and in how
many its paired 95% CI lies above 0, each setting's difference with its CI (`scoring.scores.paired_difference`).
Ceilings (full context, oracle) are bounds, not compressors: they are not ranked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from gacc_hf.protocol import is_ceiling
from gacc_hf.scoring.agreement import figure
from gacc_hf.scoring.scores import DEFAULT_BOOTSTRAP, paired_difference, resampled_ratios
from gacc_hf.scoring.shares import per_goal

Rows = Sequence[Mapping[str, Any]]


class SurvivalError(ValueError):
    """The settings did not answer the same compressors' cells on the same questions."""


def tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's τ-b of two score vectors over the same items; None when either ranks every item alike.

    >>> tau_b([3, 2, 1], [3, 1, 2])
    0.3333333333333333
    """
    value = _tau_b(np.asarray(x, dtype=float)[None, :], np.asarray(y, dtype=float)[None, :])[0]
    return float(value) if np.isfinite(value) else None


def _tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """τ-b of each row of `x` against the same row of `y` (rows: resamples; columns: items); NaN if undefined."""
    n = x.shape[1]
    concordance = np.zeros(len(x))
    tied_x = np.zeros(len(x))
    tied_y = np.zeros(len(x))
    for i, j in combinations(range(n), 2):
        sx, sy = np.sign(x[:, i] - x[:, j]), np.sign(y[:, i] - y[:, j])
        concordance += sx * sy
        tied_x += sx == 0
        tied_y += sy == 0
    pairs = n * (n - 1) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        return concordance / np.sqrt((pairs - tied_x) * (pairs - tied_y))


def _methods(rows: Rows, condition: str) -> dict[tuple[str, float], dict[str, tuple[str, bool]]]:
    """(compressor, ratio) → question_id → (goal_id, correct), for the non-ceiling rows of `condition`."""
    cells: dict[tuple[str, float], dict[str, tuple[str, bool]]] = {}
    for r in rows:
        if r["condition"] == condition and not is_ceiling(r):
            cell = cells.setdefault((str(r["compressor"]), float(r["ratio"])), {})
            cell[str(r["question_id"])] = (str(r["goal_id"]), bool(r["correct"]))
    return cells


def _check_same(settings: Mapping[str, Rows], condition: str) -> dict[str, dict]:
    names = list(settings)
    if len(names) < 2:
        raise SurvivalError(f"survival needs two or more settings, got {len(names)}")
    cells = {name: _methods(rows, condition) for name, rows in settings.items()}
    first = cells[names[0]]
    if not first:
        raise SurvivalError(f"{names[0]} has no compressor answering at condition {condition}")
    for name in names[1:]:
        if cells[name].keys() != first.keys():
            only = sorted(cells[name].keys() ^ first.keys())
            shown = ", ".join(f"{c} r={r:g}" for c, r in only[:3])
            raise SurvivalError(
                f"{names[0]} and {name} do not hold the same compressors' cells at condition {condition}: "
                f"{len(only)} only in one of them (e.g. {shown})"
            )
        for cell, answers in cells[name].items():
            if answers.keys() != first[cell].keys() or any(answers[q][0] != first[cell][q][0] for q in answers):
                raise SurvivalError(
                    f"{names[0]} and {name} did not answer the same questions (or goals) in {cell[0]} r={cell[1]:g}"
                )
    return cells


def survival(
    settings: Mapping[str, Rows], n_boot: int = DEFAULT_BOOTSTRAP, seed: int = 0, condition: str = "own"
) -> list[dict[str, Any]]:
    """Rankings, τ-b and k-of-m wins of the compressors answering under every setting, one entry per ratio.

    `settings` maps a setting's name to its answer rows; every setting must hold the same compressors' cells
    (at `condition`) answering the same questions of the same goals, else `SurvivalError` says what differs.
    """
    cells = _check_same(settings, condition)
    names = list(settings)
    compressors = list(dict.fromkeys(c for c, _ in cells[names[0]]))
    ratios = sorted({r for _, r in cells[names[0]]})
    out = []
    for ratio in ratios:
        questions = list(cells[names[0]][(compressors[0], ratio)])
        goals = [cells[names[0]][(compressors[0], ratio)][q][0] for q in questions]
        verdicts = {(s, c): [cells[s][(c, ratio)][q][1] for q in questions] for s in names for c in compressors}
        out.append(_one_ratio(condition, ratio, names, compressors, goals, verdicts, n_boot, seed))
    return out


def _one_ratio(
    condition: str,
    ratio: float,
    names: list[str],
    compressors: list[str],
    goals: list[str],
    verdicts: dict[tuple[str, str], list[bool]],
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    keys = list(verdicts)
    n, sums = per_goal(goals, [verdicts[k] for k in keys])
    micro = {k: float(s.sum() / n.sum()) for k, s in zip(keys, sums, strict=True)}
    draws = None
    if n_boot > 0:
        draws = dict(zip(keys, resampled_ratios([(s, n.astype(float)) for s in sums], n_boot, seed), strict=True))
    rankings = [{"setting": s, "ranking": _ranking({c: micro[s, c] for c in compressors})} for s in names]
    taus = []
    for a, b in combinations(names, 2):
        value = tau_b([micro[a, c] for c in compressors], [micro[b, c] for c in compressors])
        tau_draws = None
        if draws is not None:
            tau_draws = _tau_b(*(np.column_stack([draws[s, c] for c in compressors]) for s in (a, b)))
        why = "a setting ranks every compressor alike" if len(compressors) > 1 else "one compressor only"
        tau = figure(value, tau_draws, why, "drew goals on which a setting ranks every compressor alike")
        taus.append({"setting_a": a, "setting_b": b, **tau.as_dict("tau")})
    pairs = [_wins(a, b, names, goals, verdicts, n_boot, seed) for a, b in combinations(compressors, 2)]
    return {
        "condition": condition,
        "ratio": ratio,
        "settings": names,
        "compressors": compressors,
        "n_questions": len(goals),
        "n_goals": len(n),
        "rankings": rankings,
        "tau": taus,
        "pairs": pairs,
    }


def _ranking(micro: dict[str, float]) -> list[dict[str, Any]]:
    """Compressors by Micro, best first; tied ones share the best of their ranks (1, 1, 3)."""
    order = sorted(micro, key=lambda c: -micro[c])
    return [{"compressor": c, "micro": micro[c], "rank": 1 + sum(v > micro[c] for v in micro.values())} for c in order]


def _wins(
    a: str,
    b: str,
    names: list[str],
    goals: list[str],
    verdicts: dict[tuple[str, str], list[bool]],
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    per_setting = []
    for s in names:
        d = paired_difference(goals, verdicts[s, a], verdicts[s, b], n_boot, seed)
        low, high = d.micro_diff_ci if n_boot > 0 else (None, None)
        per_setting.append({"setting": s, "micro_diff": d.micro_diff, "ci_low": low, "ci_high": high})
    return {
        "a": a,
        "b": b,
        "k": sum(p["micro_diff"] > 0 for p in per_setting),
        "k_ci_above_zero": sum(p["ci_low"] is not None and p["ci_low"] > 0 for p in per_setting),
        "m": len(names),
        "settings": per_setting,
    }


def _pp(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:+.1f}"


def format_survival(sections: Sequence[Mapping[str, Any]], settings: Mapping[str, str] | None = None) -> str:
    """The survival section as Markdown: per ratio the rankings, the τ-b table and the k-of-m table
    (differences B − A in percentage points with their 95% CIs). `settings` may describe each setting's name."""
    lines = ["## Do conclusions survive?", ""]
    for name, about in (settings or {}).items():
        lines.append(f"- `{name}`: {about}")
    for sec in sections:
        lines += ["", f"### {sec['condition']}, ratio {sec['ratio']:g} ({sec['n_questions']} questions, "
                  f"{sec['n_goals']} goals)", "", "Rankings by Micro (best first):", ""]  # fmt: skip
        lines += ["| setting | ranking |", "|---|---|"]
        lines += [_md_row(row) for row in ranking_rows(sec)]
        lines += [
            "",
            "Kendall's τ-b between rankings:",
            "",
            "| setting A | setting B | τ-b [95% CI] |",
            "|---|---|---|",
        ]
        lines += [_md_row(row) for row in tau_rows(sec)]
        head = " | ".join(pairs_head(sec)[4:])
        lines += ["", "B − A > 0 in k of m settings:", "", f"| A | B | k of m | CI above 0 | {head} |"]
        lines.append("|---" * (4 + len(sec["settings"])) + "|")
        lines += [_md_row(row) for row in pair_rows(sec)]
    return "\n".join(lines) + "\n"


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def ranking_rows(sec: Mapping[str, Any]) -> list[list[str]]:
    """Each setting's ranking by Micro as [setting, "1. name (Micro), ..."] (the report's table and the page's)."""
    return [
        [r["setting"], ", ".join(f"{x['rank']}. {x['compressor']} ({x['micro']:.3f})" for x in r["ranking"])]
        for r in sec["rankings"]
    ]


def tau_rows(sec: Mapping[str, Any]) -> list[list[str]]:
    """Each pair of settings as [setting A, setting B, τ-b with its CI and note, or why it is undefined]."""
    rows = []
    for t in sec["tau"]:
        value = t["tau_undefined"] if t["tau"] is None else f"{t['tau']:+.3f}"
        if t["tau_ci_low"] is not None:
            value += f" [{t['tau_ci_low']:+.3f}, {t['tau_ci_high']:+.3f}]"
        rows.append([t["setting_a"], t["setting_b"], value + _note(t["tau_ci_note"])])
    return rows


def pairs_head(sec: Mapping[str, Any]) -> list[str]:
    """The k-of-m table's head: A, B, k of m, CI above 0, then each setting's B − A."""
    return ["A", "B", "k of m", "CI above 0", *(f"{s}: B − A pp [95% CI]" for s in sec["settings"])]


def pair_rows(sec: Mapping[str, Any]) -> list[list[str]]:
    """Each pair of compressors as [A, B, "k of m", CIs above 0, each setting's B − A in pp with its CI]."""
    return [
        [p["a"], p["b"], f"{p['k']} of {p['m']}", str(p["k_ci_above_zero"])]
        + [
            _pp(d["micro_diff"]) + ("" if d["ci_low"] is None else f" [{_pp(d['ci_low'])}, {_pp(d['ci_high'])}]")
            for d in p["settings"]
        ]
        for p in sec["pairs"]
    ]


def _note(note: str | None) -> str:
    return "" if note is None else f" ({note})"
