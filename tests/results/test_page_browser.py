"""report.html in a real browser (Debian's headless Chromium, driven by Playwright): an English rules run with
hostile text in a source, and a Chinese run. A missing browser fails these tests: `make test` installs it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from playwright.sync_api import Page, sync_playwright

from gacc_hf.data.synthetic import synthetic_rows
from gacc_hf.results.folder import write_results
from gacc_hf.scoring.outcomes import outcome
from tests.helpers.paths import ROOT
from tests.helpers.runs import rules_run

CHROMIUM = Path("/usr/bin/chromium")
PLANTED = "<script>document.body.dataset.pwned = '1'</script><img src=x onerror=\"document.title='pwned'\">"
# control characters and right-to-left text in the source of the first context, through the whole run
HOSTILE = f"{PLANTED}\nbell\x07 tab\t escape\x1b[31m\nשלום עולם مرحبا بالعالم\n"
LONG_LINE = "x" * 100_000  # a 100 KB line, added to that source's rows after the run (no tokenizer on it)
CONDITIONS = ("own", "none", "full", "oracle", "closed")


def _run(tmp_path: Path, rows: list[dict], name: str, edit=None) -> Path:
    result = rules_run(rows, compressor=["truncate", "goal-lines"], ratios=[0.2, 0.5], conditions=CONDITIONS)
    for memory in result.memories if edit else ():
        edit(memory)
    write_results(result, tmp_path / name)
    return tmp_path / name


@pytest.fixture(scope="module")
def english(tmp_path_factory) -> Path:
    rows = synthetic_rows(seed=0, contexts=4)
    first = rows[0]["context_id"]
    for row in rows:
        if row["context_id"] == first:
            row["context"] = HOSTILE + row["context"]

    def long_line(memory: dict) -> None:
        if memory["context_id"] == first and memory["condition"] in ("full", "own"):
            memory["memory"] += "\n" + LONG_LINE

    return _run(tmp_path_factory.mktemp("page"), rows, "en", long_line)


@pytest.fixture(scope="module")
def chinese(tmp_path_factory) -> Path:
    lines = (ROOT / "tests" / "fixtures" / "zh_fixture.jsonl").read_text(encoding="utf-8").splitlines()
    return _run(tmp_path_factory.mktemp("page"), [json.loads(line) for line in lines], "zh")


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: `make browser` (apt-get install chromium) installs it")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM))
        yield chromium
        chromium.close()


def _open(browser, folder: Path) -> tuple[Page, list[str]]:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    local = ("file:", "data:")
    page.on("request", lambda r: None if r.url.startswith(local) else errors.append(f"request {r.url}"))
    page.goto((folder / "report.html").as_uri())
    page.wait_for_selector("body[data-ready='1']")
    return page, errors


def _expected(folder: Path) -> tuple[list[dict], Counter]:
    rows = pq.read_table(folder / "answers.parquet").to_pylist()
    return rows, Counter(outcome(r["correct"], r["evidence"]) for r in rows)


def _shown_counts(page: Page) -> dict[str, int]:
    spans = page.locator("#outcome-counts span")
    return {spans.nth(i).get_attribute("data-outcome"): int(spans.nth(i).get_attribute("data-count")) for i in range(4)}


@pytest.mark.parametrize("which", ["english", "chinese"])
def test_the_page_shows_every_answer_row_and_outcome(request, browser, which, tmp_path):
    folder = request.getfixturevalue(which)
    page, errors = _open(browser, folder)
    rows, outcomes = _expected(folder)
    assert int(page.inner_text("#total")) == int(page.inner_text("#visible")) == len(rows)
    assert _shown_counts(page) == {name: outcomes[name] for name in ("right", "guessed", "missed", "lost")}
    page.screenshot(path=str(tmp_path / f"{which}.png"), full_page=False)
    assert (tmp_path / f"{which}.png").stat().st_size > 10_000
    assert errors == []


def test_filter_clicks_change_the_visible_count(browser, english):
    page, errors = _open(browser, english)
    rows, outcomes = _expected(english)
    page.select_option("#f-outcome", "lost")
    assert int(page.inner_text("#visible")) == outcomes["lost"] > 0
    page.select_option("#f-compressor", "goal-lines")
    lost = sum(r["compressor"] == "goal-lines" and outcome(r["correct"], r["evidence"]) == "lost" for r in rows)
    assert int(page.inner_text("#visible")) == lost
    page.select_option("#f-outcome", "")
    page.select_option("#f-ratio", "0.5")
    assert int(page.inner_text("#visible")) == sum(r["compressor"] == "goal-lines" and r["ratio"] == 0.5 for r in rows)
    assert page.locator("#goal-view table.answers tr[data-outcome]").count() > 0
    assert errors == []


def test_a_script_planted_in_a_source_stays_text(browser, english):
    page, errors = _open(browser, english)
    source = page.locator("#source")
    assert PLANTED in source.text_content()
    assert "שלום עולם" in source.text_content() and LONG_LINE in source.text_content()
    assert page.evaluate("document.body.dataset.pwned") is None and page.title() != "pwned"
    assert page.locator("#source script, #source img").count() == 0
    assert errors == []


def test_two_memories_side_by_side_mark_what_only_one_kept(browser, english):
    page, _ = _open(browser, english)
    page.select_option("#side-a", label="truncate · own · 0.2")
    page.select_option("#side-b", label="goal-lines · own · 0.2")
    assert page.locator("#source .k-a").count() > 0 and page.locator("#source .k-b").count() > 0
    labels = page.locator("#side-a option").all_inner_texts()
    assert "full-context · full · 1 (ceiling)" in labels and "closed-book · closed · 0 (floor)" in labels
    assert page.locator("#source .ref").count() > 0
