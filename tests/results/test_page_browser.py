"""report.html in a real browser (Debian's headless Chromium, driven by Playwright): an English rules run with
hostile text in a source, and a Chinese run. A missing browser fails these tests: `make test` installs it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from playwright.sync_api import Page

from gacc_hf.scoring.outcomes import outcome
from tests.helpers.pages import LONG_LINE, PLANTED, chinese_run, chromium, english_run, open_page


@pytest.fixture(scope="module")
def english(tmp_path_factory) -> Path:
    return english_run(tmp_path_factory.mktemp("page") / "en")


@pytest.fixture(scope="module")
def chinese(tmp_path_factory) -> Path:
    return chinese_run(tmp_path_factory.mktemp("page") / "zh")


@pytest.fixture(scope="module")
def browser():
    with chromium() as launched:
        yield launched


def _open(browser, folder: Path) -> tuple[Page, list[str]]:
    return open_page(browser, folder)


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
