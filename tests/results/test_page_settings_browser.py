"""The results page of a run of several judges, in a real browser (Debian's headless Chromium): a `setting` filter,
each answer named with its setting, and the memories still shown whatever setting is chosen."""

from __future__ import annotations

from pathlib import Path

import pytest

from gacc_hf.data.synthetic import synthetic_rows
from gacc_hf.results.folder import write_results
from tests.helpers.runs import rules_run
from tests.results.test_page_browser import _open, browser  # noqa: F401  (a fixture)


@pytest.fixture(scope="module")
def crossed(tmp_path_factory) -> Path:
    result = rules_run(synthetic_rows(seed=0, contexts=2), compressor="goal-lines", judge=["exact", "f1"], ratios=[0.5])
    folder = tmp_path_factory.mktemp("page") / "run"
    write_results(result, folder)
    return folder


def test_the_setting_filter_shows_one_settings_answers(browser, crossed):  # noqa: F811
    page, errors = _open(browser, crossed)
    options = page.locator("#f-setting option").all_inner_texts()
    assert options == ["all", "reader fields, judge exact", "reader fields, judge f1"]
    rows = page.locator("#goal-view table.answers tr[data-outcome] td:first-child")
    both = rows.all_inner_texts()
    # every question answered once and judged twice: half the rows per setting, each named
    assert len(both) % 2 == 0 and sum(t.endswith(" · reader fields, judge f1") for t in both) == len(both) // 2
    page.select_option("#f-setting", "reader fields, judge exact")
    one = rows.all_inner_texts()
    assert len(one) == len(both) // 2 and all(t.endswith(" · reader fields, judge exact") for t in one)
    assert page.locator("#side-a option").count() > 1  # the memories are there under any setting
    assert errors == []
