"""The results page's judges and labels, in Debian's headless Chromium: each judge's verdict beside an answer and
the "judges disagree" filter, counted by hand; marks a person makes kept across a reload, exported as a labels
file that `read_labels` (and `gacc rescore --labels`) reads with the keys `gacc_hf.keys.answer_key` gives."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Page

from gacc_hf import run_benchmark
from gacc_hf.data.synthetic import synthetic_rows
from gacc_hf.keys import answer_key
from gacc_hf.methods import ContainsJudge, ExactJudge
from gacc_hf.results.folder import read_folder, write_results
from gacc_hf.results.page_data import run_key
from gacc_hf.scoring.labels import read_labels
from tests.helpers.data import flat_rows, write_jsonl
from tests.helpers.pages import CHROMIUM, PLANTED_ANSWER, chromium, open_page
from tests.helpers.paths import ROOT
from tests.helpers.runs import rules_run


def whole(item):
    return item.context


def first_line(item):
    return item.memory.splitlines()[0]


def last_line(item):
    return [line for line in item.memory.splitlines() if line.strip()][-1]


# The hand-written rows of `tests.helpers.data` (en q1, q2; zh q3, q4), each source kept whole. By hand, as in
# tests/run/test_settings.py: `exact` calls no answer right (none is a reference); `contains` finds a reference in
#   first_line "Movers pack up to four boxes per person." / "搬家公司为每人打包最多四个箱子。": q1 ✓, q2 ✗, q3 ✗, q4 ✓
#   last_line "Old badges stop working on 4 October." / "新工牌在一楼前台领取。": q1 ✓, q2 ✓, q3 ✓, q4 ✗
# so the judges disagree on 5 of the 8 answers (3 English, 2 Chinese), each shown once per judge.
DISAGREE = {("first_line", "q1"), ("first_line", "q4"), ("last_line", "q1"), ("last_line", "q2"), ("last_line", "q3")}
NOTE = "<script>document.body.dataset.noted = '1'</script><b>not bold</b>"


@pytest.fixture(scope="module")
def crossed(tmp_path_factory) -> Path:
    result = run_benchmark(
        flat_rows(),
        compressor=whole,
        reader=[first_line, last_line],
        judge=[ContainsJudge(), ExactJudge()],
        ratios=[1.0],
        conditions=["own"],
        n_bootstrap=0,
        progress=False,
    )
    folder = tmp_path_factory.mktemp("judged") / "run"
    write_results(result, folder)
    return folder


@pytest.fixture(scope="module")
def english(tmp_path_factory) -> Path:
    """An English rules run read from a file (so `gacc rescore` finds its sources), markup as its first answer."""
    folder = tmp_path_factory.mktemp("labels")
    data = write_jsonl(folder / "rows.jsonl", synthetic_rows(seed=0, contexts=3))
    result = rules_run(str(data), compressor=["truncate", "goal-lines"], ratios=[0.2, 0.5], n_bootstrap=0)
    result.answers[0]["answer"] = PLANTED_ANSWER
    write_results(result, folder / "en")
    return folder / "en"


@pytest.fixture(scope="module")
def browser():
    with chromium() as launched:
        yield launched


def _labelled(page: Page) -> None:
    page.wait_for_selector("#goal-view[data-labels='ready']", state="attached")


def _shown(page: Page) -> int:
    return int(page.inner_text("#visible"))


def _every_goal_rows(page: Page) -> list[dict]:
    """Every drawn answer row of every goal offered: its question, reader and the judges' verdicts."""
    rows = []
    for value in page.locator("#goal option").evaluate_all("os => os.map(o => o.value)"):
        page.select_option("#goal", value)
        for tr in page.locator("#goal-view tr[data-outcome]").all():
            verdicts = tr.locator("td.judges span").evaluate_all(
                "s => s.map(x => [x.dataset.judge, x.dataset.verdict])"
            )
            setting = tr.locator("td").first.inner_text().split(" · reader ")[1]
            rows.append({"q": tr.get_attribute("data-answer").split("~")[1], "setting": setting, "judges": verdicts})
    return rows


