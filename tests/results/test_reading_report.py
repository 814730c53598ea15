"""The reading aids in report.md: outcomes, retention against the closed-book floor, the area under each curve."""

from __future__ import annotations

import pytest

from gacc_hf.cli import main
from gacc_hf.results.folder import read_folder
from gacc_hf.results.reading_report import curve_note, outcome_table, retention_note
from tests.helpers.results import real_run


@pytest.fixture(scope="module")
def bounded(tmp_path_factory):
    """Two compressors at three ratios with the full-context ceiling and the closed-book floor."""
    root = tmp_path_factory.mktemp("reading")
    real_run(root / "run", root / "cache", conditions=("own", "none", "full", "closed"))
    return read_folder(root / "run"), (root / "run" / "report.md").read_text()


def _section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def _micro(answers, compressor, condition, ratio=None):
    rows = [a for a in answers if (a["compressor"], a["condition"]) == (compressor, condition)]
    rows = [a for a in rows if ratio is None or a["ratio"] == ratio]
    return sum(a["correct"] for a in rows) / len(rows)


def test_retention_of_each_cell_is_its_gain_over_closed_by_the_room_to_full(bounded):
    run, text = bounded
    closed, full = _micro(run.answers, "closed-book", "closed"), _micro(run.answers, "full-context", "full")
    table = _section(text, "Retention")
    for compressor in ("truncate", "goal-lines"):
        cell = _micro(run.answers, compressor, "own", 0.25)
        line = next(x for x in table.splitlines() if x.startswith(f"| `{compressor}` | own | 0.25 |"))
        assert line.split(" | ")[3].startswith(f"{(cell - closed) / (full - closed):.3f} [")


def test_outcome_shares_are_counted_from_the_answer_rows_and_bounds_are_marked(bounded):
    run, text = bounded
    table = _section(text, "Outcomes")
    rows = [a for a in run.answers if (a["compressor"], a["condition"], a["ratio"]) == ("goal-lines", "own", 0.5)]
    line = next(x for x in table.splitlines() if x.startswith("| `goal-lines` | own | 0.5 |"))
    for k, name in enumerate(("right", "guessed", "missed", "lost")):
        share = sum(a["outcome"] == name for a in rows) / len(rows)
        assert line.split(" | ")[3 + k].startswith(f"{share:.3f}")
    assert "| `closed-book` (bound) | closed | 0 |" in table
    assert "not a score" in table


def test_auc_is_the_trapezoid_area_over_the_ratio_range(bounded):
    run, text = bounded
    m = [_micro(run.answers, "goal-lines", "own", r) for r in (0.1, 0.25, 0.5)]
    area = (0.15 * (m[0] + m[1]) / 2 + 0.25 * (m[1] + m[2]) / 2) / 0.4
    line = next(x for x in _section(text, "Score against budget").splitlines() if x.startswith("| `goal-lines` | own"))
    assert line.split(" | ")[2] == "0.1, 0.25, 0.5" and line.split(" | ")[3].startswith(f"{area:.3f} [")


def test_the_floor_is_drawn_and_labelled_as_the_floor(bounded):
    from gacc_hf.results.plots import scores_figure

    labels = [t.get_text() for t in scores_figure(bounded[0].scores).legends[0].get_texts()]
    assert "closed book (floor: empty memory)" in labels and not any("closed-book" in x for x in labels)


def test_closed_alone_runs_and_says_once_that_retention_is_undefined(tmp_path, capsys):
    out = tmp_path / "closed"
    args = ["run", "--preset", "rules", "--conditions", "closed", "--output-dir", str(out)]
    assert main([*args, "--cache-dir", str(tmp_path / "cache")]) == 0
    text = (out / "report.md").read_text()
    assert "retention: undefined (the run has no full condition to normalise by)" in capsys.readouterr().out
    assert text.count("Retention is undefined: the run has no full condition.") == 1
    rules = ["run", "--preset", "rules", "--output-dir", str(tmp_path / "rules"), "--cache-dir", str(tmp_path / "c")]
    assert main(rules) == 0 and "retention" not in capsys.readouterr().out  # no bound asked for: nothing to say
    assert read_folder(out).payload["retention"] == []


def test_one_ratio_has_no_curve_said_once(tmp_path):
    real_run(tmp_path / "run", tmp_path / "cache", ratios=(0.25,), conditions=("own",))
    text = (tmp_path / "run" / "report.md").read_text()
    assert text.count("no curve") == 1 and "## Score against budget" not in text
    assert curve_note([0.1, 0.2]) == "" and "r = 0.2" in curve_note([0.2])


def test_notes_and_tables_stay_empty_when_there_is_nothing_to_say():
    assert outcome_table([]) == ""
    assert retention_note([{"retention": 0.5}], ["own", "closed", "full"]) == ""
    assert retention_note([], ["closed", "full"]) == "Retention is undefined: the run has no method cell."


def test_per_language_outcomes_in_english_and_chinese(bounded):
    run, _ = bounded
    first = run.answers[0]["context_id"]
    rows = [dict(a, language="zh" if a["context_id"] == first else "en") for a in run.answers]
    from gacc_hf.scoring.shares import outcome_shares_by_language

    table = outcome_table(outcome_shares_by_language(rows, 0, 0), language=True)
    zh = [a for a in rows if a["language"] == "zh" and (a["compressor"], a["condition"]) == ("closed-book", "closed")]
    line = next(x for x in table.splitlines() if x.startswith("| zh | `closed-book` (bound) | closed |"))
    assert line.split(" | ")[7] == f"{sum(a['outcome'] == 'lost' for a in zh) / len(zh):.3f}"
