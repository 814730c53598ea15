"""The judge agreement plot: per reader, every pair of judges' raw agreement and Cohen's κ with 95% CIs, and
Krippendorff's α over all of them (`gacc_hf.scoring.agreement`). A figure that does not exist (κ when both
judges gave one verdict only) is drawn as no dot, its reason in the label. Drawn as `plots.py` draws: Agg
canvas, fixed dpi, no "Software" metadata, so the same results give the same bytes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gacc_hf.results.plots import _save, drawing

AGREEMENT_PNG = "agreement.png"
FIGURES = (("agreement", "raw agreement"), ("kappa", "Cohen's κ"))


def _rows(part: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(label, figure, row) of every dot of one reader's table: each pair's two figures, then α."""
    rows = [(f"{p['judge_a']} / {p['judge_b']}: {name}", key, p) for p in part["pairs"] for key, name in FIGURES]
    return [*rows, ("all judges: Krippendorff's α", "alpha", part["all"])]


def plot_agreement(parts: Sequence[Mapping[str, Any]], path: Path) -> Path:
    """One panel per reader whose judges were measured (`parts`: results.json's `agreement`)."""
    shown = [p for p in parts if not p.get("undefined")]
    heights = [max(2.0, 0.45 * len(_rows(p)) + 1.2) for p in shown] or [2.0]
    with drawing() as figure:
        fig = figure(figsize=(8.4, sum(heights)))
        axes = fig.subplots(max(1, len(shown)), 1, squeeze=False, gridspec_kw={"height_ratios": heights})[:, 0]
        for ax, part in zip(axes, shown, strict=False):
            rows = _rows(part)
            for y, (_label, key, row) in enumerate(reversed(rows)):
                value = row.get(key)
                if value is None:
                    ax.text(-0.95, y, f"undefined: {row.get(f'{key}_undefined')}", va="center", fontsize=8)
                    continue
                low, high = row.get(f"{key}_ci_low"), row.get(f"{key}_ci_high")
                if low is not None:
                    ax.plot([low, high], [y, y], color="tab:blue", linewidth=2)
                ax.plot([value], [y], "o", color="tab:blue")
            ax.set_yticks(range(len(rows)), [label for label, _, _ in reversed(rows)])
            ax.set_xlim(-1, 1)
            ax.axvline(0, color="grey", linewidth=0.8, linestyle=":")
            ax.set_title(f"Judge agreement, reader {part['reader']} ({part['n_answers']} answers, 95% CI)")
            ax.set_xlabel("agreement / κ / α (1: the judges agree on every answer)")
        fig.tight_layout()
        return _save(fig, path)
