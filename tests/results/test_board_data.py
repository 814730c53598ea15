"""The board's rows and checks: which runs may stand on one board, one row per scored cell, the Pareto rank by hand,
the memory tokens read per question, and the bad inputs (no run, a folder that is not a run, a run edited by hand,
two data sets, two protocols, the same run twice)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from gacc_hf.data.synthetic import synthetic_rows
from gacc_hf.results.board import read_board, render_board, run_page_path, write_board
from gacc_hf.results.board_data import (
    _compressor_seconds,
    board_rows,
    load_runs,
    memory_tokens,
    pareto_ranks,
)
from gacc_hf.results.folder import write_results
from gacc_hf.results.layout import ResultsError, RunResults
from tests.helpers.paths import ROOT
from tests.helpers.runs import rules_run

ROWS = synthetic_rows(seed=1, contexts=3)


def write_run(folder: Path, compressor, rows=ROWS, **kw) -> Path:
    """A seconds-long rules run on `rows`, written as a results folder."""
    kw = {"ratios": [0.25, 0.5], "conditions": ("own", "full", "closed"), "n_bootstrap": 50, **kw}
    write_results(rules_run(rows, compressor=compressor, **kw), folder)
    return folder


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("board")
    return {
        "a": write_run(root / "a", ["truncate", "goal-lines"]),
        "b": write_run(root / "b", ["truncate"], ratios=[0.25]),
        "other": write_run(root / "other", ["truncate"], rows=synthetic_rows(seed=2, contexts=2)),
    }


def _cells(folder: Path) -> int:
    return len(json.loads((folder / "results.json").read_text())["scores"])


def test_one_row_per_scored_cell_of_every_run(runs):
    board, notes = load_runs([runs["a"], runs["b"]])
    rows = board_rows(board)
    # a: 2 compressors x own x 2 ratios + full + closed = 6; b: 1 x 1 + full + closed = 3 (counted from the options)
    assert len(rows) == _cells(runs["a"]) + _cells(runs["b"]) == 9 and notes == []
    assert {r["run"] for r in rows} == {"a", "b"}
    truncate = next(r for r in rows if r["run"] == "a" and r["compressor"] == "truncate" and r["ratio"] == 0.25)
    assert (truncate["reader"], truncate["judge"], truncate["bound"]) == ("fields", "exact", "")
    assert truncate["revision"] and truncate["micro_ci"] is not None and truncate["tokens"] > 0
    bounds = {(r["compressor"], r["bound"]) for r in rows if r["bound"]}
    assert bounds == {("full-context", "ceiling"), ("closed-book", "floor")}
    assert all(r["pareto_tokens"] is None for r in rows if r["bound"])


def test_one_run_is_a_board_of_its_own_cells(runs):
    board, _ = load_runs([runs["b"]])
    assert len(board_rows(board)) == _cells(runs["b"]) == 3


def test_the_same_run_given_twice_is_taken_once_and_named_once(runs, tmp_path):
    copy = shutil.copytree(runs["b"], tmp_path / "copy")
    board, notes = load_runs([runs["b"], runs["a"], runs["b"], copy])
    assert [r.label for r in board] == ["b", "a"]
    assert notes == [
        f"{runs['b']}: the same run as {runs['b']}; on the board once",
        f"{copy}: the same run as {runs['b']}; on the board once",
    ]


def test_no_run_is_refused():
    with pytest.raises(ResultsError, match=r"a board needs at least one results folder"):
        load_runs([])


def test_a_folder_that_is_not_a_results_folder_is_refused(tmp_path):
    (tmp_path / "notes").mkdir()
    with pytest.raises(ResultsError, match=r"notes: not a results folder \(no results.json\)"):
        load_runs([tmp_path / "notes"])


def test_a_run_edited_by_hand_is_refused_as_gacc_report_refuses_it(runs, tmp_path):
    folder = shutil.copytree(runs["b"], tmp_path / "edited")
    payload = json.loads((folder / "results.json").read_text())
    payload["scores"][-1]["micro"] = 0.99
    (folder / "results.json").write_text(json.dumps(payload))
    with pytest.raises(ResultsError, match=r"edited/results.json: scores at .* differ from answers.parquet in micro"):
        load_runs([runs["a"], folder])


def test_runs_on_different_data_are_refused_unless_allowed_then_grouped(runs):
    with pytest.raises(ResultsError, match=r"the runs are on different data .*--allow-mixed-data"):
        load_runs([runs["a"], runs["other"]])
    board, _ = load_runs([runs["a"], runs["other"]], allow_mixed_data=True)
    rows = board_rows(board)
    assert len({r["data"] for r in rows}) == 2
    # ranked within its own data only: a's ranks are those of a board of `a` alone
    alone = board_rows(load_runs([runs["a"]])[0])
    assert [r["pareto_tokens"] for r in rows if r["run"] == "a"] == [r["pareto_tokens"] for r in alone]
    assert min(r["pareto_tokens"] for r in rows if r["run"] == "other" and not r["bound"]) == 1


def test_runs_of_different_protocol_versions_are_refused_by_name(runs, tmp_path):
    folder = shutil.copytree(runs["b"], tmp_path / "older")
    payload = json.loads((folder / "results.json").read_text())
    payload["config"]["protocol_version"] = "gacc-0"
    (folder / "results.json").write_text(json.dumps(payload))
    with pytest.raises(ResultsError, match=r"different protocol versions .*older: protocol gacc-0"):
        load_runs([runs["a"], folder])


def _row(name: str, micro: float, tokens: float, condition: str = "own", data: str = "d") -> dict:
    return {"name": name, "micro": micro, "tokens": tokens, "condition": condition, "data": data, "bound": ""}


def test_the_pareto_ranks_equal_those_found_by_hand():
    # Micro against tokens read, higher Micro and fewer tokens better:
    #   A (0.50, 100)  B (0.40, 50)  C (0.40, 80)  D (0.30, 50)  E (0.60, 300)  F (0.20, 20)  G (0.50, 100)
    # front 1: F (fewest tokens), B (beats D: same tokens, more Micro; beats C: same Micro, fewer tokens),
    #          A and G (equal, neither beats the other), E (highest Micro); front 2: C and D; a bound: no rank;
    # H on another condition is alone, so first
    rows = [
        _row("A", 0.5, 100),
        _row("B", 0.4, 50),
        _row("C", 0.4, 80),
        _row("D", 0.3, 50),
        _row("E", 0.6, 300),
        _row("F", 0.2, 20),
        _row("G", 0.5, 100),
        {**_row("full", 0.9, 1000), "bound": "ceiling"},
        _row("H", 0.1, 900, condition="none"),
    ]
    pareto_ranks(rows, "tokens")
    assert {r["name"]: r["pareto_tokens"] for r in rows} == {
        "A": 1, "B": 1, "C": 2, "D": 2, "E": 1, "F": 1, "G": 1, "full": None, "H": 1
    }  # fmt: skip


def test_a_third_front_and_a_missing_axis():
    rows = [_row("top", 0.9, 10), _row("mid", 0.5, 20), _row("low", 0.1, 30), {**_row("none", 0.5, 0), "tokens": None}]
    pareto_ranks(rows, "tokens")
    assert [r["pareto_tokens"] for r in rows] == [1, 2, 3, None]


def test_memory_tokens_read_are_weighted_by_the_questions_that_read_each_memory():
    ledger = [
        {"compressor": "c", "condition": "own", "ratio": 0.2, "reencoded_tokens": 10, "n_questions": 3},
        {"compressor": "c", "condition": "own", "ratio": 0.2, "reencoded_tokens": 30, "n_questions": 1},
        {"compressor": "c", "condition": "none", "ratio": 0.2, "reencoded_tokens": 7},  # no count: weight 1
    ]
    # (10 * 3 + 30 * 1) / 4 = 15; the none cell 7
    assert memory_tokens(ledger) == {("c", "own", 0.2): 15.0, ("c", "none", 0.2): 7.0}


def test_the_recorded_board_is_the_board_of_the_recorded_runs(tmp_path):
    # docs/results/board: every recorded run, on two data sets (the sample; the bilingual sample), grouped
    board = ROOT / "docs" / "results" / "board"
    runs, notes = read_board(board, tmp_path)
    assert [r.label for r in runs] == ["main", "curve", "baselines", "bilingual", "judges", "survival"] and notes == []
    assert render_board(runs) == (board / "index.html").read_text(encoding="utf-8")
    for run in runs:  # each page as `gacc report` wrote it beside its run
        page = (tmp_path / run_page_path(run.label)).read_bytes()
        assert page == (board / run_page_path(run.label)).read_bytes() == (run.path / "report.html").read_bytes()


def test_runs_verified_on_several_processes_give_the_same_board(runs, tmp_path):
    one = write_board([runs["a"], runs["b"]], tmp_path / "one")[0]
    two = write_board([runs["a"], runs["b"]], tmp_path / "two", jobs=2)[0]
    assert sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*.*")) == sorted(
        p.relative_to(tmp_path / "two") for p in (tmp_path / "two").rglob("*.*")
    )
    for page in ("index.html", "runs/a/report.html", "runs/b/report.html"):
        assert (one.parent / page).read_bytes() == (two.parent / page).read_bytes()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "results.json").write_text("{}")
    for order in ([runs["a"], tmp_path / "notes"], [tmp_path / "notes", runs["a"]]):  # failed here, then elsewhere
        with pytest.raises(ResultsError, match=r"notes/results.json: no schema_version"):  # as it was raised
            write_board(order, tmp_path / "three", jobs=2)


def test_compressor_seconds_are_per_question_served_whatever_the_readers():
    rows = [
        {"compressor": "c", "question_id": q, "condition": "own", "ratio": 0.2, "reader": reader}
        for q in ("q1", "q2")
        for reader in ("r1", "r2")  # two readers read each memory: the compressor served 2 questions, not 4
    ]
    run = RunResults({"method_seconds": {"compressor": {"c": 3.0, "unused": 0.0}}}, rows, [])
    assert _compressor_seconds(run) == {"c": 1.5}
    assert _compressor_seconds(RunResults({"method_seconds": None}, rows, [])) == {}  # not recorded: no figure


class _Terminal:
    """A stream that says it is a terminal, as a user's stderr is, keeping what is written."""

    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_bar_on_a_terminal_counts_the_runs_checked(runs, tmp_path, monkeypatch, jobs):
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    write_board([runs["a"], runs["b"]], tmp_path / "board", jobs=jobs, progress=True)
    assert "runs checked" in terminal.text and "2/2" in terminal.text


