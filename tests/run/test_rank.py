"""A rank of a launch: it ends without teardown once its part is done, and it dies with its launcher."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gacc_hf.run.rank import Topology, detect

# A process that would abort in its teardown (as a joinable C++ thread at static destruction does), with
# output still in its buffer when it ends.
ABORTING_TEARDOWN = """
import atexit, os, sys
from gacc_hf.run.rank import finish
atexit.register(os.abort)
sys.stdout.write("part delivered")
finish(0)
"""


def _python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True)


def test_a_rank_of_a_launch_ends_without_teardown_and_keeps_its_output():
    proc = _python(ABORTING_TEARDOWN, {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1"})
    assert (proc.returncode, proc.stdout) == (0, "part delivered")


def test_a_plain_process_ends_with_its_teardown():
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE")}
    proc = subprocess.run([sys.executable, "-c", ABORTING_TEARDOWN], env=env, capture_output=True, text=True)
    assert proc.returncode == -6  # the teardown ran (and aborted): nothing is skipped outside a launch


def test_malformed_launcher_variables_end_as_a_plain_process():
    proc = _python("from gacc_hf.run.rank import finish; finish(2)", {"RANK": "x", "WORLD_SIZE": "2"})
    assert proc.returncode == 2 and proc.stderr == ""


def test_detect_moved_here_is_the_one_distributed_uses():
    from gacc_hf.run import distributed

    assert distributed.detect is detect and distributed.Topology is Topology


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
