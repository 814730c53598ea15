"""Seals: a board built again from runs already verified gives the same bytes without checking them again, and any
byte edited in a run, its page's plots, the code or the page's name is checked afresh (so every refusal still fires);
a run that warned, a seal cut short or edited, and a file changed during the checks are never taken from a seal."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest

from gacc_hf.results import board as board_module
from gacc_hf.results import seal
from gacc_hf.results.board import write_board
from gacc_hf.results.folder import verify_folder
from gacc_hf.results.layout import ResultsError
from tests.results.test_board_data import write_run


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("runs")
    return [write_run(root / "a", ["truncate", "goal-lines"]), write_run(root / "b", ["truncate"], ratios=[0.25])]


@pytest.fixture
def checks(monkeypatch) -> list[Path]:
    """The folders verified in this process (a seal taken skips them)."""
    seen: list[Path] = []

    def counted(path):
        seen.append(Path(path))
        return verify_folder(path)

    monkeypatch.setattr(board_module, "verify_folder", counted)
    return seen


def _bundle(board: Path) -> dict[str, bytes]:
    return {p.relative_to(board).as_posix(): p.read_bytes() for p in sorted(board.rglob("*")) if p.is_file()}


def _copies(runs: list[Path], root: Path) -> list[Path]:
    return [shutil.copytree(r, root / r.name) for r in runs]


def test_a_board_built_again_takes_its_runs_from_seals_and_gives_the_same_bytes(runs, tmp_path, checks):
    seals = tmp_path / "seals"
    plain = write_board(runs, tmp_path / "plain")[0].parent
    assert checks == runs and not seals.exists()  # no seals asked: none written
    first = write_board(runs, tmp_path / "first", seals=seals)[0].parent
    assert checks == [*runs, *runs] and len(list(seals.rglob("*.json"))) == 2  # one seal per run
    again = write_board(runs, tmp_path / "again", seals=seals)[0].parent
    assert checks == [*runs, *runs]  # nothing verified again
    assert _bundle(plain) == _bundle(first) == _bundle(again)
    on_two = write_board(runs, tmp_path / "two", jobs=2, seals=seals)[0].parent  # taken here: no process started
    assert checks == [*runs, *runs] and _bundle(on_two) == _bundle(plain)


def test_runs_with_a_seal_are_taken_here_and_the_others_verified_in_their_order(runs, tmp_path, checks):
    seals = tmp_path / "seals"
    write_board(runs[1:], tmp_path / "first", seals=seals)  # b sealed, a not
    checks.clear()
    mixed = write_board(runs, tmp_path / "mixed", jobs=2, seals=seals)[0].parent
    assert checks == runs[:1]  # a alone verified (here: one run left needs no process)
    assert _bundle(mixed) == _bundle(write_board(runs, tmp_path / "plain")[0].parent)


def _edit_score(folder: Path) -> None:
    payload = json.loads((folder / "results.json").read_text())
    payload["scores"][-1]["micro"] = 0.99
    (folder / "results.json").write_text(json.dumps(payload))


def _edit_answers(folder: Path) -> None:
    data = bytearray((folder / "answers.parquet").read_bytes())
    data[len(data) // 2] ^= 1
    (folder / "answers.parquet").write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("edit", "refused"),
    [
        (_edit_score, r"b/results.json: scores at .* differ from answers.parquet in micro"),
        (_edit_answers, r"b/answers.parquet: content does not match the sha256 recorded in results.json"),
    ],
)
def test_a_sealed_run_edited_by_hand_is_refused_as_gacc_report_refuses_it(runs, tmp_path, edit, refused):
    seals, copies = tmp_path / "seals", _copies(runs, tmp_path / "runs")
    write_board(copies, tmp_path / "first", seals=seals)
    edit(copies[1])
    with pytest.raises(ResultsError, match=refused):
        write_board(copies, tmp_path / "second", seals=seals)


def test_a_plot_edited_gives_a_page_with_the_new_plot(runs, tmp_path, checks):
    seals, copies = tmp_path / "seals", _copies(runs, tmp_path / "runs")
    write_board(copies, tmp_path / "first", seals=seals)
    png = copies[0] / "scores.png"
    png.write_bytes(png.read_bytes() + b"\0")  # not checked, but inlined in the page
    checks.clear()
    sealed = write_board(copies, tmp_path / "second", seals=seals)[0].parent
    assert checks == [copies[0]]  # that run alone is verified and rendered again
    assert _bundle(sealed) == _bundle(write_board(copies, tmp_path / "plain")[0].parent)


def test_another_code_or_page_name_finds_no_seal(runs, tmp_path, checks, monkeypatch):
    seals = tmp_path / "seals"
    write_board(runs[:1], tmp_path / "first", seals=seals)
    name = seal.seal_name(runs[0], "a")
    assert name == seal.seal_name(runs[0], "a") and name != seal.seal_name(runs[0], "a-2")
    monkeypatch.setattr(seal, "code_fingerprint", lambda: "another gacc-hf")
    assert seal.seal_name(runs[0], "a") != name
    checks.clear()
    write_board(runs[:1], tmp_path / "second", seals=seals)
    assert checks == runs[:1]


def test_a_seal_cut_short_or_edited_is_not_taken(runs, tmp_path, checks):
    seals = tmp_path / "seals"
    write_board(runs[:1], tmp_path / "first", seals=seals)
    (page,) = seals.rglob("*.html.z")
    (doc,) = seals.rglob("*.json")
    edited = json.loads(doc.read_text())
    edited["page_sha256"] = "0" * 64  # the page no longer the one the document names
    doc.write_text(json.dumps(edited))
    checks.clear()
    write_board(runs[:1], tmp_path / "second", seals=seals)  # sealed afresh
    assert checks == runs[:1]
    page.write_bytes(page.read_bytes()[:10])  # cut short
    checks.clear()
    write_board(runs[:1], tmp_path / "third", seals=seals)
    assert checks == runs[:1]
    write_board(runs[:1], tmp_path / "fourth", seals=seals)
    assert checks == runs[:1]  # sealed again by the third


def test_a_run_whose_checks_warned_is_never_sealed_and_warns_every_time(runs, tmp_path, monkeypatch):
    seals = tmp_path / "seals"

    def warned(path):
        warnings.warn("CIs this bootstrap does not reproduce", UserWarning, stacklevel=1)
        return verify_folder(path)

    monkeypatch.setattr(board_module, "verify_folder", warned)
    for out in ("first", "second"):
        with pytest.warns(UserWarning, match="CIs this bootstrap does not reproduce"):
            write_board(runs[:1], tmp_path / out, seals=seals)
    assert not list(seals.rglob("*.json"))


def test_a_file_changed_during_the_checks_gives_no_seal(runs, tmp_path, monkeypatch):
    seals, copies = tmp_path / "seals", _copies(runs[:1], tmp_path / "runs")

    def touched(path):
        run = verify_folder(path)
        (Path(path) / "config.yaml").write_text("written while the run was checked\n")
        return run

    monkeypatch.setattr(board_module, "verify_folder", touched)
    write_board(copies, tmp_path / "first", seals=seals)
    assert not list(seals.rglob("*.json"))


def test_gacc_board_keeps_seals_in_the_cache_folder_unless_told_not_to(runs, tmp_path, monkeypatch, capsys):
    from tests.helpers.cli import outcome

    monkeypatch.setenv("GACC_HF_CACHE", str(tmp_path / "cache"))
    code, _, _ = outcome(["board", str(runs[0]), "--no-seals", "--output-dir", str(tmp_path / "b")], capsys)
    assert code == 0 and not (tmp_path / "cache").exists()
    code, _, _ = outcome(["board", str(runs[0]), "--output-dir", str(tmp_path / "b")], capsys)
    assert code == 0 and len(list((tmp_path / "cache" / "verified").rglob("*.json"))) == 1


def test_a_cache_folder_that_cannot_be_written_leaves_the_board_as_without_seals(runs, tmp_path, checks):
    seals = tmp_path / "seals"
    seals.write_text("a file where the seals' folder would be\n")
    sealed = write_board(runs, tmp_path / "sealed", seals=seals)[0].parent
    assert checks == runs and _bundle(sealed) == _bundle(write_board(runs, tmp_path / "plain")[0].parent)
    assert not seal.write_seal("0" * 64, seals, seal.Sealed({}, [], b"page"))
