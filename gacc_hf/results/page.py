"""`report.html`: the results page, one self-contained file (inline CSS, JS, plots and data) that works from file://.

The summary (integrity counters first, then the tables and plots of `report.md`, and where the run has them its
judges' agreement, the survival of its conclusions and its judges against human labels:
`gacc_hf.results.judging_page`) is rendered here; the per-goal
browser (search, filters, sortable answer tables, the view kept in the URL fragment) is drawn by the scripts of
`PAGE_SCRIPTS` from the data of `gacc_hf.results.page_data`, embedded as a JSON block and read with `JSON.parse`,
every text set as `textContent`. The JSON is escaped so that no text can close the
block (`</script>`) and no text is ever parsed as HTML. No timestamp: the same folder gives the same bytes.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from gacc_hf import strict_json
from gacc_hf.collector import collector_paused
from gacc_hf.protocol import FLOOR, is_ceiling
from gacc_hf.results.atomic import write_atomic
from gacc_hf.results.judging_page import judging_blocks
from gacc_hf.results.layout import RunResults
from gacc_hf.results.page_data import page_data
from gacc_hf.results.views import setting_views, settings_line, several_settings
from gacc_hf.scoring.settings import setting_label
from gacc_hf.templates import render, template_text

PAGE_FILE = "report.html"
# the page's script, one file a job, inlined in this order: search, the URL fragment, labels, the goal browser
PAGE_SCRIPTS = ("page_search.js", "page_link.js", "page_labels.js", "page.js")

_METRICS = (
    ("micro", "Micro"),
    ("macro", "Macro"),
    ("evidence_micro", "Evidence Micro"),
    ("evidence_macro", "Evidence Macro"),
)


def script_json(data: Any) -> str:
    """JSON safe inside a `<script type="application/json">` block: `<`, `>` and `&` as `\\u` escapes.

    >>> script_json({"t": "</script><b>&"})
    '{"t":"\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026"}'
    """
    return _script_safe(strict_json.dumps(data, f"{PAGE_FILE} (its data)", ensure_ascii=False, separators=(",", ":")))


def page_json(data: Mapping[str, Any]) -> str:
    """The page's data (`page_data`) as `script_json` writes it, encoded by orjson: some 8 MB at the release's size,
    in a quarter of the time of Python's encoder, the same bytes. orjson writes a NaN as null where Python's
    refuses it; the only numbers of a page's data that are not whole are its cells' ratios, checked here (a test
    holds every other number whole).

    >>> page_json({"cells": [["c", "own", 0.25, False]], "t": "数据 </script>"})
    '{"cells":[["c","own",0.25,false]],"t":"数据 \\\\u003c/script\\\\u003e"}'
    """
    strict_json.check_finite({"cells": data["cells"]}, f"{PAGE_FILE} (its data)")
    return _script_safe(orjson.dumps(data).decode("utf-8"))


def _script_safe(text: str) -> str:
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _figure(row: Mapping[str, Any], metric: str) -> str:
    value = row.get(metric)
    if value is None:
        return "n/a"
    low, high = row.get(f"{metric}_ci_low"), row.get(f"{metric}_ci_high")
    return f"{value:.3f}" + ("" if low is None else f" [{low:.3f}, {high:.3f}]")


def score_table(title: str, scores: Sequence[Mapping[str, Any]], language: bool = False) -> dict[str, Any]:
    """A table of score rows (Micro, Macro and, where measured, evidence recall, with their 95% CIs)."""
    metrics = [(k, name) for k, name in _METRICS if any(s.get(k) is not None for s in scores)]
    head = [*(["language"] if language else []), "compressor", "condition", "ratio"]
    head += [f"{name} [95% CI]" for _, name in metrics] + ["questions", "goals", "errors"]
    rows = [
        [*([s["language"]] if language else []), s["compressor"], s["condition"], f"{s['ratio']:g}"]
        + [_figure(s, k) for k, _ in metrics]
        + [s.get("n_questions"), s.get("n_goals"), s.get("n_errors")]
        for s in scores
    ]
    return {"title": title, "head": head, "rows": rows}


def _gap_table(gaps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    def points(g: Mapping[str, Any], m: str) -> str:
        low, high = g.get(f"{m}_diff_ci_low"), g.get(f"{m}_diff_ci_high")
        ci = "" if low is None else f" [{100 * low:+.1f}, {100 * high:+.1f}]"
        return f"{100 * g[f'{m}_diff']:+.1f}{ci}"

    rows = [[g["compressor"], g["gap"], f"{g['ratio']:g}", points(g, "micro"), points(g, "macro")] for g in gaps]
    head = ["compressor", "gap", "ratio", "ΔMicro pp [95% CI]", "ΔMacro pp [95% CI]"]
    return {"title": "Goal gaps", "head": head, "rows": rows}


def summary_tables(run: RunResults) -> list[dict[str, Any]]:
    """The page's tables, integrity counters first; a run of several (reader, judge) settings has each
    setting's tables, titled with it."""
    p = run.payload
    tables = [{"title": "Integrity", "head": ["counter", "value"], "rows": list(p["integrity"].items())}]
    if several_settings(run.config):
        for setting, view in setting_views(run):
            label = setting_label(setting)
            tables += [{**t, "title": f"{t['title']}, {label}"} for t in _result_tables(view)]
        return tables
    return tables + _result_tables(run)