def test_each_judges_verdict_is_beside_the_answer_and_the_disagree_filter_counts_by_hand(browser, crossed):
    page, errors = open_page(browser, crossed)
    assert page.locator("#f-judges option").all_inner_texts() == ["all", "judges disagree", "judges agree"]
    assert _shown(page) == 16  # 8 answers, each judged twice
    assert page.get_attribute("#disagree-count", "data-count") == str(len(DISAGREE))
    page.select_option("#f-judges", "disagree")
    assert page.get_attribute("#disagree-count", "data-count") == str(len(DISAGREE))
    assert "judges disagree on 5 answer(s)" in page.inner_text("#disagree-count")
    assert _shown(page) == 2 * len(DISAGREE)
    rows = _every_goal_rows(page)
    assert {(r["setting"].split(",")[0], r["q"]) for r in rows} == DISAGREE
    assert all(r["judges"] == [["contains", "right"], ["exact", "wrong"]] for r in rows)
    assert "judges=disagree" in page.url
    page.select_option("#f-setting", "reader first_line, judge contains")
    assert _shown(page) == 2  # q1 and q4
    page.select_option("#f-setting", "")
    page.select_option("#f-language", "zh")
    assert _shown(page) == 2 * 2  # first_line q4, last_line q3
    page.select_option("#f-language", "")
    page.select_option("#f-judges", "agree")
    assert _shown(page) == 2 * (8 - len(DISAGREE))
    assert page.get_attribute("#disagree-count", "data-count") == "0"
    assert all(r["judges"] == [["contains", "wrong"], ["exact", "wrong"]] for r in _every_goal_rows(page))
    # the filter is in the address: a link reopens it
    again, more = open_page(browser, (crossed / "report.html").as_uri() + "#judges=disagree")
    assert again.input_value("#f-judges") == "disagree" and _shown(again) == 2 * len(DISAGREE)
    assert errors == [] and more == []


def test_a_run_of_one_judge_has_no_judges_view(browser, english):
    page, errors = open_page(browser, english)
    assert page.locator("#f-judges").count() == 0 and page.locator("td.judges").count() == 0
    assert page.get_attribute("#disagree-count", "data-count") == "" and "judges" not in page.url
    assert errors == []


def _row(page: Page, key: str):
    return page.locator(f"#goal-view tr[data-key='{key}']")


def _mark(page: Page, key: str, label: str, shown: str | None = None) -> None:
    """Click the answer's `label` button in its first row; every row of it then shows `shown` (default: label)."""
    _row(page, key).first.locator(f"td.label button[data-label='{label}']").click()
    page.wait_for_function(
        "([k, l]) => Array.from(document.querySelectorAll(`tr[data-key='${k}']`)).every(t => t.dataset.label === l)",
        arg=[key, label if shown is None else shown],
    )


def _pressed(page: Page, key: str) -> list[list[str]]:
    """Per row of that answer, the labels whose button is pressed."""
    return [
        tr.locator("button[aria-pressed='true']").evaluate_all("bs => bs.map(b => b.dataset.label)")
        for tr in _row(page, key).all()
    ]


def _answers(page: Page) -> list[tuple[str, str]]:
    """(question id, answer text) of each drawn row that has an answer, read from the page's text."""
    out = []
    for tr in page.locator("#goal-view tr[data-outcome]").all():
        if tr.locator("td.label button").count():
            out.append((tr.get_attribute("data-answer").split("~")[1], tr.locator("td").nth(1).text_content()))
    return out


