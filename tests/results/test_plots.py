"""Plots: deterministic PNG bytes, one panel per condition/gap, labelled axes, a legend clear of the data."""

from __future__ import annotations

import struct

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection

from gacc_hf.results.plots import DPI, gaps_figure, plot_gaps, plot_scores, scores_figure
from gacc_hf.scoring.compare import condition_gaps
from tests.helpers.results import real_run

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    root = tmp_path_factory.mktemp("plots")
    return real_run(root / "run", root / "cache", conditions=("own", "none", "cross", "full", "oracle"))


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_MAGIC
    return struct.unpack(">II", data[16:24])  # IHDR width, height


def test_png_bytes_are_identical_across_two_builds(result, tmp_path):
    a = plot_scores(result.scores, tmp_path / "a.png").read_bytes()
    b = plot_scores(result.scores, tmp_path / "b.png").read_bytes()
    assert a == b
    assert b"matplotlib" not in a.lower()  # no "Software: matplotlib x.y" text chunk
    gaps = condition_gaps(result.answers, n_boot=200)
    assert plot_gaps(gaps, tmp_path / "c.png").read_bytes() == plot_gaps(gaps, tmp_path / "d.png").read_bytes()


def test_the_figure_size_follows_the_panel_count(result, tmp_path):
    width3, _ = _png_size(plot_scores(result.scores, tmp_path / "three.png").read_bytes())
    own_only = [s for s in result.scores if s["condition"] in ("own", "full", "oracle")]
    width1, _ = _png_size(plot_scores(own_only, tmp_path / "one.png").read_bytes())
    assert width3 == pytest.approx(3 * 4.2 * DPI, abs=2)  # three condition panels, 4.2 inches each
    assert width1 == pytest.approx(8.4 * DPI, abs=2)  # a single panel keeps a readable minimum width


def test_a_single_panel_legend_with_the_floor_stays_inside_the_figure(tmp_path):
    from gacc_hf.results.plots import scores_figure

    result = real_run(tmp_path / "run", tmp_path / "cache", conditions=("own", "full", "closed"))
    fig = scores_figure(result.scores)
    FigureCanvasAgg(fig).draw()
    box, whole = fig.legends[0].get_window_extent(), fig.bbox
    assert whole.x0 <= box.x0 and box.x1 <= whole.x1, "the legend runs off the figure"
    assert [t.get_text() for t in fig.legends[0].get_texts()][-1] == "closed book (floor: empty memory)"


def _check_readable(fig, n_cols, n_labels, n_rows=2):
    FigureCanvasAgg(fig).draw()
    renderer = fig.canvas.get_renderer()
    axes = fig.axes
    assert len(axes) == n_rows * n_cols
    assert all(ax.get_title() for ax in axes[:n_cols])
    assert all("ratio" in ax.get_xlabel() for ax in axes[-n_cols:])
    assert "%" in axes[0].get_ylabel() or "percentage points" in axes[0].get_ylabel()
    (legend,) = fig.legends
    assert len(legend.get_texts()) == n_labels
    box = legend.get_window_extent(renderer)
    for ax in axes:
        assert not box.overlaps(ax.get_window_extent(renderer)), "the legend covers a panel"


def test_scores_figure_is_labelled_and_its_legend_covers_no_panel(result):
    fig = scores_figure(result.scores)
    _check_readable(fig, 3, 4, n_rows=3)  # two compressors and two ceilings; Micro, Macro, evidence recall
    assert fig.axes[0].get_title().startswith("own")
    assert "Evidence" in fig.axes[6].get_ylabel()
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["truncate", "goal-lines", "full context (upper bound, r = 1)", "oracle (upper bound)"]


def test_ceilings_are_dashed_reference_lines_in_every_panel(result):
    fig = scores_figure(result.scores)
    oracle = {s["ratio"]: 100 * s["micro"] for s in result.scores if s["compressor"] == "oracle"}
    for ax in fig.axes[:3]:  # the Micro row: one panel per condition
        (line,) = [x for x in ax.get_lines() if x.get_label() == "oracle (upper bound)"]
        assert line.get_linestyle() == ":" and dict(zip(*line.get_data(), strict=True)) == oracle
        (full,) = [x for x in ax.get_lines() if x.get_label().startswith("full context")]
        assert full.get_linestyle() == "--" and list(full.get_ydata()) == [100.0, 100.0]


