"""PNG plots of a run: scores (and evidence recall) against the retention ratio, and the goal gaps.

Ceilings (full context, oracle) are drawn as dashed reference lines labelled as upper bounds, and the
closed-book floor as one labelled as the floor, never as a compressor's line. A run at a single ratio has no
ratio axis to speak of, so its compressors stand side by side on a named axis instead (a dot with its CI each),
which stays readable for any number of them.

Figures are drawn on matplotlib's Agg canvas without pyplot (no global state, no display needed) and
saved with fixed dpi and no "Software" metadata, so the same results produce byte-identical PNGs.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gacc_hf.protocol import is_ceiling
from gacc_hf.results.atomic import write_atomic

if TYPE_CHECKING:  # matplotlib is imported where a plot is drawn: checking or showing a run draws none
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

SCORES_PNG = "scores.png"
GAPS_PNG = "gaps.png"
DPI = 110
FULL_CONTEXT = "full-context"
CONDITION_TITLES = {
    "own": "own: the group's goal shown",
    "none": "none: no goal shown",
    "cross": "cross: another goal shown",
}
METRIC_LABELS = {
    "micro": "Micro (% of questions correct)",
    "macro": "Macro (% of goals all correct)",
    "evidence_micro": "Evidence (% of questions with\na gold reference in memory)",
}
GAP_TITLES = {
    "own-none": "own − none: gain from seeing the goal",
    "own-cross": "own − cross: gain from the right goal",
}
METRICS = ("micro", "macro")
RATIO_LABEL = "retention ratio r = L / N (budget / source tokens)"
NAME_LABEL = "compressor, at retention ratio r = L / N = {ratio:g}"
NAME_ROTATION = 30
MIN_WIDTH = 8.4  # inches: a one-panel figure's legend (two bounds and two compressors) fits on one line
_RC = {"font.size": 9, "axes.titlesize": 10, "figure.titlesize": 12, "legend.fontsize": 9}


_MARKERS = "osD^vP"


def _styles(names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """A colour and a marker per compressor, so lines that coincide stay distinguishable."""
    import matplotlib

    cmap = matplotlib.colormaps["tab10"]
    return {n: {"color": cmap(i % 10), "marker": _MARKERS[i % len(_MARKERS)]} for i, n in enumerate(names)}


@contextlib.contextmanager
def drawing() -> Iterator[type[Figure]]:
    """matplotlib's `Figure` within the plots' settings (`_RC`), imported here, when a plot is drawn: checking a
    run or showing its page draws none, and a board's worker processes start without matplotlib."""
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(_RC):
        yield Figure


def _save(fig: Figure, path: Path) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    buf = io.BytesIO()
    FigureCanvasAgg(fig)
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    write_atomic(path, buf.getvalue())
    return path


def _series(
    ax: Axes,
    xs: list[float],
    ys: list[float],
    lows: list[Any],
    highs: list[Any],
    style: dict[str, Any],
    label: str | None,
) -> None:
    """A line with markers and its CI: a band when there are several ratios, error bars for a single one.

    `label=None` leaves the series out of the legend (its name is on the axis already).
    """
    pct = [100 * y for y in ys]
    color = style["color"]
    # matplotlib leaves labels starting with "_" out of legends; a method named "_x.<locals>.f" must stay in
    if label is not None and label.startswith("_"):
        label = f" {label}"
    ax.plot(xs, pct, ms=4.5, lw=1.6, label=label, **style)
    if any(v is None for v in lows):
        return
    lo, hi = [100 * v for v in lows], [100 * v for v in highs]
    if len(xs) > 1:
        ax.fill_between(xs, lo, hi, color=color, alpha=0.18, lw=0)
    else:
        ax.errorbar(
            xs,
            pct,
            yerr=[[p - v for p, v in zip(pct, lo, strict=True)], [v - p for p, v in zip(pct, hi, strict=True)]],
            fmt="none",
            ecolor=color,
            capsize=3,
        )


def _ratio_axis(ax: Axes, ratios: list[float]) -> None:
    ax.set_xticks(ratios)
    ax.set_xticklabels([f"{r:g}" for r in ratios])
    pad = 0.05 * (max(ratios) - min(ratios) or 1.0)
    ax.set_xlim(min(ratios) - pad, max(ratios) + pad)
    ax.grid(True, color="0.9", lw=0.6)


def _name_axis(ax: Axes, names: Sequence[str]) -> None:
    """Compressors side by side at 0, 1, ...: one ratio leaves nothing to draw along a ratio axis."""
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=NAME_ROTATION, ha="right", rotation_mode="anchor")
    ax.set_xlim(-0.6, len(names) - 0.4)
    ax.grid(True, axis="y", color="0.9", lw=0.6)