def _result_tables(run: RunResults) -> list[dict[str, Any]]:
    """The score, bound, gap and language tables of a run of one setting."""
    p = run.payload
    tables: list[dict[str, Any]] = []
    methods = [s for s in run.scores if not is_ceiling(s)]
    ceilings = [s for s in run.scores if is_ceiling(s) and s["condition"] != FLOOR]
    floor = [s for s in run.scores if is_ceiling(s) and s["condition"] == FLOOR]
    if methods:
        tables.append(score_table("Scores", methods))
    if ceilings:
        tables.append(score_table("Upper bounds (not methods)", ceilings))
    if floor:
        tables.append(score_table("Lower bound: closed book (not a method)", floor))
    if p.get("gaps"):
        tables.append(_gap_table(p["gaps"]))
    if len({s["language"] for s in p.get("scores_by_language") or []}) > 1:
        tables.append(score_table("By language", p["scores_by_language"], language=True))
    return tables


@collector_paused()  # the page's data are some 300,000 new lists: see gacc_hf.collector
def render_page(run: RunResults, plots: Sequence[Path] = ()) -> str:
    """The page's HTML; `plots` are PNG files inlined as data URIs."""
    cfg = run.config
    names = ", ".join(c["name"] for c in cfg["compressors"])
    shown = page_data(run)
    data, judges = page_json(shown), len({judge for _, judge in shown.get("roles", [])}) > 1
    del shown  # some 300,000 lists, freed before the collector runs again: it has none of them to walk
    return render(
        __file__,
        "page.html.j2",
        heading=f"GACC-Bench results: {names}",
        setup=f"{settings_line(cfg)}; "
        f"ratios {', '.join(f'{r:g}' for r in cfg['ratios'])}; conditions {', '.join(cfg['conditions'])}",
        settings=several_settings(cfg),
        judges=judges,
        clean=not any(run.payload["integrity"].values()),
        tables=summary_tables(run),
        judging=judging_blocks(run.payload),
        plots=[(p.stem, "data:image/png;base64," + base64.b64encode(p.read_bytes()).decode("ascii")) for p in plots],
        data=data,
        script="\n".join(template_text(__file__, name) for name in PAGE_SCRIPTS),
    )


def write_page(run: RunResults, out_dir: str | Path, plots: Sequence[Path] = ()) -> Path:
    """Write `report.html` into `out_dir` (atomically) and return its path."""
    path = Path(out_dir) / PAGE_FILE
    write_atomic(path, render_page(run, plots).encode("utf-8"))
    return path
