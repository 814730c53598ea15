"""report.html as bytes: self-contained, escaped, the integrity counters first, the same bytes from the same folder."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import gacc_hf.results.page as page_module
from gacc_hf.results.folder import read_folder
from gacc_hf.results.page import PAGE_FILE, PAGE_SCRIPTS, page_json, render_page, script_json, summary_tables
from gacc_hf.results.page_data import page_data
from gacc_hf.strict_json import NonFiniteError

DATA_BLOCK = re.compile(r'<script type="application/json" id="page-data">(.*?)</script>', re.S)
# what would parse a text as HTML or run it as script, in the page's own scripts
SINKS = re.compile(r"\b(innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval|Function)\s*[=(]|\.html\(")


def test_script_json_cannot_close_its_block_and_reads_back_the_same():
    texts = {"t": "</script><script>alert(1)</script>", "z": "数据 <!-- & -->", "c": "\x07\x1b\u2028"}
    block = script_json(texts)
    assert "<" not in block and ">" not in block and "&" not in block
    assert json.loads(block) == texts


def test_the_page_embeds_the_folder_data_and_nothing_from_outside(folder):
    run = read_folder(folder)
    html = (folder / PAGE_FILE).read_text(encoding="utf-8")
    (block,) = DATA_BLOCK.findall(html)
    assert json.loads(block) == json.loads(json.dumps(page_data(run)))
    assert sum(len(g["answers"]) for g in json.loads(block)["goals"]) == len(run.answers)
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html) and "<link" not in html
    assert html.count('src="data:image/png;base64,') == 3  # scores.png, gaps.png and outcomes.png inlined


def test_integrity_comes_first_and_a_dirty_run_is_flagged(folder):
    run = read_folder(folder)
    assert [t["title"] for t in summary_tables(run)][:2] == ["Integrity", "Scores"]
    html = render_page(run)
    assert html.index("<h2>Integrity</h2>") < html.index("<h2>Scores</h2>") < html.index("Answers by goal")
    assert "kept the protocol" in html and "must not be reported" not in html
    run.payload["integrity"]["exposures"] = 1
    assert "must not be reported" in render_page(run)


def test_summary_texts_are_escaped(folder):
    run = read_folder(folder)
    run.payload["scores"][0]["compressor"] = "<b>bold</b>"
    run.payload["integrity"] = {"<i>counter</i>": 0}
    html = render_page(run)
    assert "&lt;b&gt;bold&lt;/b&gt;" in html and "<b>bold</b>" not in html and "<i>counter" not in html


def test_a_source_with_a_script_stays_in_the_data_block(folder):
    run = read_folder(folder)
    run.memories[0] = {**run.memories[0], "condition": "full", "memory": "</script><script>alert(1)</script>"}
    html = render_page(run)
    assert html.count("</script>") == 2 and "alert(1)" in DATA_BLOCK.findall(html)[0]


def test_the_same_folder_gives_the_same_bytes(folder):
    run = read_folder(folder)
    assert render_page(run) == render_page(read_folder(folder))


def test_the_floor_is_shown_apart_from_the_upper_bounds(folder):
    run = read_folder(folder)
    method = run.scores[0]
    bounds = [
        {**method, "compressor": name, "condition": condition, "ceiling": True}
        for name, condition in (("full-context", "full"), ("closed-book", "closed"))
    ]
    run.payload["scores"] = [method, *bounds]
    tables = {t["title"]: [row[0] for row in t["rows"]] for t in summary_tables(run)}
    assert tables["Upper bounds (not methods)"] == ["full-context"]
    assert tables["Lower bound: closed book (not a method)"] == ["closed-book"]
    run.payload["scores"] = [method, bounds[0]]  # no floor: no table for it
    titles = [t["title"] for t in summary_tables(run)]
    assert "Upper bounds (not methods)" in titles and not any("Lower bound" in t for t in titles)


def test_the_pages_scripts_are_inlined_once_each_and_set_text_only(folder):
    html = (folder / PAGE_FILE).read_text(encoding="utf-8")
    scripts = {
        name: (Path(page_module.__file__).with_name("templates") / name).read_text("utf-8") for name in PAGE_SCRIPTS
    }
    assert all(html.count(text.strip()) == 1 for text in scripts.values())
    assert [name for name, text in scripts.items() if SINKS.search(text)] == []
    planted = ["node.innerHTML = text;", 'el.insertAdjacentHTML("beforeend", t)', "eval(code)", "document.write(x)"]
    assert all(SINKS.search(text) for text in planted) and not SINKS.search("node.textContent = text;")


RECORDED = Path(__file__).parents[2] / "docs" / "results"


def _numbers(value, path="") -> list[tuple[str, object]]:
    """Every number in a JSON-like tree with its path (bools are not numbers here)."""
    if isinstance(value, dict):
        return [n for k, v in value.items() for n in _numbers(v, f"{path}.{k}")]
    if isinstance(value, list | tuple):
        return [n for i, v in enumerate(value) for n in _numbers(v, f"{path}[{i}]")]
    return [(path, value)] if isinstance(value, int | float) and not isinstance(value, bool) else []


@pytest.mark.parametrize("name", ["main", "bilingual", "judges"])
def test_the_page_data_is_written_as_pythons_encoder_writes_it_with_only_ratios_not_whole(name):
    data = page_data(read_folder(RECORDED / name))  # English; English and Chinese; several judges
    assert page_json(data) == script_json(data)
    floats = {path.split("[")[0] for path, n in _numbers(data) if isinstance(n, float)}
    assert floats == {".cells"}  # the only numbers page_json checks are finite; every other one is whole


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_ratio_that_is_not_finite_is_refused_by_name(bad):
    data = {"cells": [["c", "own", 0.25, False], ["c", "own", bad, False]], "goals": []}
    with pytest.raises(NonFiniteError, match=r"report.html \(its data\): cells\[1\]\[2\] is (nan|inf)"):
        page_json(data)
    assert page_json({**data, "cells": data["cells"][:1]}).startswith('{"cells":[["c","own",0.25,false]]')
