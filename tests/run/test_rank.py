"""A rank of a launch: an interrupt ends it at once and quietly, and it dies with its launcher."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gacc_hf.run.rank import Topology, detect
from tests.helpers.teardown import ABORT_IN_NATIVE_TEARDOWN

INTERRUPTED = """
import multiprocessing, os, signal, sys, time
from gacc_hf.run.rank import stop_quietly_on_interrupt

def idle():
    time.sleep(60)

if __name__ == "__main__":
    if sys.argv[1] == "quiet":
        stop_quietly_on_interrupt()
    child = multiprocessing.get_context("spawn").Process(target=idle, daemon=True)
    child.start()
    print(child.pid)
    sys.stdout.write("part of the output")  # still in the buffer when the signal comes
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(60)
"""


def _interrupted(tmp_path: Path, how: str) -> tuple[subprocess.CompletedProcess, int]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    script = tmp_path / "interrupted.py"
    script.write_text(ABORT_IN_NATIVE_TEARDOWN + INTERRUPTED, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script), how], env=env, capture_output=True, text=True, timeout=120)
    return proc, int(proc.stdout.split("\n", 1)[0])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the stand-in registers with glibc")
def test_an_interrupted_rank_ends_at_once_quietly_with_its_output_and_takes_its_children(tmp_path):
    proc, child = _interrupted(tmp_path, "quiet")
    assert (proc.returncode, proc.stderr) == (128 + signal.SIGINT, "")
    assert proc.stdout.endswith("part of the output")
    assert not Path(f"/proc/{child}").exists() or Path(f"/proc/{child}/stat").read_text().split()[2] == "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the stand-in registers with glibc")
def test_a_process_left_as_python_sets_it_raises_keyboard_interrupt(tmp_path):
    proc, child = _interrupted(tmp_path, "as-python-sets-it")
    with contextlib.suppress(ProcessLookupError):
        os.kill(child, signal.SIGKILL)
    assert "KeyboardInterrupt" in proc.stderr and proc.returncode != 128 + signal.SIGINT


def test_detect_moved_here_is_the_one_distributed_uses():
    from gacc_hf.run import distributed

    assert distributed.detect is detect and distributed.Topology is Topology


def _python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True)


BOUND = """
import os, sys
from gacc_hf.run.rank import bind_to_launcher
bind_to_launcher()
print("still running", flush=True)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_rank_whose_launcher_is_already_gone_ends_at_once():
    gone = _python(BOUND, {"GACC_LAUNCHER_PID": "1"})  # its parent is this test, not pid 1
    assert (gone.returncode, gone.stdout) == (137, "")
    kept = _python(BOUND, {"GACC_LAUNCHER_PID": str(os.getpid())})
    assert (kept.returncode, kept.stdout) == (0, "still running\n")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_bound_rank_dies_with_its_parent(tmp_path):
    # parent -> child; the child binds itself and writes its pid, the parent is SIGKILLed, the child must go
    child = f"{BOUND}\nimport time; open({str(tmp_path / 'pid')!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    parent = textwrap.dedent(f"""
        import os, signal, subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", {child!r}])
        while not os.path.exists({str(tmp_path / "pid")!r}):
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    env = {k: v for k, v in os.environ.items() if k != "GACC_LAUNCHER_PID"}
    subprocess.run([sys.executable, "-c", parent], env=env, timeout=120)
    pid = int((tmp_path / "pid").read_text())
    for _ in range(100):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            break
        if state == "Z":
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        pytest.fail("the child outlived its parent")