def test_gaps_figure_is_labelled_and_its_legend_covers_no_panel(result):
    fig = gaps_figure(condition_gaps(result.answers, n_boot=200))
    _check_readable(fig, 2, 2)
    assert [ax.get_title()[:10] for ax in fig.axes[:2]] == ["own − none", "own − cros"]


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    root = tmp_path_factory.mktemp("single")
    names = ("truncate", "goal-lines", "bm25")
    return real_run(root / "run", root / "cache", compressor=names, ratios=(0.25,), conditions=("own", "none", "full"))


def test_a_single_ratio_draws_error_bars(single, tmp_path):
    fig = scores_figure(single.scores)
    assert all(ax.containers for ax in fig.axes)  # errorbar containers instead of bands
    assert not any(isinstance(c, PolyCollection) for ax in fig.axes for c in ax.collections)  # no band
    plot_scores(single.scores, tmp_path / "single.png")


def test_a_single_ratio_names_the_compressors_on_the_axis(single):
    fig = scores_figure(single.scores)
    assert fig.get_suptitle().startswith("GACC-Bench scores by compressor")
    names = ["truncate", "goal-lines", "bm25"]
    FigureCanvasAgg(fig).draw()
    renderer = fig.canvas.get_renderer()
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["full context (upper bound, r = 1)"]  # names are on the axis
    for ax in fig.axes[-2:]:  # the bottom row: own, none
        assert [t.get_text() for t in ax.get_xticklabels()] == names
        assert ax.get_xlabel() == "compressor, at retention ratio r = L / N = 0.25"
        for label in ax.get_xticklabels():  # slanted names stay inside the figure and clear of the legend
            box = label.get_window_extent(renderer)
            assert box.y0 >= 0 and not box.overlaps(legend.get_window_extent(renderer))
    micro = {s["compressor"]: 100 * s["micro"] for s in single.scores if s["condition"] == "own"}
    dots = [line for line in fig.axes[0].get_lines() if line.get_marker() not in ("_", "None")]  # not caps, ceiling
    assert [(list(d.get_xdata()), list(d.get_ydata())) for d in dots] == [
        ([i], [micro[n]]) for i, n in enumerate(names)
    ]


def test_a_single_ratio_gaps_figure_has_no_legend_to_give(single):
    fig = gaps_figure(condition_gaps(single.answers, n_boot=200))
    assert not fig.legends  # no ceiling, and every compressor is named on the axis
    assert fig.get_suptitle().startswith("Goal gaps by compressor")
    assert [t.get_text() for t in fig.axes[-1].get_xticklabels()] == ["truncate", "goal-lines", "bm25"]


def test_nothing_to_plot_is_a_clear_error():
    with pytest.raises(ValueError, match="only bound scores"):
        scores_figure([{"condition": "full", "compressor": "full-context", "ratio": 1.0}])
    with pytest.raises(ValueError, match="no own−none or own−cross gaps"):
        gaps_figure([])


def test_a_method_named_with_a_leading_underscore_keeps_its_legend_entry(result):
    scores = [{**s, "compressor": "_factory.<locals>.f"} if s["compressor"] == "truncate" else s for s in result.scores]
    (legend,) = scores_figure(scores).legends
    assert " _factory.<locals>.f" in [t.get_text() for t in legend.get_texts()]


def test_a_run_of_ceilings_only_draws_no_plot_and_one_with_a_compressor_draws_one_per_language(tmp_path):
    """What docs/chinese.md says of the plots of a bilingual run."""
    from gacc_hf.results.by_language import plot_languages

    figures = {"micro": 0.5, "macro": 0.0, "evidence_recall": 0.9}
    ceiling = {"compressor": "oracle", "condition": "oracle", "ratio": 0.2, "ceiling": True, **figures}
    method = {"compressor": "truncate", "condition": "own", "ratio": 0.2, "ceiling": False, **figures}
    rows = [{**row, "language": lang} for lang in ("en", "zh") for row in (ceiling, method)]
    assert plot_languages([r for r in rows if r["ceiling"]], tmp_path / "ceilings") == []
    assert not (tmp_path / "ceilings").exists()
    (tmp_path / "both").mkdir()
    drawn = plot_languages(rows, tmp_path / "both")
    assert [p.name for p in drawn] == ["scores_en.png", "scores_zh.png"]
