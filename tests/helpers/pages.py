"""report.html in Debian's headless Chromium, driven by Playwright: the runs the page tests open, the browser, and
a page opened with its console errors and outside requests collected. A missing browser fails the tests that use
it: `make test` installs it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from gacc_hf.data.synthetic import synthetic_rows
from gacc_hf.results.folder import write_results
from tests.helpers.paths import ROOT
from tests.helpers.runs import rules_run

CHROMIUM = Path("/usr/bin/chromium")
PLANTED = "<script>document.body.dataset.pwned = '1'</script><img src=x onerror=\"document.title='pwned'\">"
# control characters and right-to-left text in the source of the first context, through the whole run
HOSTILE = f"{PLANTED}\nbell\x07 tab\t escape\x1b[31m\nשלום עולם مرحبا بالعالم\n"
LONG_LINE = "x" * 100_000  # a 100 KB line, added to that source's rows after the run (no tokenizer on it)
# an answer given as markup, set on the first answer row after the run
PLANTED_ANSWER = "<script>document.body.dataset.answered = '1'</script><b>bold</b>"
CONDITIONS = ("own", "none", "full", "oracle", "closed")


def _run(
    folder: Path,
    rows: list[dict],
    edit: Callable[[dict], None] | None = None,
    answer: str = "",
    conditions: tuple[str, ...] = CONDITIONS,
) -> Path:
    result = rules_run(rows, compressor=["truncate", "goal-lines"], ratios=[0.2, 0.5], conditions=conditions)
    for memory in result.memories if edit else ():
        edit(memory)
    if answer:
        result.answers[0]["answer"] = answer
    write_results(result, folder)
    return folder


def english_run(folder: Path) -> Path:
    """An English rules run with hostile text in its first source, a 100 KB line in two of its memories and the
    source, and markup as its first answer."""
    rows = synthetic_rows(seed=0, contexts=4)
    first = rows[0]["context_id"]
    for row in rows:
        if row["context_id"] == first:
            row["context"] = HOSTILE + row["context"]

    def long_line(memory: dict) -> None:
        if memory["context_id"] == first and memory["condition"] in ("full", "own"):
            memory["memory"] += "\n" + LONG_LINE

    return _run(folder, rows, long_line, PLANTED_ANSWER)


def chinese_run(folder: Path) -> Path:
    """A rules run on the Chinese fixture."""
    lines = (ROOT / "tests" / "fixtures" / "zh_fixture.jsonl").read_text(encoding="utf-8").splitlines()
    return _run(folder, [json.loads(line) for line in lines])


def sourceless_run(folder: Path) -> Path:
    """An English rules run without the `full` condition: the page holds no source, each memory as text."""
    return _run(folder, synthetic_rows(seed=0, contexts=4), conditions=("own", "none"))


@contextmanager
def chromium() -> Iterator[Browser]:
    """Debian's headless Chromium; the test fails where it is missing."""
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: `make browser` (apt-get install chromium) installs it")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM))
        yield browser
        browser.close()


def open_page(browser: Browser, url: str | Path, viewport: tuple[int, int] = (1400, 1000)) -> tuple[Page, list[str]]:
    """The page at `url` (a folder: its report.html) once drawn; the list its console errors, warnings, uncaught
    errors and requests outside the file go to."""
    page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    local = ("file:", "data:")
    page.on("request", lambda r: None if r.url.startswith(local) else errors.append(f"request {r.url}"))
    page.goto((url / "report.html").as_uri() if isinstance(url, Path) else url)
    page.wait_for_selector("body[data-ready='1']")
    return page, errors
