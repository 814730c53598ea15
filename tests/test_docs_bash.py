"""The docs test's bash runner: a server started with `&` is waited for and stopped by `kill %N`, and a block that
leaves one running, a job that fails to start or to stop cleanly, or a command with the wrong exit is refused."""

from __future__ import annotations

import pytest

from tests.helpers.docs_bash import run_bash


def test_a_server_started_in_the_background_serves_the_commands_after_it_and_is_stopped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    block = (
        "gacc serve-test --port 0 &   # a server\n"
        "gacc --version\n"
        "gacc run --preset rules --data synthetic:contexts=2 --max-calls 1 \\\n"
        "     --cache-dir c --output-dir o          # exits 3\n"
        "kill %1\n"
    )
    assert run_bash(block, "block") == 3  # the three gacc commands (kill is not one)


def test_a_server_left_running_is_killed_and_refused():
    with pytest.raises(AssertionError, match="still running at the end of the block: kill it there"):
        run_bash("gacc serve-test --port 0 &\n", "block")


def test_a_job_that_never_starts_or_a_wrong_exit_is_refused():
    with pytest.raises(AssertionError, match=r"`gacc serve-test --port 70000 &` ended before its first line: "):
        run_bash("gacc serve-test --port 70000 &\n", "block")
    with pytest.raises(AssertionError, match=r"`gacc --version   # exits 3` exited 0, not 3"):
        run_bash("gacc --version   # exits 3\n", "block")
    with pytest.raises(AssertionError, match="only gacc commands"):
        run_bash("ls\n", "block")
