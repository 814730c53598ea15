"""Several readers and judges in one run: memories once, answers once per reader, verdicts once per (answer, judge).

The data is the hand-written English and Chinese rows of `tests.helpers.data` (two goals, two questions each);
the readers answer with a line of the memory, so every verdict below is worked out by hand from the text.
"""

from __future__ import annotations

import pytest

from gacc_hf import run_benchmark
from gacc_hf.methods import ContainsJudge, ExactJudge
from gacc_hf.results.board import run_page
from gacc_hf.results.folder import read_folder, verify_folder
from gacc_hf.results.views import SettingError, choose_setting, matched_views, setting_view
from gacc_hf.run.dry_run import dry_run
from tests.helpers.data import flat_rows

CALLS: dict[str, int] = {}
_contains, _exact = ContainsJudge(), ExactJudge()


def _count(name: str) -> None:
    CALLS[name] = CALLS.get(name, 0) + 1


def whole(item):
    """The compressor: the source itself (cut to the budget by the protocol)."""
    _count("whole")
    return item.context


def first_line(item):
    """A reader answering every question with the memory's first line."""
    _count("first_line")
    return item.memory.splitlines()[0]


def last_line(item):
    """A reader answering every question with the memory's last line."""
    _count("last_line")
    return [line for line in item.memory.splitlines() if line.strip()][-1]


def contains(item):
    _count("contains")
    return _contains(item)


def exact(item):
    _count("exact")
    return _exact(item)


# By hand, per reader and question (q1, q2 English; q3, q4 Chinese), whether `contains` finds a reference:
#   first_line "Movers pack up to four boxes per person." / "搬家公司为每人打包最多四个箱子。"
#     q1 four ✓, q2 4 October ✗, q3 一楼前台 ✗, q4 四个 ✓
#   last_line "Old badges stop working on 4 October." / "新工牌在一楼前台领取。"
#     q1 4 ✓, q2 4 October ✓, q3 一楼前台 ✓, q4 四个 ✗
# `exact` accepts none: no answer is a reference.
MICRO = {
    ("first_line", "contains"): 2 / 4,
    ("first_line", "exact"): 0.0,
    ("last_line", "contains"): 3 / 4,
    ("last_line", "exact"): 0.0,
}
BY_LANGUAGE = {
    ("first_line", "contains"): {"en": 1 / 2, "zh": 1 / 2},
    ("last_line", "contains"): {"en": 1.0, "zh": 1 / 2},
}


def _run(reader, judge, **kwargs):
    CALLS.clear()
    base = dict(compressor=whole, ratios=[1.0], conditions=["own"], n_bootstrap=20, progress=False)
    return run_benchmark(flat_rows(), reader=reader, judge=judge, **{**base, **kwargs})


@pytest.fixture(scope="module")
def crossed():
    return _run([first_line, last_line], [contains, exact]), dict(CALLS)


def test_memories_once_answers_once_per_reader_verdicts_once_per_answer_and_judge(crossed):
    result, calls = crossed
    # 2 goals: 2 memories; 2 goals x 2 questions: 4 answers per reader; 4 answers x 2 readers: 8 verdicts per judge
    assert calls == {"whole": 2, "first_line": 4, "last_line": 4, "contains": 8, "exact": 8}
    assert result.calls == {"compressor": 2, "reader": 8, "judge": 16}


def test_every_setting_is_scored_on_its_own_answers_and_named_in_each_row(crossed):
    result, _ = crossed
    assert [(s["reader"], s["judge"]) for s in result.scores] == list(MICRO)  # each reader, then each judge
    assert {(s["reader"], s["judge"]): s["micro"] for s in result.scores} == MICRO
    assert len(result.answers) == 4 * 4 and all({"reader", "judge"} <= a.keys() for a in result.answers)
    languages: dict[tuple[str, str], dict[str, float]] = {}
    for s in result.scores_by_language:
        languages.setdefault((s["reader"], s["judge"]), {})[s["language"]] = s["micro"]
    assert len(languages) == 4
    for setting, expected in BY_LANGUAGE.items():
        assert languages[setting] == expected
    for field in ("outcomes", "retention", "auc", "gaps"):
        rows = result.results_document()[field]
        assert all({"reader", "judge"} <= r.keys() for r in rows)


