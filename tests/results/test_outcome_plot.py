"""outcomes.png: one stacked bar per cell whose segments are the outcome shares, bounds hatched, stable bytes."""

from __future__ import annotations

import pytest

from gacc_hf.results.outcome_plot import outcomes_figure, plot_outcomes


def _row(compressor: str, condition: str, shares: tuple[float, float, float, float], ceiling: bool = False) -> dict:
    return {
        "compressor": compressor,
        "condition": condition,
        "ratio": 0.2,
        "ceiling": ceiling,
        **dict(zip(("right", "guessed", "missed", "lost"), shares, strict=True)),
    }


ROWS = [
    _row("full-context", "full", (0.5, 0.0, 0.25, 0.25), ceiling=True),
    _row("embed", "own", (0.125, 0.125, 0.25, 0.5)),
]


def test_each_bar_is_split_at_the_hand_added_shares():
    ax = outcomes_figure(ROWS).axes[0]
    bars = [p for p in ax.patches if p.get_width() > 0 or p.get_x() > 0]
    embed = sorted((p.get_x(), p.get_width()) for p in bars if p.get_y() < 0.5)  # the bottom bar: the last row
    assert embed == [(0.0, 12.5), (12.5, 12.5), (25.0, 25.0), (50.0, 50.0)]
    full = [p for p in ax.patches if p.get_y() > 0.5]
    assert {p.get_hatch() for p in full} == {"//"} and {p.get_hatch() for p in ax.patches if p.get_y() < 0.5} == {""}
    assert [t.get_text() for t in ax.get_yticklabels()] == ["full-context\nfull r=0.2", "embed\nown r=0.2"]  # top first


def test_the_legend_names_the_four_outcomes_unhatched():
    legend = outcomes_figure(ROWS).axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["right", "guessed", "missed", "lost"]
    assert {h.get_hatch() for h in legend.legend_handles} == {None}


def test_png_bytes_are_identical_across_two_builds(tmp_path):
    a = plot_outcomes(ROWS, tmp_path / "a.png").read_bytes()
    assert plot_outcomes(ROWS, tmp_path / "b.png").read_bytes() == a


def test_nothing_to_plot_is_a_clear_error():
    with pytest.raises(ValueError, match="no outcome shares to plot"):
        outcomes_figure([])
