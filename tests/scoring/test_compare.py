"""Paired comparisons: alignment by (condition, ratio, question), refusals (other questions, data, reader, judge),
goal gaps, `gacc compare`."""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter

import pytest

from gacc_hf.cli import main
from gacc_hf.scoring.compare import (
    CompareError,
    align,
    condition_gaps,
    methods,
    paired_table,
    select,
    setup_differences,
    shared_cells,
)
from tests.helpers.results import real_run


def _row(goal, q, correct, condition="own", ratio=0.1, compressor="x"):
    return {
        "compressor": compressor,
        "condition": condition,
        "ratio": ratio,
        "goal_id": goal,
        "question_id": f"{goal}/{q}",
        "correct": correct,
    }


def test_hand_counted_difference():
    # goal g1: A gets 0/2, B gets 2/2; goal g2: both get 1/2 -> Micro 1/4 vs 3/4, Macro 0/2 vs 1/2
    a = [_row("g1", 1, False), _row("g1", 2, False), _row("g2", 1, True), _row("g2", 2, False)]
    b = [_row("g1", 1, True), _row("g1", 2, True), _row("g2", 1, True), _row("g2", 2, False)]
    (cell,) = paired_table(a, list(reversed(b)), n_boot=200)  # B's order does not matter: rows are aligned by key
    assert (cell["micro_a"], cell["micro_b"], cell["micro_diff"]) == (0.25, 0.75, 0.5)
    assert (cell["macro_a"], cell["macro_b"], cell["macro_diff"]) == (0.0, 0.5, 0.5)
    assert (cell["n_questions"], cell["n_goals"]) == (4, 2)
    assert cell["micro_diff_ci_low"] <= 0.5 <= cell["micro_diff_ci_high"]


def test_no_bootstrap_gives_no_interval():
    (cell,) = paired_table([_row("g", 1, True)], [_row("g", 1, False)], n_boot=0)
    assert cell["micro_diff"] == -1.0 and cell["micro_diff_ci_low"] is None


def test_different_questions_are_refused_with_examples():
    a = [_row("g1", 1, True), _row("g1", 2, True)]
    b = [_row("g1", 1, True), _row("g1", 3, True)]
    with pytest.raises(CompareError, match=r"only in A: 1 \(e\.g\. g1/2 \(own, r=0\.1\)\); only in B: 1 \(e\.g\. g1/3"):
        align(a, b)
    with pytest.raises(CompareError, match="only in B"):
        align(a, [*a, _row("g1", 1, True, ratio=0.2)])


def test_same_question_under_another_goal_or_twice_is_refused():
    with pytest.raises(CompareError, match="not the same dataset"):
        align([_row("g1", 1, True)], [{**_row("g1", 1, True), "goal_id": "g2"}])
    with pytest.raises(CompareError, match="twice"):
        align([_row("g1", 1, True), _row("g1", 1, False)], [_row("g1", 1, True)])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    both = real_run(root / "both", root / "cache")
    real_run(root / "truncate", root / "cache", compressor="truncate")
    real_run(root / "goal-lines", root / "cache", compressor="goal-lines")
    real_run(root / "small", root / "cache", compressor="goal-lines", contexts=5)
    return root, both


def _score(result, compressor, condition, ratio):
    (s,) = [s for s in result.scores if (s["compressor"], s["condition"], s["ratio"]) == (compressor, condition, ratio)]
    return s


def test_each_side_matches_the_run_scores(runs):
    _, result = runs
    rows = paired_table(select(result.answers, "truncate", "A"), select(result.answers, "goal-lines", "B"))
    assert len(rows) == 3 * 3  # conditions x ratios
    for cell in rows:
        a = _score(result, "truncate", cell["condition"], cell["ratio"])
        b = _score(result, "goal-lines", cell["condition"], cell["ratio"])
        assert (cell["micro_a"], cell["micro_b"]) == (a["micro"], b["micro"])
        assert (cell["macro_a"], cell["macro_b"]) == (a["macro"], b["macro"])


def test_goal_gaps_are_score_differences_and_zero_for_a_goal_blind_compressor(runs):
    _, result = runs
    gaps = condition_gaps(result.answers, n_boot=200)
    assert {(g["compressor"], g["gap"]) for g in gaps} == {
        (c, k) for c in ("truncate", "goal-lines") for k in ("own-none", "own-cross")
    }
    for g in gaps:
        other = g["gap"].split("-")[1]
        own, alt = (
            _score(result, g["compressor"], "own", g["ratio"]),
            _score(result, g["compressor"], other, g["ratio"]),
        )
        assert g["micro_diff"] == pytest.approx(own["micro"] - alt["micro"])
        if g["compressor"] == "truncate":  # truncation never reads the goal: same memory, same answers
            assert g["micro_diff"] == g["macro_diff"] == 0
    best = [g for g in gaps if g["compressor"] == "goal-lines" and g["ratio"] == 0.5]
    assert all(g["micro_diff_ci_low"] > 0 for g in best)


