"""The board in a real browser (Debian's headless Chromium, driven by Playwright): it loads from file:// with no
console error and no request, shows one row per cell of the runs given, sorts and searches to the right rows, links
each row to its run's page, rings the Pareto front, and shows a `<script>` in a compressor's name as text. A missing
browser fails these tests: `make test` installs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright

from gacc_hf.results.board import render_board, write_board
from gacc_hf.results.board_data import load_runs
from tests.results.test_board_data import write_run

CHROMIUM = Path("/usr/bin/chromium")
PLANTED = "<script>document.body.dataset.pwned='1'</script><img src=x onerror=\"document.title='pwned'\">"


class Planted:
    """A compressor whose name is markup: it keeps the first words of the context up to the budget."""

    name = PLANTED
    revision = "planted-v1"

    def __call__(self, inp) -> str:
        return " ".join(inp.context.split()[: inp.token_budget])


@pytest.fixture(scope="module")
def board(tmp_path_factory) -> tuple[Path, list[dict]]:
    root = tmp_path_factory.mktemp("board")
    a = write_run(root / "a", ["truncate", "goal-lines"])
    b = write_run(root / "b", [Planted()], ratios=[0.25])
    path, _ = write_board([a, b], root / "board")
    scores = [dict(s, run=run.name) for run in (a, b) for s in json.loads((run / "results.json").read_text())["scores"]]
    return path, scores


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: `make browser` (apt-get install chromium) installs it")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM))
        yield chromium
        chromium.close()


def _open(browser, path: Path) -> tuple[Page, list[str]]:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: None if r.url.startswith(("file:", "data:")) else errors.append(f"request {r.url}"))
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready='1']")
    return page, errors


def _column(page: Page, heading: str) -> list[str]:
    index = page.locator("#board-head th").all_inner_texts().index(heading)
    return page.locator(f"#board-body tr td:nth-child({index + 1})").all_inner_texts()


def test_the_board_shows_one_row_per_cell_of_the_runs_given(browser, board):
    page, errors = _open(browser, board[0])
    assert int(page.inner_text("#total")) == int(page.inner_text("#shown")) == len(board[1])
    assert page.locator("#board-body tr").count() == len(board[1])
    assert errors == []


def test_a_sort_orders_the_rows_by_that_column_both_ways(browser, board):
    page, errors = _open(browser, board[0])
    micro = sorted(round(s["micro"], 3) for s in board[1])
    shown = lambda: [float(t.split(" ")[0]) for t in _column(page, "Micro [95% CI]")]  # noqa: E731
    assert shown() == micro[::-1]  # the board opens sorted by Micro, highest first
    page.click("#board-head th[data-key='micro']")
    assert shown() == micro
    page.click("#board-head th[data-key='ratio']")
    assert [float(r) for r in _column(page, "ratio")] == sorted((s["ratio"] for s in board[1]), reverse=True)
    assert errors == []


def test_a_search_and_a_filter_show_the_right_rows(browser, board):
    page, errors = _open(browser, board[0])
    page.fill("#search", "goal-lines")
    goal_lines = [s for s in board[1] if s["compressor"] == "goal-lines"]
    assert int(page.inner_text("#shown")) == len(goal_lines) == page.locator("#board-body tr").count() > 0
    page.fill("#search", "GOAL-LINES 0.5")  # every word must match, in any case
    assert int(page.inner_text("#shown")) == sum(s["ratio"] == 0.5 for s in goal_lines) == 1
    page.fill("#search", "")
    page.select_option("#f-condition", "own")
    assert int(page.inner_text("#shown")) == sum(s["condition"] == "own" for s in board[1])
    assert errors == []


def test_a_rows_link_opens_that_runs_page(browser, board):
    page, errors = _open(browser, board[0])
    page.fill("#search", "goal-lines")
    page.locator("#board-body tr a").first.click()
    page.wait_for_selector("body[data-ready='1']")
    # the run's page then writes its view into the fragment
    assert page.url.split("#")[0] == (board[0].parent / "runs" / "a" / "report.html").as_uri()
    assert "goal-lines" in page.title() and errors == []


def test_the_pareto_front_is_ringed_and_marked_in_the_table(browser, board):
    page, errors = _open(browser, board[0])
    ranks = _column(page, "Pareto rank")
    front = page.locator("#board-body td.front").all_inner_texts()
    assert front == [r for r in ranks if r == "1"] and front
    assert page.locator("#pareto circle[data-front='1']").count() == len(front)
    assert page.locator("#curves polyline").count() == 3  # truncate, goal-lines, the planted one: one line each
    bounds = sum(s["condition"] in ("full", "closed") for s in board[1])  # a ceiling and a floor a run: 4
    page.select_option("#f-condition", "own")  # the bounds of the runs shown stay, whatever the condition chosen
    assert page.locator("#curves line[stroke-dasharray]").count() == bounds == 4
    assert errors == []


def test_a_script_in_a_compressor_name_stays_text(browser, board):
    page, errors = _open(browser, board[0])
    assert any(PLANTED in t for t in _column(page, "compressor"))
    assert page.evaluate("document.body.dataset.pwned") is None and page.title() != "pwned"
    assert page.locator("#board-body script, #board-body img").count() == 0
    assert errors == []


def test_a_long_table_lists_its_first_500_rows_until_asked_for_all(browser, board, tmp_path):
    page, _ = _open(browser, board[0])
    assert page.locator("#more").is_hidden()  # 9 cells: all listed
    (run,) = load_runs([board[0].parent.parent / "a"])[0]
    cells = [{**run.cells[-1], "ratio": i / 1000} for i in range(600)]  # 600 cells of one run, ratios apart
    (tmp_path / "index.html").write_text(render_board([type(run)(run.path, "a", run.payload, cells)]))
    page, errors = _open(browser, tmp_path / "index.html")
    assert (int(page.inner_text("#total")), page.locator("#board-body tr").count()) == (600, 500)
    page.click("#more")
    assert page.locator("#board-body tr").count() == 600 and page.locator("#more").is_hidden()
    assert errors == []
