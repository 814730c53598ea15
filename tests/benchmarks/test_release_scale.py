"""benchmarks/release_scale.py end to end on a sliver of the release's shape (slow: several `gacc run` children)."""

import json

import pytest

from benchmarks.release_data import release_rows, shape, spread
from benchmarks.release_scale import release_scale
from gacc_hf.data.schema import find_problems


def test_the_release_shape_is_exact_and_valid_at_any_fraction():
    assert shape(1.0) == {"contexts": 281, "goals": 500, "questions": 2571, "chinese": 56}
    assert shape(0.01) == {"contexts": 3, "goals": 5, "questions": 26, "chinese": 1}
    rows = release_rows(0.01)
    assert find_problems(rows) == []
    assert len({r["context_id"] for r in rows}) == 3 and len(rows) == 5
    assert sum(len(r["questions"]) for r in rows) == 26
    assert sum(r["source"].endswith("-zh") for r in {r["context_id"]: r for r in rows}.values()) == 1


def test_spread_refuses_a_total_out_of_bounds():
    import random

    with pytest.raises(ValueError, match="7 cannot be spread over 2 items of 1-3"):
        spread(2, 7, (1, 3), random.Random(0))
    assert sorted(spread(2, 6, (1, 3), random.Random(0))) == [3, 3]


@pytest.mark.slow
def test_a_sliver_runs_end_to_end_and_the_killed_run_resumes_with_only_the_missing_requests(tmp_path, capsys):
    figures = release_scale(fraction=0.005, median=0.5, work=tmp_path, bootstrap=0)
    cold, resumed = figures["cold"], figures["resumed"]
    calls = json.loads((tmp_path / "cold" / "results.json").read_text())["calls"]
    # the servers saw every served call the run counted (its rule compressors run in the process)
    assert cold["per_role"]["reader"] == calls["reader"] and cold["per_role"]["judge"] == calls["judge"]
    assert resumed["killed"] and 0 < resumed["rerun"] < cold["total"]
    # the rerun asks the reader and the judge for exactly what the killed run had not stored
    assert resumed["missing_only"] and resumed["extra"] >= 0
    assert resumed["same"], capsys.readouterr().out
