"""`inspect eval gacc_hf/gacc_bench` from the command line (the task is found through the package's entry point),
its one-line errors, and `inspect view` opening its log in a real browser (Debian's headless Chromium)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log
from playwright.sync_api import sync_playwright

from gacc_hf import load_sample
from tests.helpers.paths import ROOT

INSPECT = str(Path(sys.executable).parent / "inspect")
CHROMIUM = Path("/usr/bin/chromium")
ENV = {**os.environ, "COLUMNS": "300", "HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}


def inspect_eval(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [INSPECT, "eval", "gacc_hf/gacc_bench", "--model", "mockllm/model", "--display", "plain", *args]
    return subprocess.run(command, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("inspect-logs")
    done = inspect_eval("--model-role", "reader=mockllm/model", "--limit", "2", "--log-dir", str(folder), cwd=folder)
    assert done.returncode == 0, done.stdout + done.stderr
    return folder


def test_the_command_line_finds_the_task_and_logs_its_scores(log_dir):
    [info] = list_eval_logs(str(log_dir))
    log = read_eval_log(info)
    assert (log.eval.task, log.status, len(log.samples)) == ("gacc_hf/gacc_bench", "success", 2)
    assert set(log.results.scores[0].metrics) >= {"micro", "macro", "budget_violations", "exposures"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "Model role 'reader' is required and was not specified."),
        (("--model-role", "reader=mockllm/model", "-T", "judge=grader"), "Model role 'grader' is required"),
        (("--model-role", "reader=mockllm/model", "-T", "condition=cross"), "condition 'cross' is not offered"),
        (("--model-role", "reader=mockllm/model", "-T", "ratio=1.5"), "retention ratio must be in [0, 1], got 1.5"),
    ],
)
def test_a_run_it_cannot_start_fails_in_one_line_before_any_model_call(tmp_path, args, message):
    done = inspect_eval(*args, "--log-dir", str(tmp_path), cwd=tmp_path)
    said = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert done.returncode == 1
    assert len(said) == 1 and message in said[0], said
    assert not list(tmp_path.glob("*.eval"))  # nothing ran


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(port: int, viewer: subprocess.Popen[str], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert viewer.poll() is None, viewer.stdout.read() if viewer.stdout else "inspect view exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"inspect view did not listen on 127.0.0.1:{port} within {seconds} s")


@pytest.fixture
def viewer(log_dir) -> Iterator[int]:
    port = _free_port()
    command = [INSPECT, "view", "--log-dir", str(log_dir), "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(command, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        _wait_for(port, process)
        yield port
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_inspect_view_opens_the_log(viewer, log_dir):
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: `make browser` (apt-get install chromium) installs it")
    log = read_eval_log(list_eval_logs(str(log_dir))[0], header_only=True)
    first_goal = load_sample()[0]["goal_id"]  # the first sample of the log
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM))
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"http://127.0.0.1:{viewer}/")
            page.get_by_text("gacc_hf/gacc_bench").first.click()
            page.get_by_text(first_goal, exact=True).first.wait_for(timeout=30_000)
            body = page.inner_text("body")
        finally:
            browser.close()
    assert "MICRO" in body and "PROMPT_EXPOSURES" in body
    assert Path(log.location).name in body


def test_data_that_fails_validation_is_named_by_file_row_and_field(tmp_path):
    row = {"context_id": "c1", "source": "s", "context": "Some text.", "goal_id": "g1", "goal": "a goal"}
    row |= {
        "questions": [{"question_id": "q1", "question": "What?"}],
        "gold": [{"question_id": "q1", "references": []}],
    }
    (tmp_path / "bad.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    done = inspect_eval("--model-role", "reader=mockllm/model", "-T", "data=bad.jsonl", cwd=tmp_path)
    said = (done.stdout + done.stderr).strip()
    assert done.returncode == 1
    assert said.startswith("gacc_hf/gacc_bench: 1 problem(s) in the dataset:")
    assert "bad.jsonl: row 0 (goal_id='g1'), line 1, field 'gold[0].references'" in said


def test_the_task_is_found_by_name_from_the_checkouts_root_too(tmp_path):
    # the root's gacc_hf.egg-info, found before the installed metadata, must not change the task's name
    script = (
        "from inspect_ai import eval\n"
        f"[log] = eval('gacc_hf/gacc_bench', model='mockllm/model', model_roles={{'reader': 'mockllm/model'}},"
        f" limit=1, log_dir={str(tmp_path)!r}, display='none')\n"
        "print(log.eval.task, log.status)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env={**ENV, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert (done.returncode, done.stdout.strip()) == (0, "gacc_hf/gacc_bench success"), done.stderr[-2000:]
