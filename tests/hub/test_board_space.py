"""A board as a static Space and the `gacc board` / `gacc publish --board` commands: the README names every run and
its data, every page is rendered again from the verified runs (a page edited by hand never leaves), a run that
breaks the protocol is refused, the dry run writes what a real publish would push, and offline a real publish stops
before anything in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from huggingface_hub import SpaceCard

from gacc_hf.hub.board_space import board_card, board_space_plan
from gacc_hf.hub.commit import PublishError
from gacc_hf.results.board import write_board
from gacc_hf.results.board_data import BoardRun
from gacc_hf.results.layout import ResultsError
from tests.helpers.cli import outcome
from tests.results.test_board_data import write_run


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("runs")
    return [write_run(root / "first", ["truncate"]), write_run(root / "second", ["goal-lines"], ratios=[0.5])]


@pytest.fixture
def board(runs, tmp_path) -> Path:
    return write_board(runs, tmp_path / "board")[0].parent


def _files(plan) -> dict[str, bytes]:
    """Each file of the plan and its bytes (generated, or rendered to a file)."""
    data = {op.path_in_repo: op.path_or_fileobj for op in plan.operations}
    return {k: v if isinstance(v, bytes) else Path(v).read_bytes() for k, v in data.items()}


def test_the_readme_names_every_run_and_its_data(board, runs, tmp_path):
    plan, notes = board_space_plan(board, "me/board", tmp_path / "stage")
    files = _files(plan)
    assert list(files) == ["README.md", "index.html", "runs/first/report.html", "runs/second/report.html"]
    card = SpaceCard(files["README.md"].decode("utf-8"))
    assert (card.data.sdk, card.data.app_file) == ("static", "index.html")
    fingerprint = json.loads((runs[0] / "results.json").read_text())["config"]["data"]["fingerprint"]
    for name, method in (("first", "truncate"), ("second", "goal-lines")):
        line = next(line for line in card.text.splitlines() if line.startswith(f"| [{name}](runs/{name}/report.html)"))
        assert method in line and fingerprint in line
    assert (plan.repo_id, plan.repo_type, notes) == ("me/board", "space", [])


def test_pages_edited_by_hand_never_reach_the_space(board, tmp_path):
    before = _files(board_space_plan(board, "me/board", tmp_path / "before")[0])
    for page in (board / "index.html", board / "runs" / "first" / "report.html"):
        page.write_text(page.read_text() + "<p>Edited by hand: 0.99 on everything.</p>")
    after = _files(board_space_plan(board, "me/board", tmp_path / "after")[0])
    assert after == before and b"Edited by hand" not in b"".join(after.values())
    assert before["index.html"] != (board / "index.html").read_bytes()


def test_a_run_that_breaks_the_protocol_is_refused_by_name(runs, tmp_path):
    broken = shutil.copytree(runs[1], tmp_path / "broken")
    payload = json.loads((broken / "results.json").read_text())
    payload["integrity"]["budget_violations"] = 1
    (broken / "results.json").write_text(json.dumps(payload))
    folder = write_board([runs[0], broken], tmp_path / "board")[0].parent  # a local board shows it
    with pytest.raises(PublishError, match=r"broken: integrity counters are not 0 \(budget_violations = 1\)"):
        board_space_plan(folder, "me/board", tmp_path / "stage")


def test_a_folder_that_is_not_a_board_is_refused(runs, tmp_path):
    with pytest.raises(ResultsError, match=r"not a board \(no index.html and board.json"):
        board_space_plan(runs[0], "me/board", tmp_path / "stage")


def test_the_board_folder_holds_a_board_or_nothing(runs, tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(ResultsError, match=r"mine: exists and is not a board"):
        write_board(runs, tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
    first = write_board(runs, tmp_path / "board")[0]
    again = write_board(runs[:1], tmp_path / "board")[0]  # a board is replaced whole
    assert first == again and not (tmp_path / "board" / "runs" / "second").exists()


def test_gacc_board_prints_the_page_and_refuses_bad_input_in_one_line(runs, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GACC_HF_CACHE", str(tmp_path / "cache"))  # its seals, not in the user's cache
    code, out, err = outcome(["board", str(runs[0]), str(runs[0]), "--output-dir", str(tmp_path / "b")], capsys)
    assert (code, out) == (0, f"{tmp_path / 'b' / 'index.html'}\n")
    assert err == f"note: {runs[0]}: the same run as {runs[0]}; on the board once\n"
    code, out, err = outcome(["board", "--output-dir", str(tmp_path / "c")], capsys)
    assert code == 2 and err.count("\n") == 1 and "a board needs at least one results folder" in err
    assert not (tmp_path / "c").exists()
    code, out, err = outcome(["board", str(runs[0]), "--jobs", "0", "--output-dir", str(tmp_path / "c")], capsys)
    assert (code, out) == (2, "") and "--jobs 0: runs verified at once must be 1 or more" in err


def test_a_dry_run_prints_the_plan_and_the_readme_and_writes_the_files(board, tmp_path, capsys):
    args = ["publish", "--board", str(board), "--space", "me/board", "--dry-run-dir", str(tmp_path / "out")]
    code, out, _ = outcome(args, capsys)
    assert code == 0 and out.startswith("repo: me/board (space), 4 file(s):\n  + README.md")
    assert "==> me/board:README.md <==" in out and "| [second](runs/second/report.html) |" in out
    written = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.*"))
    assert written == [f"spaces/me/board/{p}" for p in sorted(["README.md", "index.html", *_pages()])]


def _pages() -> list[str]:
    return ["runs/first/report.html", "runs/second/report.html"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--space", "board"], "--space 'board': a Space is named OWNER/NAME"),
        ([], "--board needs --space OWNER/NAME"),
        (["--space", "me/b", "--repo-id", "me/m"], "--board publishes a board to a Space alone; --repo-id belong"),
    ],
)
def test_publish_board_refuses_a_wrong_command_line(board, capsys, extra, message):
    code, out, err = outcome(["publish", "--board", str(board), "--dry-run", *extra], capsys)
    assert (code, out) == (2, "") and message in err and err.count("\n") == 1


def test_offline_a_real_publish_stops_before_anything(board, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, out, err = outcome(["publish", "--board", str(board), "--space", "me/board"], capsys)
    assert (code, out) == (2, "") and "HF_HUB_OFFLINE is set" in err and err.count("\n") == 1


def test_a_run_publish_still_needs_its_folder_and_model(capsys):
    code, out, err = outcome(["publish", "--repo-id", "me/m", "--dry-run"], capsys)
    assert (code, out) == (2, "") and "publish needs RUN_DIR and --repo-id OWNER/NAME" in err


def test_the_readme_keeps_a_marked_up_name_as_text_in_its_table():
    config = {
        "compressors": [{"name": "<script>x</script>|a\nb"}],
        "reader": {"name": "fields"},
        "judge": {"name": "exact"},
        "data": {"spec": "mine", "fingerprint": "sha256:ab"},
    }
    card = board_card([BoardRun(Path("r"), "r", {"config": config}, [])])
    (line,) = [line for line in card.splitlines() if line.startswith("| [r]")]
    assert "&lt;script>x&lt;/script>\\|a b; reader fields, judge exact" in line and "<script>" not in card
    assert line.count(" | ") == 2 and "mine (sha256:ab)" in line  # three cells, the data named


def test_gacc_board_takes_auto_or_a_whole_number_of_jobs(runs, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GACC_HF_CACHE", str(tmp_path / "cache"))
    for jobs in ("auto", "1"):
        code, out, _ = outcome(["board", str(runs[0]), "--jobs", jobs, "--output-dir", str(tmp_path / jobs)], capsys)
        assert code == 0 and out.endswith("index.html\n")
    for bad in ("abc", "-1", "²", "1.5"):
        code, out, err = outcome(["board", str(runs[0]), "--jobs", bad, "--output-dir", str(tmp_path / "x")], capsys)
        assert (code, out) == (2, "") and err.count("\n") == 1 and f"--jobs {bad}: runs verified at once" in err
    assert not (tmp_path / "x").exists()
