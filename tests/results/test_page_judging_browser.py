"""The results page's "Judges and conclusions" part in a real browser (Debian's headless Chromium): the judge
agreement, labels and survival tables of a copy of docs/results/judges, a small rules run of two judges, and a
hostile compressor name set as text. Expected cells are formatted here from `results.json`, not by the page's code."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gacc_hf.cli import main
from gacc_hf.data.synthetic import synthetic_rows
from gacc_hf.results.folder import read_folder, write_results
from gacc_hf.results.page import PAGE_FILE, render_page
from tests.helpers.paths import ROOT
from tests.helpers.runs import rules_run
from tests.results.test_page_browser import _open, browser  # noqa: F401  (a fixture)

HOSTILE = "<script>window.hit=1</script>&amp;"


@pytest.fixture(scope="module")
def judges(tmp_path_factory) -> Path:
    """A copy of docs/results/judges with its page made again by this tree's code."""
    folder = shutil.copytree(ROOT / "docs" / "results" / "judges", tmp_path_factory.mktemp("page") / "judges")
    assert main(["report", str(folder)]) == 0
    return folder


@pytest.fixture(scope="module")
def two_judges(tmp_path_factory) -> Path:
    result = rules_run(
        synthetic_rows(seed=0, contexts=3), compressor=["truncate", "goal-lines"], judge=["exact", "f1"], ratios=[0.5]
    )
    folder = tmp_path_factory.mktemp("page") / "run"
    write_results(result, folder)
    return folder


def _ci(row: dict, name: str) -> str:
    if row[name] is None:
        return f"— ({row[f'{name}_undefined']})"
    low, high = row[f"{name}_ci_low"], row[f"{name}_ci_high"]
    note = row.get(f"{name}_ci_note")
    return f"{row[name]:.3f}" + ("" if low is None else f" [{low:.3f}, {high:.3f}]") + (f" ({note})" if note else "")


def _tables(page) -> dict[str, list[list[str]]]:
    """Each table of the part under its heading: its rows of cell texts, the head first."""
    return page.evaluate(
        """() => {
        const out = {};
        for (const h of document.querySelectorAll('h2#judging ~ h3')) {
          let t = h.nextElementSibling;
          while (t && t.tagName === 'P') t = t.nextElementSibling;
          if (t && t.tagName === 'TABLE')
            out[h.textContent] = [...t.rows].map(r => [...r.cells].map(c => c.textContent));
        }
        return out;
        }"""
    )


def test_the_judges_folder_shows_agreement_and_labels_as_results_json_holds_them(browser, judges):  # noqa: F811
    page, errors = _open(browser, judges)
    payload = json.loads((judges / "results.json").read_text(encoding="utf-8"))
    tables = _tables(page)
    part = payload["agreement"][0]
    agreement = tables["Judge agreement, reader smollm2"]
    assert agreement[0] == ["judge A", "judge B", "agreement [95% CI]", "Cohen's κ [95% CI]"]
    assert agreement[1:] == [[p["judge_a"], p["judge_b"], _ci(p, "agreement"), _ci(p, "kappa")] for p in part["pairs"]]
    # exact and smollm2 said wrong to every answer: κ is undefined and says why, never NaN
    assert [
        "exact",
        "smollm2",
        "1.000 [1.000, 1.000]",
        "— (both judges said wrong to every answer: chance agreement is 1)",
    ] in agreement
    text = page.inner_text("body")
    assert f"Krippendorff's α over all judges: {_ci(part['all'], 'alpha')}" in text
    assert "NaN" not in text and "None" not in text
    labels = payload["labels"]
    accuracy = tables["Judges against human labels"]
    assert accuracy[0] == ["reader", "judge", "accuracy", "false-right", "false-wrong"]
    assert accuracy[1:] == [
        [r["reader"], r["judge"], *(_ci(r, k) for k in ("accuracy", "false_right", "false_wrong"))]
        for r in labels["accuracy"]
    ]
    # by hand: contains agrees with the labels on 148 of the 154 answers; 3 of the 133 wrong ones it calls right
    contains = next(r for r in accuracy if r[1] == "contains")
    assert contains[2].startswith(f"{148 / 154:.3f} [") and contains[3].startswith(f"{3 / 133:.3f} [")
    assert "154 labelled answers (21 right) from docs/results/main/labels.jsonl" in text
    reference = tables["Under the human verdicts"]
    assert len(reference) == 1 + len(labels["human_reference"])
    first = labels["human_reference"][0]
    assert reference[1][:6] == [first["reader"], first["judge"], first["compressor"], first["condition"],
                                f"{first['ratio']:g}", str(first["n_questions"])]  # fmt: skip
    assert errors == []