def test_select_needs_a_name_when_a_run_has_several(runs):
    _, result = runs
    with pytest.raises(CompareError, match="choose one with --a/--b"):
        select(result.answers, None, "run")
    with pytest.raises(CompareError, match="no compressor 'embed'"):
        select(result.answers, "embed", "run")


def test_cli_compares_two_runs_and_two_compressors_of_one_run(runs, capsys):
    root, _ = runs
    assert main(["compare", str(root / "truncate"), str(root / "goal-lines"), "--bootstrap", "100"]) == 0
    two_runs = capsys.readouterr().out
    assert main(["compare", str(root / "both"), "--a", "truncate", "--b", "goal-lines", "--bootstrap", "100"]) == 0
    one_run = capsys.readouterr().out
    assert two_runs.splitlines()[2:] == one_run.splitlines()[2:]  # same answers, same table (labels aside)
    assert len(_score_lines(one_run)) == 9


def _score_lines(out: str) -> list[str]:
    """The lines of the score table (above the outcome moves and the AUC table)."""
    table = out.split("outcomes A → B")[0]
    return [line for line in table.splitlines() if line.startswith(("own ", "none ", "cross "))]


def test_cli_compare_says_which_outcomes_moved_and_the_paired_auc(runs, capsys):
    root, result = runs
    assert main(["compare", str(root / "both"), "--a", "truncate", "--b", "goal-lines", "--bootstrap", "50"]) == 0
    out = capsys.readouterr().out
    grid = out.split("outcomes A → B, own r=0.5 (questions):\n")[1].split("\n\n")[0].splitlines()
    a = Counter(
        r["outcome"]
        for r in result.answers
        if r["compressor"] == "truncate" and r["condition"] == "own" and r["ratio"] == 0.5
    )
    assert {line.split()[0]: sum(map(int, line.split()[1:])) for line in grid[1:]} == {
        name: a.get(name, 0) for name in ("right", "guessed", "missed", "lost")
    }
    auc = [line.split() for line in out.split("Micro AUC over the ratios")[1].splitlines() if line.startswith("own ")]
    assert auc[0][:3] == ["own", "0.1,0.25,0.5", "120"]


def test_cli_compare_at_one_shared_ratio_says_once_there_is_no_curve(runs, tmp_path, capsys):
    root, _ = runs
    real_run(tmp_path / "one", root / "cache", compressor="goal-lines", ratios=(0.25,))
    assert main(["compare", str(root / "goal-lines"), str(tmp_path / "one"), "--bootstrap", "20"]) == 0
    out = capsys.readouterr().out
    assert out.count("no curve") == 1 and "one shared ratio only (r = 0.25)" in out


def test_cli_refuses_runs_over_different_questions(runs, capsys):
    root, _ = runs
    assert main(["compare", str(root / "goal-lines"), str(root / "small")]) == 2
    assert "not comparable: data:" in capsys.readouterr().err  # 5 contexts instead of 10: another fingerprint
    assert main(["compare", str(root / "goal-lines"), str(root / "small"), "--allow-different-data"]) == 2
    assert "do not cover the same questions" in capsys.readouterr().err
    assert main(["compare", str(root / "both")]) == 2
    assert "needs both --a and --b" in capsys.readouterr().err


def test_cli_compares_the_cells_both_runs_have_and_names_the_rest(runs, tmp_path, capsys):
    root, _ = runs
    real_run(tmp_path / "wide", root / "cache", compressor="goal-lines", ratios=(0.25, 0.75))
    assert main(["compare", str(root / "goal-lines"), str(tmp_path / "wide"), "--bootstrap", "50"]) == 0
    out = capsys.readouterr().out
    cells = [line.split()[:2] for line in _score_lines(out)]
    assert cells == [["own", "0.25"], ["none", "0.25"], ["cross", "0.25"]]
    a_only = [f"{c} r={r} (only in A)" for c in ("cross", "none", "own") for r in ("0.1", "0.5")]
    b_only = [f"{c} r=0.75 (only in B)" for c in ("cross", "none", "own")]
    assert f"skipped 9 cell(s) not in both runs: {'; '.join(a_only + b_only)}" in out.splitlines()


def test_runs_without_a_shared_cell_are_refused():
    a = [_row("g1", 1, True, ratio=0.1)]
    b = [_row("g1", 1, True, ratio=0.2)]
    with pytest.raises(CompareError, match=r"A and B have no \(condition, ratio\) cell in common: A has own r=0\.1"):
        shared_cells(a, b)
    rows_a, rows_b, skipped = shared_cells(a + b, b)
    assert rows_a == b and rows_b == b and skipped == ["own r=0.1 (only in A)"]


