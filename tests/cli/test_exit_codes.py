"""The exit code of each class of failure, through the command line (see `gacc_hf.errors`):
0 success, 1 integrity, 2 bad input / configuration / environment, 3 model failures, 4 a bug."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gacc_hf.cli import main
from gacc_hf.protocol import CompressorInput
from gacc_hf.run.cache import CACHE_FILENAME, Cache
from tests.helpers.cli import ROWS, outcome, run_args
from tests.helpers.fs import run_read_only

QUESTION = ROWS[0]["questions"][0]["question"]


class Cheat:
    """A compressor that writes a held-out question (read from the data file on its own) into its memory."""

    revision = "cheat-1"

    def __call__(self, item: CompressorInput) -> str:
        return QUESTION


class Broken:
    """A compressor whose every call fails."""

    revision = "broken-1"

    def __call__(self, item: CompressorInput) -> str:
        raise RuntimeError("the model ran out of memory")


class Buggy:
    """A compressor that cannot even be built: a bug, not bad input."""

    def __init__(self) -> None:
        raise ZeroDivisionError("division by zero in __init__")


def test_0_success(tmp_path, capsys):
    code, out, err = outcome(run_args(tmp_path), capsys)
    assert code == 0 and "results:" in out and err == ""


def test_1_an_integrity_counter_is_not_0(tmp_path, capsys):
    code, _out, _ = outcome(run_args(tmp_path, "--compressors", "import:tests.cli.test_exit_codes:Cheat"), capsys)
    assert code == 1
    assert json.loads((tmp_path / "out" / "results.json").read_text())["integrity"]["exposures"] > 0


def _write_file(path: Path) -> Path:
    path.write_text("not a folder")
    return path


def _bad_cache_file(tmp_path: Path) -> Path:
    folder = tmp_path / "badcache"
    folder.mkdir()
    (folder / CACHE_FILENAME).write_bytes(os.urandom(4096))
    return folder


def _other_schema(tmp_path: Path) -> Path:
    folder = tmp_path / "oldcache"
    Cache(folder).close()
    db = sqlite3.connect(folder / CACHE_FILENAME)
    db.execute("UPDATE meta SET value='0' WHERE name='schema_version'")
    db.commit()
    db.close()
    return folder


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# name: (extra run options given the test folder, text of the one error line)
BAD_INPUT = {
    "empty compressor list": (lambda t: ["--compressors", ""], "--compressors names nothing"),
    "empty condition list": (lambda t: ["--conditions", ","], "--conditions names nothing"),
    "negative bootstrap": (lambda t: ["--bootstrap", "-5"], "--bootstrap must be >= 0, got -5"),
    "zero processes": (lambda t: ["--num-processes", "0"], "--num-processes must be >= 1, got 0"),
    "zero batch size": (lambda t: ["--batch-size", "0"], "--batch-size must be >= 1, got 0"),
    "negative seed": (lambda t: ["--seed", "-1"], "--seed must be >= 0, got -1"),  # numpy's bootstrap refuses it
    "empty reader": (lambda t: ["--reader", " "], "--reader is empty"),
    "ratio out of range": (lambda t: ["--ratios", "1.5"], "ratio must be in [0, 1], got 1.5"),
    "unknown method": (lambda t: ["--reader", "nonesuch"], "unknown reader 'nonesuch'"),
    "output folder is a file": (
        lambda t: ["--output-dir", str(_write_file(t / "f"))],
        "{t}/f: exists and is not a results folder; refusing to replace it",
    ),
    "output folder below a file": (
        lambda t: ["--output-dir", str(_write_file(t / "f") / "run")],
        "results folder (--output-dir) {t}/f/run cannot be created: {t}/f is a file",
    ),
    "cache folder is a file": (
        lambda t: ["--cache-dir", str(_write_file(t / "c"))],
        "cache folder (--cache-dir) {t}/c is a file, not a folder",
    ),
    "cache of random bytes": (
        lambda t: ["--cache-dir", str(_bad_cache_file(t))],
        "cache {t}/badcache/gacc-cache.sqlite3 is damaged or not a gacc cache",
    ),
    "cache of another schema": (
        lambda t: ["--cache-dir", str(_other_schema(t))],
        "cache {t}/oldcache/gacc-cache.sqlite3 has schema version 0",
    ),
    "missing data file": (lambda t: ["--data", str(t / "nope.jsonl")], "no such file or folder"),
    "invalid data": (lambda t: ["--data", str(_write_file(t / "x.jsonl"))], "x.jsonl: row 0, field '*': line 1"),
    "server unreachable": (
        lambda t: ["--reader", f"openai:m@http://127.0.0.1:{_free_port()}/v1?retries=0&timeout=2"],
        "failed after 1 attempts: ConnectError",
    ),
}


@pytest.mark.parametrize("case", BAD_INPUT)
def test_2_bad_input_configuration_or_environment_is_one_line_before_any_work(case, tmp_path, capsys):
    extra, message = BAD_INPUT[case]
    code, _out, err = outcome(run_args(tmp_path, *extra(tmp_path)), capsys)
    assert code == 2, err
    lines = err.splitlines()
    # one line; bad data: one line per problem under a count
    assert len(lines) == (2 if case == "invalid data" else 1) and lines[0].startswith("gacc run: error: "), err
    assert message.format(t=tmp_path) in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_2_a_read_only_results_folder_is_refused_before_any_work(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    cmd = [sys.executable, "-m", "gacc_hf", *run_args(tmp_path, "--output-dir", str(ro / "run"))]
    proc = run_read_only(ro, cmd)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"gacc run: error: results folder (--output-dir) {ro}/run is not writable ({ro}: Read-only file system)"
    ]
    assert not (tmp_path / "cache").exists()  # refused before anything was computed or stored


def test_2_a_read_only_warm_cache_is_fine(tmp_path, capsys):
    assert main(run_args(tmp_path)) == 0
    capsys.readouterr()
    out = tmp_path / "out2"
    cmd = [sys.executable, "-m", "gacc_hf", *run_args(tmp_path, "--output-dir", str(out))]
    proc = run_read_only(tmp_path / "cache", cmd)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "results.json").read_text())["calls"] == {"compressor": 0, "reader": 0, "judge": 0}


def test_2_data_validate_and_other_commands(tmp_path, capsys):
    code, out, _ = outcome(["data", "validate", str(_write_file(tmp_path / "x.jsonl"))], capsys)
    assert code == 2 and out.endswith("1 problem(s) in " + str(tmp_path / "x.jsonl") + "\n")
    code, _, err = outcome(["report", str(tmp_path / "no-run")], capsys)
    assert code == 2 and err.count("\n") == 1 and "no-run" in err
    with pytest.raises(SystemExit) as info:  # argparse: an unparsable value
        main(["run", "--ratios", "half"])
    assert info.value.code == 2
    assert "ratios must be comma-separated numbers" in capsys.readouterr().err


def test_3_model_failures_recorded_or_stopping_the_run(tmp_path, capsys):
    broken = ["--compressors", "import:tests.cli.test_exit_codes:Broken"]
    code, _, err = outcome(run_args(tmp_path, *broken, "--on-error", "record"), capsys)
    assert code == 3 and "2 model failure(s) recorded; rerun the same command with --overwrite to retry them" in err
    assert len(json.loads((tmp_path / "out" / "results.json").read_text())["errors"]) == 2
    code, _, err = outcome(run_args(tmp_path, *broken, "--on-error", "record"), capsys)
    assert code == 2 and "holds another run (results.json); pass --overwrite" in err  # why the hint names it
    code, _, err = outcome(run_args(tmp_path, *broken, "--on-error", "record", "--overwrite"), capsys)
    assert code == 3 and "2 model failure(s) recorded; rerun the same command to retry them" in err  # retried
    code, _out, err = outcome(
        run_args(tmp_path, *broken, "--on-error", "raise", "--output-dir", str(tmp_path / "o2")), capsys
    )
    assert code == 3 and err.count("\n") == 1
    assert "compressor 'Broken' failed on goal_id=" in err and "RuntimeError: the model ran out of memory" in err


def test_3_without_an_output_dir_the_same_command_retries(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # each run gets its own folder under runs/
    argv = run_args(tmp_path, "--compressors", "import:tests.cli.test_exit_codes:Broken", "--on-error", "record")
    del argv[argv.index("--output-dir") : argv.index("--output-dir") + 2]
    for _ in range(2):
        code, _, err = outcome(argv, capsys)
        assert code == 3 and err.endswith("2 model failure(s) recorded; rerun the same command to retry them\n")
    assert len([p for p in (tmp_path / "runs").iterdir() if not p.is_symlink()]) == 2


def test_4_a_bug_prints_its_traceback(tmp_path, capsys):
    code, _, err = outcome(run_args(tmp_path, "--compressors", "import:tests.cli.test_exit_codes:Buggy"), capsys)
    assert code == 4
    assert "Traceback (most recent call last)" in err and "ZeroDivisionError" in err
    assert err.splitlines()[-1] == "gacc run: error: unexpected ZeroDivisionError: division by zero in __init__"


def test_verbose_shows_the_traceback_of_an_expected_error(tmp_path, capsys):
    code, _, err = outcome([*run_args(tmp_path, "--bootstrap", "-1"), "--verbose"], capsys)
    assert code == 2 and "Traceback (most recent call last)" in err
    assert err.splitlines()[-1] == "gacc run: error: --bootstrap must be >= 0, got -1"


def test_a_process_exit_code_and_a_closed_pipe(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "gacc_hf", *run_args(tmp_path, "--num-processes", "0")], capture_output=True, text=True
    )
    assert proc.returncode == 2 and proc.stderr == "gacc run: error: --num-processes must be >= 1, got 0\n"
    for command in ("data stats sample", "publish --dry-run --repo-id me/model --dataset-repo me/data {run}"):
        if "{run}" in command:
            assert main(run_args(tmp_path)) == 0
        shell = f"{sys.executable} -m gacc_hf {command.format(run=tmp_path / 'out')} | head -c 10"
        proc = subprocess.run(["bash", "-o", "pipefail", "-c", shell], capture_output=True, text=True)
        assert proc.returncode == 0 and proc.stderr == "" and len(proc.stdout) == 10, proc.stderr


def test_credentials_in_a_method_url_are_refused_before_a_launch_even_verbose(tmp_path, capsys):
    spec = "openai:m@http://admin:hunter2-secret@127.0.0.1:9/v1"
    for extra in (["--num-processes", "2"], ["--verbose"]):
        code, out, err = outcome(run_args(tmp_path, "--reader", spec, *extra), capsys)
        assert code == 2 and "hunter2" not in out + err and "admin" not in out + err
        assert err.splitlines()[-1] == (
            "gacc run: error: --reader openai:m@http://***@127.0.0.1:9/v1: credentials in a URL are never sent; "
            "remove them (an openai: server's key goes in $OPENAI_API_KEY)"
        )
    assert "Traceback" in err  # --verbose: the traceback, redacted too
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()