def test_the_judges_folder_shows_each_ratios_rankings_tau_and_wins(browser, judges):  # noqa: F811
    page, errors = _open(browser, judges)
    survival = json.loads((judges / "results.json").read_text(encoding="utf-8"))["survival"]
    tables = _tables(page)
    for sec in survival["sections"]:
        about = f"{sec['condition']}, ratio {sec['ratio']:g} ({sec['n_questions']} questions, {sec['n_goals']} goals)"
        rankings = tables[f"Do conclusions survive? {about}"]
        assert [r[0] for r in rankings[1:]] == survival["settings"]
        for row, r in zip(rankings[1:], sec["rankings"], strict=True):
            assert row[1] == ", ".join(f"{x['rank']}. {x['compressor']} ({x['micro']:.3f})" for x in r["ranking"])
        tau = tables[f"Kendall's τ-b between rankings, {about}"]
        assert len(tau) == 1 + len(sec["settings"]) * (len(sec["settings"]) - 1) // 2
        wins = tables[f"B − A > 0 in k of m settings, {about}"]
        assert wins[1:] == [[p["a"], p["b"], f"{p['k']} of {p['m']}", str(p["k_ci_above_zero"])] + [
            f"{100 * d['micro_diff']:+.1f} [{100 * d['ci_low']:+.1f}, {100 * d['ci_high']:+.1f}]" for d in p["settings"]
        ] for p in sec["pairs"]]  # fmt: skip
    # own, ratio 0.2: contains ranks embed first; exact scores both 0, so its τ with any setting is undefined
    own = "own, ratio 0.2 (155 questions, 35 goals)"
    assert tables[f"Do conclusions survive? {own}"][1][1] == "1. embed (0.168), 2. truncate (0.032)"
    assert tables[f"Kendall's τ-b between rankings, {own}"][1][2] == "a setting ranks every compressor alike"
    assert tables[f"B − A > 0 in k of m settings, {own}"][1][:3] == ["truncate", "embed", "2 of 4"]
    assert errors == []


def test_a_run_of_two_judges_shows_survival_and_agreement(browser, two_judges):  # noqa: F811
    page, errors = _open(browser, two_judges)
    payload = json.loads((two_judges / "results.json").read_text(encoding="utf-8"))
    assert payload["survival"]["settings"] == ["reader fields, judge exact", "reader fields, judge f1"]
    tables = _tables(page)
    sec = payload["survival"]["sections"][0]
    about = f"{sec['condition']}, ratio 0.5 ({sec['n_questions']} questions, {sec['n_goals']} goals)"
    rankings = tables[f"Do conclusions survive? {about}"]
    assert [r[0] for r in rankings] == ["setting", "reader fields, judge exact", "reader fields, judge f1"]
    assert tables[f"Kendall's τ-b between rankings, {about}"][1][:2] == [
        "reader fields, judge exact",
        "reader fields, judge f1",
    ]
    wins = tables[f"B − A > 0 in k of m settings, {about}"]
    assert wins[0][-2:] == [
        "reader fields, judge exact: B − A pp [95% CI]",
        "reader fields, judge f1: B − A pp [95% CI]",
    ]
    assert {(r[0], r[1]) for r in wins[1:]} == {("truncate", "goal-lines")} and wins[1][2].endswith(" of 2")
    assert tables["Judge agreement, reader fields"][1][:2] == ["exact", "f1"]
    assert "Judges against human labels" not in tables  # no labels file: no labels table
    assert errors == []


def test_a_run_without_the_sections_has_no_part(browser, tmp_path):  # noqa: F811
    folder = shutil.copytree(ROOT / "docs" / "results" / "curve", tmp_path / "curve")
    html = (folder / PAGE_FILE).read_text(encoding="utf-8")
    assert "Judges and conclusions" not in html
    page, errors = _open(browser, folder)
    assert page.locator("#judging").count() == 0 and errors == []


def test_a_hostile_compressor_name_stays_text(browser, two_judges, tmp_path):  # noqa: F811
    run = read_folder(two_judges)
    sec = run.payload["survival"]["sections"][0]
    for r in sec["rankings"]:
        r["ranking"][0]["compressor"] = HOSTILE
    sec["pairs"][0]["a"] = HOSTILE
    run.payload["agreement"][0]["pairs"][0]["judge_a"] = HOSTILE
    html = render_page(run)
    assert HOSTILE not in html and "&lt;script&gt;window.hit=1&lt;/script&gt;&amp;amp;" in html
    (tmp_path / PAGE_FILE).write_text(html, encoding="utf-8")
    page, errors = _open(browser, tmp_path)
    assert page.evaluate("() => window.hit") is None
    tables = _tables(page)
    wins = next(t for title, t in tables.items() if title.startswith("B − A > 0"))
    assert wins[1][0] == HOSTILE
    assert tables["Judge agreement, reader fields"][1][0] == HOSTILE
    assert errors == []