def test_one_setting_of_a_crossed_run_scores_as_a_run_of_that_setting_alone(crossed):
    result, _ = crossed
    alone = _run(last_line, contains)
    assert CALLS == {"whole": 2, "last_line": 4, "contains": 4}
    assert [s for s in result.scores if (s["reader"], s["judge"]) == ("last_line", "contains")] == alone.scores
    assert alone.config["reader"]["name"] == "last_line" and alone.config["judge"]["name"] == "contains"


def test_a_second_reader_makes_no_compressor_call_and_a_second_judge_no_reader_call(tmp_path):
    cache = str(tmp_path / "cache")
    _run(first_line, contains, cache_dir=cache)
    assert CALLS == {"whole": 2, "first_line": 4, "contains": 4}
    second_reader = _run([first_line, last_line], contains, cache_dir=cache)
    assert CALLS == {"last_line": 4, "contains": 4}  # no compressor call, the first reader's answers cached
    assert second_reader.calls == {"compressor": 0, "reader": 4, "judge": 4}
    second_judge = _run([first_line, last_line], [contains, exact], cache_dir=cache)
    assert CALLS == {"exact": 8}  # no compressor or reader call: every answer cached, judged anew by exact only
    assert second_judge.calls == {"compressor": 0, "reader": 0, "judge": 8}


@pytest.mark.parametrize(
    ("reader", "judge", "message"),
    [
        ([first_line, first_line], contains, "reader names must be distinct: 'first_line' given twice"),
        (first_line, ["exact", "exact"], "judge names must be distinct: 'exact' given twice"),
        ([], contains, "at least one reader is required"),
    ],
)
def test_a_method_given_twice_or_none_is_refused_in_one_line_before_any_call(reader, judge, message):
    with pytest.raises(ValueError, match=message) as caught:
        _run(reader, judge)
    assert "\n" not in str(caught.value) and CALLS == {}


def test_the_dry_run_counts_the_calls_of_each_reader_and_judge():
    settings = {"seed": 0, "n_bootstrap": 0, "batch_size": 8, "on_error": "raise"}
    plan = dry_run(
        flat_rows(),
        compressor=whole,
        reader=[first_line, last_line],
        judge=[contains, exact],
        ratios=[1.0],
        conditions=["own"],
        cache_dir=None,
        settings=settings,
    )
    calls = {(n.role, n.name): n.calls for n in plan.needs}
    # as the run above: 2 memories, 4 answers per reader, each judge 4 answers of each of 2 readers
    assert calls == {
        ("compressor", "whole"): 2,
        ("reader", "first_line"): 4,
        ("reader", "last_line"): 4,
        ("judge", "contains"): 8,
        ("judge", "exact"): 8,
    }
    assert CALLS == {}  # nothing called


def test_a_crossed_folder_verifies_and_reports_each_setting(crossed, tmp_path):
    result, _ = crossed
    result.save(tmp_path / "run")
    run = verify_folder(tmp_path / "run")
    assert run.payload["schema_version"] == 5
    report = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    for reader, judge in MICRO:
        assert f"# GACC-Bench results: reader {reader}, judge {judge}" in report
        assert (tmp_path / "run" / f"scores.{reader}.{judge}.png").is_file()
    assert not (tmp_path / "run" / "scores.png").exists()
    page = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert 'id="f-setting"' in page and "Scores, reader last_line, judge contains" in page
    assert run_page(run, tmp_path / "run") == page  # the board shows the page `gacc report` wrote, plots and all


def test_a_one_setting_folder_keeps_todays_outputs(tmp_path):
    _run(last_line, contains).save(tmp_path / "run")
    report = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert report.startswith("# GACC-Bench results\n") and "reader last_line, judge" not in report
    assert (tmp_path / "run" / "scores.png").is_file()
    assert 'id="f-setting"' not in (tmp_path / "run" / "report.html").read_text(encoding="utf-8")