def test_no_bar_off_a_terminal_or_unasked(runs, tmp_path, monkeypatch, capsys):
    write_board([runs["a"], runs["b"]], tmp_path / "piped", progress=True)  # capsys's stderr is no terminal
    assert "runs checked" not in capsys.readouterr().err
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    write_board([runs["a"], runs["b"]], tmp_path / "unasked")
    assert terminal.text == ""


def test_auto_jobs_read_the_rows_each_run_records(runs, tmp_path):
    from gacc_hf.results.board_data import AUTO_ROWS, _answer_rows, auto_jobs

    recorded = pq.read_metadata(runs["a"] / "answers.parquet").num_rows  # counted from the file, not results.json
    assert _answer_rows(runs["a"]) == recorded
    assert _answer_rows(tmp_path) == 0  # no results.json: its checks will say so
    assert auto_jobs([recorded, recorded], 2) == 1  # a few hundred rows: one process
    assert auto_jobs([AUTO_ROWS // 2, AUTO_ROWS // 2], 2) == 2 and auto_jobs([AUTO_ROWS], 8) == 1


def test_auto_jobs_on_processes_give_the_same_board(runs, tmp_path, monkeypatch):
    one = write_board([runs["a"], runs["b"]], tmp_path / "one")[0]
    monkeypatch.setattr("gacc_hf.results.board_data.AUTO_ROWS", 1)  # these small runs counted as large
    auto = write_board([runs["a"], runs["b"]], tmp_path / "auto", jobs="auto")[0]
    assert one.read_bytes() == auto.read_bytes()


_LOADED = (
    "import sys, gacc_hf.results.board\n{then}\nprint(*(m for m in ('datasets', 'matplotlib') if m in sys.modules))"
)


@pytest.mark.parametrize(
    ("then", "loaded"),
    [("", ""), ("from gacc_hf.results.plots import drawing\nwith drawing(): pass", "matplotlib")],
)
def test_a_board_process_starts_without_datasets_or_matplotlib(then, loaded):
    # each process that checks runs imports the board (half a second less without the two); drawing imports one
    code = _LOADED.format(then=then)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == loaded