def _config(fingerprint="f" * 64, reader=("fields", "r1"), judge=("exact", "j1"), spec="sample"):
    data = None if fingerprint is None else {"spec": spec, "split": "test", "view": "judge", "fingerprint": fingerprint}
    return {
        "data": data,
        "reader": {"name": reader[0], "revision": reader[1]},
        "judge": {"name": judge[0], "revision": judge[1]},
    }


def test_setup_differences_name_what_differs():
    assert setup_differences(_config(), _config()) == ([], [])
    (data,), _ = setup_differences(_config(), _config("e" * 64, spec="synthetic"))
    assert data.startswith("data: A ran on ffffffffffffffff (sample") and "B on eeeeeeeeeeeeeeee (synthetic" in data
    (reader,), _ = setup_differences(_config(), _config(reader=("fields", "r2")))
    assert reader == "reader: A used fields@r1, B used fields@r2"
    (judge,), _ = setup_differences(_config(), _config(judge=("f1", "j1")))
    assert judge == "judge: A used exact@j1, B used f1@j1"
    assert setup_differences(_config(None), _config()) == ([], ["A records no data fingerprint"])


def _set_config(folder, **changes):
    doc = json.loads((folder / "results.json").read_text())
    for key, value in changes.items():
        doc["config"][key] = value
    (folder / "results.json").write_text(json.dumps(doc))


def test_cli_refuses_runs_on_other_data_or_another_reader_unless_told_to_warn(runs, tmp_path, capsys):
    root, _ = runs
    a, b = shutil.copytree(root / "truncate", tmp_path / "a"), shutil.copytree(root / "goal-lines", tmp_path / "b")
    _set_config(a, data=_config()["data"])
    _set_config(b, data=_config("e" * 64)["data"])
    assert main(["compare", str(a), str(b), "--bootstrap", "0"]) == 2
    err = capsys.readouterr().err
    assert "not comparable: data:" in err and "ffffffffffffffff" in err and "eeeeeeeeeeeeeeee" in err
    assert "--allow-different-data" in err
    assert main(["compare", str(a), str(b), "--bootstrap", "0", "--allow-different-data"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("WARNING, NOT COMPARABLE: data:") and "WARNING: data:" in err
    _set_config(b, data=_config()["data"], reader={"name": "fields", "revision": "other"})
    assert main(["compare", str(a), str(b), "--bootstrap", "0"]) == 2
    assert "not comparable: reader:" in capsys.readouterr().err
    _set_config(b, reader=json.loads((a / "results.json").read_text())["config"]["reader"])
    assert main(["compare", str(a), str(b), "--bootstrap", "0"]) == 0  # same data, reader, judge: no warning
    assert "WARNING" not in "".join(capsys.readouterr())


def test_ceilings_are_not_methods_when_a_compressor_is_picked():
    rows = [_row("g", 1, True, compressor="goal-lines"), {**_row("g", 1, True, compressor="oracle"), "ceiling": True}]
    rows.append(_row("g", 1, True, condition="full", compressor="full-context"))  # an older row: no ceiling flag
    assert methods(rows) == ["goal-lines"]
    assert {r["compressor"] for r in select(rows, None, "run")} == {"goal-lines"}


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--bootstrap", "100000000"], "--bootstrap 100000000 is over the cap of 1000000 resamples"),
        (["--bootstrap", "-3"], "--bootstrap must be >= 0, got -3"),
        (["--seed", "-1"], "--seed must be >= 0, got -1"),
    ],
)
def test_cli_checks_bootstrap_and_seed_as_run_does(runs, tmp_path, capsys, options, says):
    from tests.helpers.cli import outcome, run_args

    root, _ = runs
    started = time.monotonic()
    assert main(["compare", str(root / "truncate"), str(root / "goal-lines"), *options]) == 2
    assert time.monotonic() - started < 10  # refused before any resampling (10^8 resamples ran for minutes)
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and says in err
    _, _, run_err = outcome(run_args(tmp_path, *options, "--dry-run"), capsys)
    assert err.split(": error: ")[1] == run_err.split(": error: ")[1]  # one check, one message
    assert main(["compare", str(root / "truncate"), str(root / "goal-lines"), "--bootstrap", "0", "--seed", "0"]) == 0


def test_cli_names_a_recorded_bootstrap_past_the_cap(runs, tmp_path, capsys):
    root, _ = runs
    shutil.copytree(root / "truncate", tmp_path / "edited")
    doc = json.loads((tmp_path / "edited" / "results.json").read_text(encoding="utf-8"))
    doc["config"]["n_bootstrap"] = 100_000_000
    (tmp_path / "edited" / "results.json").write_text(json.dumps(doc), encoding="utf-8")
    assert main(["compare", str(tmp_path / "edited"), str(root / "goal-lines")]) == 2
    says = f"{tmp_path / 'edited'}: results.json config.n_bootstrap 100000000 is over the cap of 1000000 resamples"
    assert says in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "edited"), str(root / "goal-lines"), "--bootstrap", "10"]) == 0  # given