def test_a_setting_is_chosen_by_name_and_never_mixed(crossed, tmp_path):
    result, _ = crossed
    result.save(tmp_path / "run")
    run = read_folder(tmp_path / "run")
    with pytest.raises(SettingError, match=r"has 4 \(reader, judge\) settings .*choose one with --reader") as caught:
        choose_setting(run.config, None, None)
    assert "\n" not in str(caught.value)
    with pytest.raises(SettingError, match="no setting with judge f1"):
        choose_setting(run.config, None, "f1")
    assert choose_setting(run.config, "last_line", "contains") == ("last_line", "contains")
    view = setting_view(run, ("last_line", "contains"))
    assert view.config["reader"]["name"] == "last_line" and view.config["judge"]["name"] == "contains"
    assert len(view.answers) == 4 and {(a["reader"], a["judge"]) for a in view.answers} == {("last_line", "contains")}
    assert [s["micro"] for s in view.scores] == [3 / 4]
    # a run of one setting is its own view and its setting needs no choosing
    _run(first_line, exact).save(tmp_path / "one")
    one = read_folder(tmp_path / "one")
    assert choose_setting(one.config, None, None) == ("first_line", "exact")
    with pytest.raises(SettingError, match="no setting with judge contains"):
        choose_setting(one.config, None, "contains")


def test_two_runs_are_compared_on_the_settings_both_have(crossed, tmp_path):
    result, _ = crossed
    result.save(tmp_path / "crossed")
    _run(last_line, contains).save(tmp_path / "one")
    crossed_run, one = read_folder(tmp_path / "crossed"), read_folder(tmp_path / "one")
    pairs, unmatched = matched_views(one, crossed_run)
    assert [s for s, _, _ in pairs] == [("last_line", "contains")]
    assert len(unmatched) == 3 and ("first_line", "exact") in unmatched
    _run(first_line, ["f1"]).save(tmp_path / "f1")
    with pytest.raises(SettingError, match=r"share no \(reader, judge\) setting"):
        matched_views(crossed_run, read_folder(tmp_path / "f1"))
    plain, none = matched_views(one, one)
    assert [s for s, _, _ in plain] == [None] and none == []


def failing_line(item):
    """A reader that fails on every third question (by length), else answers with the first line."""
    if len(item.question) % 3 == 0:
        raise RuntimeError("no answer")
    return item.memory.splitlines()[0]


def failing_contains(item):
    """`contains`, failing on answers whose length is a multiple of 4."""
    if len(item.answer) % 4 == 0:
        raise RuntimeError("no verdict")
    return _contains(item)


@pytest.mark.parametrize("world", [2, 3])
def test_merged_shards_of_a_crossed_run_with_failures_equal_one_process(world, tmp_path):
    from gacc_hf.run.distributed import ContextShard, Topology, merge
    from tests.run.test_distributed import _rows

    kwargs = dict(
        compressor="truncate",
        reader=["fields", failing_line],
        judge=[failing_contains, "exact"],
        ratios=[0.3],
        conditions=["own"],  # one row per question and setting: each failure's message names one row
        n_bootstrap=50,
        on_error="record",
        progress=False,
    )
    whole = run_benchmark(_rows(), cache_dir=str(tmp_path / "one"), **kwargs)
    roles = {(e["role"], e["method"]) for e in whole.errors}
    assert {("reader", "failing_line"), ("judge", "failing_contains")} <= roles  # failures of both kinds
    parts, order = [], None
    for rank in range(world):
        shard = ContextShard(Topology(rank, world))
        parts.append(run_benchmark(_rows(), cache_dir=str(tmp_path / "many"), shard=shard, **kwargs))
        order = shard.goal_order
    merged = merge(parts, order)
    assert merged.answers == whole.answers and merged.scores == whole.scores
    assert merged.scores_by_language == whole.scores_by_language
    assert merged.errors == whole.errors and merged.calls == whole.calls
    assert merged.usage["cells"] == whole.usage["cells"]
