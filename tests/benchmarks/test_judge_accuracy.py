"""The rule judges against the main job's 154 labelled answers: the figures stated in the docs, bound to the
recorded folder and labels file (benchmarks/judge_accuracy.py; the `smollm2` judge's figure is printed there)."""

from __future__ import annotations

import pytest

from benchmarks.judge_accuracy import MAIN, figures, judge_items, labelled_items
from gacc_hf.run.cache import Cache

# counts read off the labels: 154 answers, 21 labelled right, 133 wrong; per judge (accuracy, false-right,
# false-wrong) as whole counts, and the printed 95% CIs (1000 resamples, seed 0)
EXPECTED = {
    "exact": ((133, 154), (0, 133), (21, 21)),  # says wrong to every answer: every right one is missed
    "contains": ((148, 154), (3, 133), (3, 21)),
    "f1": ((134, 154), (3, 133), (17, 21)),
}
PRINTED = {
    "exact": ("0.864 [0.810, 0.909]", "0.000 [0.000, 0.000]", "1.000 [1.000, 1.000]"),
    "contains": ("0.961 [0.926, 0.987]", "0.023 [0.000, 0.052]", "0.143 [0.000, 0.300]"),
    "f1": ("0.870 [0.826, 0.911]", "0.023 [0.000, 0.058]", "0.810 [0.647, 0.952]"),
}


@pytest.fixture(scope="module")
def measured():
    items, unmatched, run = labelled_items(MAIN, MAIN / "labels.jsonl")
    cache = Cache(None)
    verdicts = {judge: judge_items(items, judge, cache)[0] for judge in EXPECTED}
    return items, unmatched, run, verdicts


def test_every_label_finds_its_stored_answer(measured):
    items, unmatched, _, _ = measured
    assert unmatched == [] and len(items) == 154
    assert sum(i["row"]["label"] for i in items) == 21


def test_rule_judges_against_the_labels_are_the_recorded_figures(measured):
    items, _, _, verdicts = measured
    rows, _ = figures(items, verdicts, n_boot=1000, seed=0)
    for row in rows:
        for name, (count, base), printed in zip(
            ("accuracy", "false_right", "false_wrong"), EXPECTED[row["judge"]], PRINTED[row["judge"]], strict=True
        ):
            assert row[name] == pytest.approx(count / base)
            shown = f"{row[name]:.3f} [{row[f'{name}_ci_low']:.3f}, {row[f'{name}_ci_high']:.3f}]"
            assert shown == printed, (row["judge"], name)


def test_the_run_recorded_the_verdicts_contains_gives_today(measured):
    items, _, run, verdicts = measured
    assert run.config["judge"]["name"] == "contains"
    assert [bool(i["row"]["correct"]) for i in items] == verdicts["contains"]