def test_marks_are_kept_across_a_reload_and_exported_as_the_labels_file(browser, english, tmp_path):
    page, errors = open_page(browser, english)
    _labelled(page)
    assert page.get_attribute("#label-count", "data-count") == "0" and page.locator("#export-labels").is_disabled()
    answers = list(dict.fromkeys(_answers(page)))
    assert answers[0][1] == PLANTED_ANSWER  # the first answer row of the run, given as markup
    chosen = [answers[0], answers[1], answers[2]]
    keys = [answer_key(q, a) for q, a in chosen]
    assert len(set(keys)) == 3 and all(_row(page, k).count() for k in keys)  # the page's keys are answer_key's
    _mark(page, keys[0], "right")
    note = _row(page, keys[0]).first.locator("td.label input")
    note.fill(NOTE)
    note.press("Tab")
    _mark(page, keys[1], "right")
    _mark(page, keys[1], "wrong")  # another label replaces it
    _mark(page, keys[2], "right")
    spare = answer_key(*answers[3])
    _mark(page, spare, "wrong")
    _mark(page, spare, "wrong", shown="")  # the same label again takes it off
    assert page.get_attribute("#label-count", "data-count") == "3"

    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    _labelled(page)
    assert page.get_attribute("#label-count", "data-count") == "3"
    # a mark follows its answer into every row that holds it (the same answer from other memories)
    assert all(p == ["right"] for p in _pressed(page, keys[0])) and len(_pressed(page, keys[0])) >= 1
    assert all(p == ["wrong"] for p in _pressed(page, keys[1]))
    assert all(p == ["right"] for p in _pressed(page, keys[2]))
    assert _pressed(page, spare) and all(p == [] for p in _pressed(page, spare))
    assert _row(page, keys[0]).first.locator("td.label input").input_value() == NOTE

    with page.expect_download() as download:
        page.click("#export-labels")
    assert download.value.suggested_filename == "labels.jsonl"
    path = tmp_path / "labels.jsonl"
    download.value.save_as(path)
    labels = read_labels(path)
    assert set(labels) == set(keys)
    assert [labels[k].right for k in keys] == [True, False, True]
    assert [labels[k].question_id for k in keys] == [q for q, _ in chosen]
    assert [labels[k].note for k in keys] == [NOTE, None, None]
    assert [json.loads(line)["key"] for line in path.read_text().splitlines()] == sorted(keys)
    flags = page.evaluate("() => [document.body.dataset.noted, document.body.dataset.answered]")
    assert flags == [None, None] and page.locator("td.label b").count() == 0  # the note and answer stay text

    # rescored against the exported file: the labels match the folder's answers
    out = tmp_path / "rescored"
    command = [sys.executable, "-m", "gacc_hf", "rescore", str(english), "--judge", "exact", "--no-progress"]
    command += ["--labels", str(path), "--output-dir", str(out), "--cache-dir", str(tmp_path / "cache")]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    figures = json.loads((out / "results.json").read_text())["labels"]
    assert (figures["n_labels"], figures["n_right"]) == (3, 2)
    assert errors == []


def test_labels_follow_a_chinese_answer_and_stay_with_their_run(browser, crossed, english):
    page, errors = open_page(browser, crossed)
    page.select_option("#f-language", "zh")
    _labelled(page)
    chinese = [(q, a) for q, a in _answers(page) if a == "新工牌在一楼前台领取。"]
    key = answer_key(*chinese[0])
    assert _row(page, key).count() == 2  # one row per judge: one answer, one key
    _mark(page, key, "right")
    assert _pressed(page, key) == [["right"], ["right"]]
    assert page.get_attribute("#label-count", "data-count") == "1"
    # another run's page (the same browser storage) offers none of them
    page.goto((english / "report.html").as_uri())
    page.wait_for_selector("body[data-ready='1']")
    assert page.get_attribute("#label-count", "data-count") == "0"
    page.goto((crossed / "report.html").as_uri())
    page.wait_for_selector("body[data-ready='1']")
    assert page.get_attribute("#label-count", "data-count") == "1"
    # the page files them under the run's key; entries it did not write there are left out
    name = "gacc-labels:" + run_key(read_folder(crossed).config)
    stored = page.evaluate("n => JSON.parse(localStorage.getItem(n))", name)
    assert list(stored) == [key]
    stored.update({"not-a-key": ["q3", "right", ""], "0123456789abcdef": ["q3", "maybe", ""]})
    page.evaluate("([n, s]) => localStorage.setItem(n, JSON.stringify(s))", [name, stored])
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    assert page.get_attribute("#label-count", "data-count") == "1"
    assert errors == []


def test_without_a_secure_context_labelling_says_why_and_marks_nothing(browser, crossed):
    assert CHROMIUM.is_file()
    page = browser.new_page()
    page.add_init_script("Object.defineProperty(window, 'isSecureContext', { get: () => false })")
    page.goto((crossed / "report.html").as_uri())
    page.wait_for_selector("body[data-ready='1']")
    buttons = page.locator("#goal-view td.label button")
    assert buttons.count() and all(b.is_disabled() for b in buttons.all())
    assert "needs the page opened from file://, https:// or localhost" in page.inner_text("#label-count")
    assert page.get_attribute("#goal-view", "data-labels") == "ready"
