"""How the docs test runs a bash block marked `<!-- docs-test: run -->`: its `gacc` commands through the CLI in
this process, each exiting 0 or the code a trailing `# exits N` comment names. A command ending in `&` (a
server) runs in a process of its own, waited for until it prints its first line; `kill %N` stops the N-th of
those with SIGTERM, and it must then exit 0; none may be left running at the end of the block."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

from gacc_hf.cli import main


def start_job(argv: list[str], where: str) -> subprocess.Popen[str]:
    """A `gacc ... &` command as a process of its own, once it has printed its first line (it is ready)."""
    cmd = [sys.executable, "-m", "gacc_hf", *argv[1:-1]]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.stdout is None or not proc.stdout.readline():
        proc.kill()
        raise AssertionError(f"{where}: `{' '.join(argv)}` ended before its first line: {proc.communicate()[1]}")
    return proc


def stop_job(proc: subprocess.Popen[str], where: str) -> None:
    """`kill %N`: SIGTERM to a job, which must end with exit 0."""
    proc.terminate()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, f"{where}: a job stopped by kill exited {proc.returncode}: {err}"


def run_bash(code: str, where: str) -> int:
    """Run a bash block's commands (see the module docstring); how many `gacc` commands ran."""
    ran, jobs = 0, []
    for line in code.replace("\\\n", " ").splitlines():
        argv = shlex.split(line, comments=True)
        if not argv:
            continue
        if argv[0] == "kill":
            stop_job(jobs[int(argv[1].removeprefix("%")) - 1], where)
            continue
        assert argv[0] == "gacc", f"{where}: only gacc commands (and kill) run here, got {line!r}"
        if argv[-1] == "&":
            jobs.append(start_job(argv, where))
            ran += 1
            continue
        try:
            status = main(argv[1:])
        except SystemExit as exc:  # --version and argparse errors exit
            status = exc.code or 0
        expected = re.search(r"#\s*exits (\d+)", line)
        expected = int(expected[1]) if expected else 0
        assert status == expected, f"{where}: `{line.strip()}` exited {status}, not {expected}"
        ran += 1
    left = [proc for proc in jobs if proc.poll() is None]
    for proc in left:
        proc.kill()
    assert not left, f"{where}: a job started with & is still running at the end of the block: kill it there"
    return ran