def _legend(fig: Figure, axes: Sequence[Axes]) -> None:
    """One legend for the figure, below the panels and their tick labels, so it never covers data; none when
    nothing needs one (compressors named on the axis and no ceiling)."""
    handles: dict[str, Any] = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(lab, h)
    if not handles:
        return
    fig.legend(
        list(handles.values()),
        list(handles),
        loc="lower center",
        bbox_to_anchor=(0.5, 0.01),
        ncol=min(len(handles), 5),
        frameon=False,
    )


def _layout(
    figure: type[Figure], n_rows: int, n_cols: int, n_legend: int, names: Sequence[str] = ()
) -> tuple[Figure, list[list[Axes]], float]:
    """A grid (one row per metric) sharing axes, and the bottom margin that leaves room for the legend
    (`figure`: the class `drawing` gives).

    `names`: the compressors of a named x axis, which need width per name and room below for their slanted
    labels.
    """
    legend_rows = -(-n_legend // 5)
    # a slanted label of n characters drops about 0.07 * n * sin(rotation) inches at font size 9
    labels = 0.07 * max(map(len, names)) * math.sin(math.radians(NAME_ROTATION)) if names else 0.0
    height = 2.7 * n_rows + 0.3 * legend_rows + labels
    panel = max(4.2, 0.55 * len(names) + 1.0)
    fig = figure(figsize=(max(panel * n_cols, MIN_WIDTH), height))
    bottom = (0.62 + 0.3 * legend_rows + labels) / height
    axes = fig.subplots(n_rows, n_cols, squeeze=False, sharex=True, sharey="row")
    return fig, [list(row) for row in axes], bottom


def _grid(
    rows: Sequence[Mapping[str, Any]],
    column: str,
    titles: Mapping[str, str],
    keys: Callable[[str], tuple[str, str, str]],
    ylabel: Callable[[str], str],
    title: str,
    decorate: Callable[[Axes, str], None],
    extra_legend: int = 0,
    metrics: Sequence[str] = METRICS,
) -> Figure:
    """One row per metric (Micro, Macro, ...) against the ratio, one panel per value of `column`; at a single
    ratio, against the compressors instead.

    `keys(metric)` names the value, CI-low and CI-high fields drawn; `decorate(ax, metric)` adds reference lines
    (below the data, after it in the legend).
    """
    columns = list(dict.fromkeys(r[column] for r in rows))
    names = list(dict.fromkeys(r["compressor"] for r in rows))
    ratios = sorted({float(r["ratio"]) for r in rows})
    by_name = _single_ratio(rows)
    styles = _styles(names)
    with drawing() as figure:
        legend = extra_legend if by_name else len(names) + extra_legend
        fig, axes, bottom = _layout(figure, len(metrics), len(columns), legend, names if by_name else ())
        for i, metric in enumerate(metrics):
            value, low, high = keys(metric)
            for j, col in enumerate(columns):
                ax = axes[i][j]
                for k, name in enumerate(names):
                    cell = sorted((r for r in rows if r["compressor"] == name and r[column] == col), key=_ratio)
                    _series(
                        ax,
                        [k] * len(cell) if by_name else [r["ratio"] for r in cell],
                        [r[value] for r in cell],
                        [r.get(low) for r in cell],
                        [r.get(high) for r in cell],
                        styles[name],
                        None if by_name else name,
                    )
                decorate(ax, metric)
                if by_name:
                    _name_axis(ax, names)
                else:
                    _ratio_axis(ax, ratios)
                if i == 0:
                    ax.set_title(titles.get(col, col))
                if i == len(metrics) - 1:
                    ax.set_xlabel(NAME_LABEL.format(ratio=ratios[0]) if by_name else RATIO_LABEL)
                if j == 0:
                    ax.set_ylabel(ylabel(metric))
        fig.suptitle(title)
        _legend(fig, [ax for row in axes for ax in row])
        fig.subplots_adjust(left=0.09, right=0.98, top=0.9, bottom=bottom, hspace=0.18, wspace=0.06)
    return fig


def _top(highest: float) -> float:
    """Upper y limit (in %) for scores up to `highest`: the full 0–100 scale once anything passes 50%, else a
    tighter round one, so that low scores stay readable.

    >>> _top(0.9), _top(0.052), _top(0.0)
    (103, 10, 10)
    """
    if highest > 0.5:
        return 103
    return max(10, math.ceil((100 * highest + 2) / 10) * 10)


def _single_ratio(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the rows hold one ratio only: then the x axis names the compressors instead."""
    return len({_ratio(r) for r in rows}) == 1


def _along(rows: Sequence[Mapping[str, Any]]) -> str:
    """What the x axis runs along, for the default title."""
    return "compressor" if _single_ratio(rows) else "retention ratio"


def _ratio(row: Mapping[str, Any]) -> float:
    return float(row["ratio"])


_CEILING_STYLES = ({"color": "0.35", "ls": "--"}, {"color": "0.15", "ls": ":"}, {"color": "0.55", "ls": "-."})


def _ceiling_label(name: str, cells: Sequence[Mapping[str, Any]]) -> str:
    if cells[0].get("condition") == "closed":
        return "closed book (floor: empty memory)"
    shown = "full context" if name == FULL_CONTEXT else name
    return f"{shown} (upper bound, r = {cells[0]['ratio']:g})" if len(cells) == 1 else f"{shown} (upper bound)"


def scores_figure(scores: Sequence[Mapping[str, Any]], title: str = "") -> Figure:
    """Micro, Macro and (when recorded) evidence recall against the ratio: one panel per condition, one line
    per compressor.

    Ceilings are dashed reference lines in every panel: one at a single ratio (full context) is horizontal,
    one per ratio (oracle) follows the ratios.
    """
    rows = [s for s in scores if not is_ceiling(s)]
    ceilings: dict[str, list[Mapping[str, Any]]] = {}
    for s in scores:  # in the run's order, each one's rows by ratio
        if is_ceiling(s):
            ceilings.setdefault(str(s["compressor"]), []).append(s)
    ceilings = {name: sorted(cells, key=_ratio) for name, cells in ceilings.items()}
    if not rows:
        raise ValueError("no compressed conditions to plot (only bound scores: full context, oracle, closed book)")
    evidence = any(s.get("evidence_micro") is not None for s in rows)
    metrics = (*METRICS, "evidence_micro") if evidence else METRICS

    def decorate(ax: Axes, metric: str) -> None:
        bounds = [c for cells in ceilings.values() for c in cells if c.get(metric) is not None]
        highest = max(
            [s[metric] for s in rows if s.get(metric) is not None]
            + [s[f"{metric}_ci_high"] for s in rows if s.get(f"{metric}_ci_high") is not None]
            + [c[metric] for c in bounds]
        )
        ax.set_ylim(-0.03 * _top(highest), _top(highest))
        for style, (name, cells) in zip(_CEILING_STYLES * len(ceilings), ceilings.items(), strict=False):
            cells = [c for c in cells if c.get(metric) is not None]
            if not cells:
                continue
            label = _ceiling_label(name, cells)
            if len(cells) == 1:
                ax.axhline(100 * cells[0][metric], lw=1.2, zorder=1, label=label, **style)
            else:
                ax.plot(
                    [c["ratio"] for c in cells],
                    [100 * c[metric] for c in cells],
                    lw=1.2,
                    zorder=1,
                    label=label,
                    **style,
                )

    return _grid(
        rows,
        "condition",
        CONDITION_TITLES,
        lambda m: (m, f"{m}_ci_low", f"{m}_ci_high"),
        METRIC_LABELS.__getitem__,
        title or f"GACC-Bench scores by {_along(rows)}, with 95% goal-bootstrap CIs",
        decorate,
        extra_legend=len(ceilings),
        metrics=metrics,
    )


def gaps_figure(gaps: Sequence[Mapping[str, Any]], title: str = "") -> Figure:
    """own − none and own − cross differences (percentage points, paired CI bands) per compressor."""
    rows = sorted((g for g in gaps if g["gap"] in GAP_TITLES), key=lambda g: list(GAP_TITLES).index(g["gap"]))
    if not rows:
        raise ValueError("no own−none or own−cross gaps to plot (the run needs 'own' and 'none' or 'cross')")
    return _grid(
        rows,
        "gap",
        GAP_TITLES,
        lambda m: (f"{m}_diff", f"{m}_diff_ci_low", f"{m}_diff_ci_high"),
        lambda m: f"Δ {m.capitalize()} (percentage points)",
        title or f"Goal gaps by {_along(rows)}, with 95% paired goal-bootstrap CIs",
        functools.partial(_zero_line, rows),
    )


def _zero_line(rows: Sequence[Mapping[str, Any]], ax: Axes, metric: str) -> None:
    """A zero line, and a y range over every panel's CIs, at least ±5 points so that all-zero gaps stay readable."""
    ax.axhline(0, color="0.3", lw=0.8, zorder=1)
    keys = (f"{metric}_diff", f"{metric}_diff_ci_low", f"{metric}_diff_ci_high")
    values = [100 * r[k] for r in rows for k in keys if r[k] is not None]
    pad = 0.05 * (max(values) - min(values))
    ax.set_ylim(min(min(values) - pad, -5), max(max(values) + pad, 5))


def plot_scores(scores: Sequence[Mapping[str, Any]], path: str | Path, title: str = "") -> Path:
    """Write `scores_figure` as a PNG."""
    return _save(scores_figure(scores, title), Path(path))


def plot_gaps(gaps: Sequence[Mapping[str, Any]], path: str | Path, title: str = "") -> Path:
    """Write `gaps_figure` as a PNG."""
    return _save(gaps_figure(gaps, title), Path(path))
