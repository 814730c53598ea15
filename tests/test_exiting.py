"""How a `gacc` process ends: Python's shutdown steps run, native teardown does not, and `main()` called as a
function still returns its code."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tomllib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gacc_hf.cli import main
from tests.helpers.cli import ROWS
from tests.helpers.paths import ROOT
from tests.helpers.teardown import ABORT_IN_NATIVE_TEARDOWN

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the stand-in registers with glibc")

AS_THE_COMMAND = "import runpy, sys; sys.argv[0] = 'gacc'; runpy.run_module('gacc_hf', run_name='__main__')\n"
AS_A_FUNCTION = "import sys; from gacc_hf.cli import main; sys.exit(main())\n"


def _python(code: str, *args: str) -> subprocess.CompletedProcess:
    """`python -c code args` with buffered output, as a user's shell runs it (not PYTHONUNBUFFERED)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env |= {"HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True)


@pytest.fixture
def extra_column(tmp_path):
    """A parquet file of two groups with a column the schema lacks: `gacc data validate` names it per row."""
    path = tmp_path / "extra.parquet"
    pq.write_table(pa.Table.from_pylist([{**row, "extra": "x"} for row in ROWS]), path)
    return path


@linux_only
def test_a_command_whose_native_teardown_would_abort_ends_with_its_own_code(extra_column):
    # pyarrow read the file, so its thread pool is alive at exit: the abort the stand-in forces every time
    proc = _python(ABORT_IN_NATIVE_TEARDOWN + AS_THE_COMMAND, "data", "validate", str(extra_column))
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stdout.count("field 'extra': unknown column") == 2 and proc.stdout.endswith(f"in {extra_column}\n")
    assert "terminate" not in proc.stderr


@linux_only
def test_the_same_command_ending_through_the_interpreters_exit_aborts(extra_column):
    proc = _python(ABORT_IN_NATIVE_TEARDOWN + AS_A_FUNCTION, "data", "validate", str(extra_column))
    assert proc.returncode == -signal.SIGABRT  # the stand-in fires where Python's own exit would reach it
    assert proc.stdout.count("field 'extra': unknown column") == 2  # printed before: the code alone was lost


@linux_only
@pytest.mark.parametrize(("args", "code"), [(["--version"], 0), (["run", "--no-such-option"], 2), (["list"], 0)])
def test_argparse_exits_and_other_commands_end_the_same_way(args, code):
    proc = _python(ABORT_IN_NATIVE_TEARDOWN + AS_THE_COMMAND, *args)
    assert proc.returncode == code, proc.stderr[-2000:]


SHUTDOWN = """
import atexit, ctypes, sys, threading, time
from gacc_hf.exiting import exit_process
def late():
    time.sleep(0.3)
    sys.stdout.write("thread ")
threading.Thread(target=late).start()
atexit.register(lambda: sys.stdout.write("atexit "))
ctypes.CDLL(None).printf(b"native")  # held in C's buffer: stdout is a pipe
sys.stdout.write("python ")
exit_process(7)
"""


@linux_only
def test_python_shutdown_steps_run_in_order_and_every_buffer_is_written():
    proc = _python(ABORT_IN_NATIVE_TEARDOWN + SHUTDOWN)
    # the thread was waited for, the atexit function ran, Python's then C's buffers were written, no teardown
    assert (proc.returncode, proc.stdout, proc.stderr) == (7, "python thread atexit native", "")


def test_main_called_as_a_function_returns_its_code(extra_column, capsys):
    assert main(["data", "validate", str(extra_column)]) == 2  # the test process goes on: nothing ended it
    assert "unknown column" in capsys.readouterr().out


def test_the_console_script_and_python_m_take_the_exit_path():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts == {"gacc": "gacc_hf.cli:entry"}
    assert "entry()" in (ROOT / "gacc_hf" / "__main__.py").read_text(encoding="utf-8")
