"""`outcomes.png`: each cell's questions split into right, guessed, missed and lost, as one stacked bar.

A reading aid beside the scores: the bar's `right` + `guessed` height is the cell's Micro, its `right` +
`missed` height its evidence recall, so the plot shows at a glance whether a cell lost its points in the
compressor (`lost`) or in the reader (`missed`). Bounds (ceilings, the closed-book floor) are hatched.
Drawn like the other plots (`gacc_hf.results.plots`): Agg canvas, fixed dpi, byte-identical for equal input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gacc_hf.results.plots import _save, drawing
from gacc_hf.scoring.outcomes import OUTCOMES

if TYPE_CHECKING:
    from matplotlib.figure import Figure

OUTCOMES_PNG = "outcomes.png"
COLOURS = {"right": "#2b8a3e", "guessed": "#94d82d", "missed": "#f59f00", "lost": "#c92a2a"}


def _label(row: Mapping[str, Any]) -> str:
    return f"{row['compressor']}\n{row['condition']} r={row['ratio']:g}"


def outcomes_figure(rows: Sequence[Mapping[str, Any]], title: str = "") -> Figure:
    """One horizontal stacked bar per cell, in the run's order, shares in % of the cell's questions."""
    if not rows:
        raise ValueError("no outcome shares to plot (answers without an outcome)")
    with drawing() as figure:
        from matplotlib.patches import Patch

        fig = figure(figsize=(7.5, 1.2 + 0.45 * len(rows)))
        ax = fig.subplots()
        ys = list(range(len(rows)))[::-1]
        left = [0.0] * len(rows)
        for name in OUTCOMES:
            widths = [100 * r[name] for r in rows]
            hatches = ["//" if r.get("ceiling") else "" for r in rows]
            bars = ax.barh(ys, widths, left=left, color=COLOURS[name], height=0.7, edgecolor="white")
            for bar, hatch in zip(bars, hatches, strict=True):
                bar.set_hatch(hatch)
            left = [a + b for a, b in zip(left, widths, strict=True)]
        ax.set_yticks(ys)
        ax.set_yticklabels([_label(r) for r in rows])
        ax.set_xlim(0, 100)
        ax.set_xlabel("% of the cell's questions (hatched: a bound, not a method)")
        keys = [Patch(color=COLOURS[name], label=name) for name in OUTCOMES]  # plain: a hatched first bar aside
        ax.legend(handles=keys, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(OUTCOMES), frameon=False)
        fig.suptitle(title or "Outcome of every answer: right, guessed, missed (reader's loss), lost (compressor's)")
        fig.subplots_adjust(left=0.28, right=0.97, top=1 - 0.9 / fig.get_figheight(), bottom=0.55 / fig.get_figheight())
    return fig


def plot_outcomes(rows: Sequence[Mapping[str, Any]], path: str | Path, title: str = "") -> Path:
    """Write `outcomes_figure` as a PNG."""
    return _save(outcomes_figure(rows, title), Path(path))
