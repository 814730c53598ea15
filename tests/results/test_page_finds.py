"""The results page finds things, in Debian's headless Chromium: search (English and Chinese, highlighted, counted),
sorted answer tables, and links that reopen a view. Expected counts come from the folder's own tables, read here."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from playwright.sync_api import Page

from tests.helpers.pages import PLANTED, PLANTED_ANSWER, chinese_run, chromium, english_run, open_page, sourceless_run


@pytest.fixture(scope="module")
def english(tmp_path_factory) -> Path:
    return english_run(tmp_path_factory.mktemp("finds") / "en")


@pytest.fixture(scope="module")
def chinese(tmp_path_factory) -> Path:
    return chinese_run(tmp_path_factory.mktemp("finds") / "zh")


@pytest.fixture(scope="module")
def browser():
    with chromium() as launched:
        yield launched


def _found(folder: Path, phrase: str) -> list[dict]:
    """The answer rows where `phrase` (any case) is in the goal's source, the question or its gold answers, the
    memory the row read, or the answer."""
    answers = pq.read_table(folder / "answers.parquet").to_pylist()
    memories = pq.read_table(folder / "memories.parquet").to_pylist()
    sources = {m["context_id"]: m["memory"] for m in memories if m["condition"] == "full"}
    read = {(m["goal_id"], m["compressor"], m["condition"], m["ratio"]): m["memory"] or "" for m in memories}
    p = phrase.lower()

    def hit(r: dict) -> bool:
        texts = [sources.get(r["context_id"], ""), r["question"], *r["references"], r["answer"] or r["error"] or ""]
        texts.append(read[(r["goal_id"], r["compressor"], r["condition"], r["ratio"])])
        return any(p in t.lower() for t in texts)

    return [r for r in answers if hit(r)]


def _search(page: Page, query: str) -> None:
    page.fill("#search", query)


@pytest.mark.parametrize(
    ("which", "query", "phrase"),
    [
        ("english", "AUDIT rights", "audit rights"),  # in one source: every answer of its goals
        ("english", "liability cap", "liability cap"),  # in a question, a gold answer and the source
        ("chinese", "哪台网关", "哪台网关"),  # in one question only
        ("chinese", "证书过期", "证书过期"),  # in one source
    ],
)
def test_search_finds_a_phrase_highlights_and_counts_it(request, browser, which, query, phrase):
    folder = request.getfixturevalue(which)
    page, errors = open_page(browser, folder)
    expected = _found(folder, phrase)
    assert 0 < len(expected) < int(page.inner_text("#total"))
    _search(page, query)
    assert int(page.inner_text("#visible")) == len(expected)
    count = page.locator("#search-count")
    assert int(count.get_attribute("data-answers")) == len(expected)
    assert int(count.get_attribute("data-goals")) == len({r["goal_id"] for r in expected})
    assert f"found in {len(expected)} answer(s)" in count.inner_text()
    marks = page.locator("#goal-view mark.hit").all_text_contents()
    assert marks and {m.lower() for m in marks} == {phrase}
    assert int(page.get_attribute("#search-here", "data-count")) == len(marks)
    assert page.locator("#goal option").count() == len({r["goal_id"] for r in expected})
    assert errors == []


def test_a_question_only_phrase_keeps_that_questions_answers(browser, chinese):
    page, errors = open_page(browser, chinese)
    page.wait_for_selector("body[data-indexed='1']")  # its texts folded while the page was idle
    answers = pq.read_table(chinese / "answers.parquet").to_pylist()
    _search(page, "哪台网关")  # the question zh-fx-cert/g1/q1, found nowhere else
    assert int(page.inner_text("#visible")) == sum(r["question_id"] == "zh-fx-cert/g1/q1" for r in answers)
    assert page.locator("#goal-view h3.question").all_inner_texts() == ["证书过期的是哪台网关？"]
    _search(page, "")
    assert int(page.inner_text("#visible")) == len(answers) and page.inner_text("#search-count") == ""
    assert page.locator("#goal-view mark.hit").count() == 0
    assert errors == []


def test_without_a_source_a_search_keeps_the_answers_of_the_memories_holding_it(browser, tmp_path):
    folder = sourceless_run(tmp_path / "sourceless")
    page, errors = open_page(browser, folder)
    phrase = "prices are exclusive of vat"  # a line of the first source, kept by some of its memories
    expected = _found(folder, phrase)
    memories = pq.read_table(folder / "memories.parquet").to_pylist()
    cell = ("goal_id", "compressor", "condition", "ratio")
    holding = {tuple(m[k] for k in cell) for m in memories if phrase in (m["memory"] or "").lower()}
    assert expected and {tuple(r[k] for k in cell) for r in expected} == holding
    # that source's memories only, not all 24 of them (3 goals x 2 compressors x 2 ratios x 2 conditions)
    assert {r["context_id"] for r in expected} == {"syn-0-000000"} and len(holding) < 24
    _search(page, "Prices are EXCLUSIVE of VAT")
    assert int(page.inner_text("#visible")) == len(expected)
    page.select_option(
        "#side-a", page.locator("#goal-view tr[data-answer]").first.get_attribute("data-answer").split("~")[0]
    )
    assert page.locator("#goal-view .beside mark.hit").all_text_contents() == ["Prices are exclusive of VAT"]
    assert errors == []


def test_case_is_folded_without_moving_a_highlight(browser, english):
    page, errors = open_page(browser, english)
    # İ lower-cases to two characters (i and a dot above): it stays as written, the rest of the text folds
    folded = page.evaluate("[pageSearch.fold('İstanbul, ISTANBUL'), pageSearch.fold('Ärger 数据 ABC')]")
    assert folded == ["İstanbul, istanbul", "ärger 数据 abc"]
    assert page.evaluate("pageSearch.hits('İstanbul, ISTANBUL', pageSearch.needle(' Istanbul '))") == [[10, 18]]
    assert errors == []


def test_a_search_that_finds_nothing_says_so(browser, english):
    page, errors = open_page(browser, english)
    _search(page, "no such phrase anywhere 无此短语")
    assert page.inner_text("#visible") == "0" and page.get_attribute("#search-count", "data-answers") == "0"
    assert page.inner_text("#goal-view") == "No answer matches these filters."
    assert errors == []


def test_markup_in_an_answer_and_a_source_is_found_and_shown_as_written(browser, english):
    page, errors = open_page(browser, english)
    _search(page, "<script>document.body")
    assert int(page.inner_text("#visible")) > 0
    cells = page.locator("#goal-view table.answers td").all_text_contents()
    assert PLANTED_ANSWER in cells
    assert PLANTED in page.locator("#source").text_content()
    marks = page.locator("#goal-view mark.hit").all_text_contents()
    assert set(marks) == {"<script>document.body"} and len(marks) == 2  # the answer and the source
    assert page.locator("#goal-view script, #goal-view b, #goal-view img").count() == 0
    assert page.evaluate("[document.body.dataset.answered, document.body.dataset.pwned]") == [None, None]
    assert errors == []


def _first_table(page: Page) -> list[dict]:
    rows = page.locator("#goal-view table.answers").first.locator("tr[data-answer]")
    out = []
    for i in range(rows.count()):
        tds = rows.nth(i).locator("td").all_inner_texts()
        compressor, condition, ratio = tds[0].split(" (")[0].split(" · ")
        out.append({"cell": (compressor, condition, float(ratio)), "verdict": tds[2], "outcome": tds[3]})
    return out


def test_sorting_an_answer_table_orders_its_rows(browser, english):
    page, errors = open_page(browser, english)
    answers = pq.read_table(english / "answers.parquet").to_pylist()
    first = page.locator("#goal-view table.answers tr[data-answer]").first.get_attribute("data-answer")
    question = first.split("~", 1)[1]
    rows = [r for r in answers if r["question_id"] == question]
    cells = sorted((r["compressor"], r["condition"], r["ratio"]) for r in rows)
    assert len(cells) > 5 and [r["cell"] for r in _first_table(page)] != cells  # drawn in run order, not sorted
    page.click("#goal-view table.answers >> nth=0 >> th[data-key=memory]")
    assert [r["cell"] for r in _first_table(page)] == cells
    assert page.get_attribute("#goal-view table.answers >> nth=0 >> th[data-key=memory]", "aria-sort") == "ascending"
    page.click("#goal-view table.answers >> nth=0 >> th[data-key=memory]")
    assert [r["cell"] for r in _first_table(page)] == cells[::-1]
    # verdicts: wrong before right, ascending; a row without one last either way
    wrong, right = sum(r["correct"] is False for r in rows), sum(r["correct"] is True for r in rows)
    assert wrong and right
    page.click("#goal-view table.answers >> nth=0 >> th[data-key=verdict]")
    assert [r["verdict"] for r in _first_table(page)][: wrong + right] == ["✗ wrong"] * wrong + ["✓ right"] * right
    page.click("#goal-view table.answers >> nth=0 >> th[data-key=verdict]")
    assert [r["verdict"] for r in _first_table(page)][: wrong + right] == ["✓ right"] * right + ["✗ wrong"] * wrong
    # outcomes in the order of their definitions: right, guessed, missed, lost
    page.click("#goal-view table.answers >> nth=0 >> th[data-key=outcome]")
    order = {"right": 0, "guessed": 1, "missed": 2, "lost": 3}
    shown = [r["outcome"] for r in _first_table(page)]
    assert shown == sorted(shown, key=lambda o: order.get(o, 4)) and len(set(shown)) > 1
    assert errors == []


def _view(page: Page) -> dict:
    ids = ("f-compressor", "f-condition", "f-ratio", "f-language", "f-outcome", "goal", "side-a", "side-b")
    return {
        **{i: page.input_value(f"#{i}") for i in ids},
        "search": page.input_value("#search"),
        "visible": page.inner_text("#visible"),
        "heading": page.inner_text("#goal-view h2"),
        "sort": page.locator("#goal-view th[aria-sort]").first.get_attribute("data-key"),
        "rows": page.locator("#goal-view tr[data-answer]").evaluate_all("rs => rs.map(r => r.dataset.answer)"),
    }


def test_a_link_reopens_the_same_goal_filters_search_and_sort(browser, chinese):
    page, errors = open_page(browser, chinese)
    page.select_option("#f-compressor", "goal-lines")
    page.select_option("#f-ratio", "0.5")
    _search(page, "日志")
    goals = page.locator("#goal option")
    assert goals.count() > 1
    page.select_option("#goal", goals.nth(1).get_attribute("value"))
    page.select_option("#side-b", label="oracle · oracle · 0.5 (ceiling)")
    page.click("#goal-view table.answers >> nth=0 >> th[data-key=answer]")
    before = _view(page)
    assert "#" in page.url and before["goal"] != goals.nth(0).get_attribute("value")
    again, more = open_page(browser, page.url)
    assert _view(again) == before and before["search"] == "日志" and before["sort"] == "answer"
    assert page.get_attribute("#share", "href") == "#" + page.url.split("#", 1)[1]
    assert errors == [] and more == []


def test_a_rows_link_opens_that_answer_marked(browser, english):
    page, errors = open_page(browser, english)
    page.select_option("#f-outcome", "lost")
    row = page.locator("#goal-view tr[data-answer]").nth(1)
    key = row.get_attribute("data-answer")
    href = row.locator("a").get_attribute("href")
    assert page.locator("tr.target").count() == 0
    row.locator("a").click()
    page.wait_for_selector("tr.target")  # the fragment's change reaches the page as an event, after the click
    assert page.locator("tr.target").count() == 1 and page.get_attribute("tr.target", "data-answer") == key
    assert page.url.endswith(href)  # the address names that answer too, until the view changes
    reopened, more = open_page(browser, english.joinpath("report.html").as_uri() + href)
    assert reopened.get_attribute("tr.target", "data-answer") == key
    assert reopened.input_value("#f-outcome") == "lost"
    reopened.select_option("#f-ratio", "0.5")
    assert "answer=" not in reopened.url and "ratio=0.5" in reopened.url
    assert errors == [] and more == []


def test_a_link_to_what_the_page_lacks_shows_everything(browser, english):
    url = english.joinpath("report.html").as_uri() + "#compressor=nope&goal=nope&sort=bogus-up&a=999"
    page, errors = open_page(browser, url)
    assert page.input_value("#f-compressor") == "" and page.inner_text("#visible") == page.inner_text("#total")
    assert page.input_value("#goal") == page.locator("#goal option").first.get_attribute("value")
    assert page.locator("#goal-view th[aria-sort]").count() == 0
    assert errors == []
