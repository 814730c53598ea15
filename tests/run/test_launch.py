"""`gacc run --num-processes N`: the cap on processes, the launch arguments, and what a signal or a dead
rank does to a real 2-process launch of the `rules` preset (no model, seconds)."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from subprocess import PIPE
from types import SimpleNamespace

import pytest

from gacc_hf import errors
from gacc_hf.cli import main
from gacc_hf.keys import text_hash
from gacc_hf.run import launch
from gacc_hf.run.distributed import assign_contexts
from gacc_hf.run.launch import capped_processes, describe_failure, launch_arguments, strip_option
from tests.helpers.cli import ROWS, outcome, run_args
from tests.helpers.teardown import ABORT_IN_NATIVE_TEARDOWN

linux_only = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")


def test_option_stripping_and_launch_arguments():
    argv = ["run", "--num-processes", "2", "--data", "sample", "--num-processes=2"]
    assert strip_option(argv, "--num-processes") == ["run", "--data", "sample"]
    args = launch_arguments(["run", "--data", "sample"], 2, 29511)
    assert args[args.index("--num_processes") + 1] == "2" and args[args.index("--main_process_port") + 1] == "29511"
    assert args[-5:] == ["-m", "gacc_hf", "run", "--data", "sample"]
    with pytest.raises(ValueError, match=">= 2"):
        launch_arguments([], 1, 29511)


def test_more_processes_than_cores_are_capped_with_one_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="gacc_hf"):
        assert capped_processes(3, cores=2) == 2
    assert len(caplog.records) == 1
    assert "--num-processes 3 is more than the 2 core(s)" in caplog.records[0].getMessage()


def test_processes_up_to_the_cores_are_kept_without_a_word(caplog):
    with caplog.at_level(logging.WARNING, logger="gacc_hf"):
        assert capped_processes(2, cores=2) == 2
        assert capped_processes(1, cores=2) == 1
    assert caplog.records == []


def test_a_request_capped_to_one_process_runs_in_this_process(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(launch, "usable_cores", lambda: 1)
    monkeypatch.setattr(launch, "launch", lambda *a: pytest.fail("nothing is launched for one process"))
    out = tmp_path / "out"
    code = main(["run", "--preset", "rules", "--limit", "2", "--num-processes", "100", "--no-progress",
                 "--cache-dir", str(tmp_path / "cache"), "--output-dir", str(out)])  # fmt: skip
    assert code == 0 and (out / "results.json").is_file()
    assert "--num-processes 100 is more than the 1 core(s) this process may use: running 1" in capsys.readouterr().err


def test_a_failure_names_the_rank_and_its_signal():
    assert describe_failure(1, -signal.SIGABRT) == "rank 1 died of SIGABRT"
    assert describe_failure(0, -signal.SIGKILL) == "rank 0 died of SIGKILL"
    assert describe_failure(3, -200) == "rank 3 died of signal 200"
    assert describe_failure(1, 2) == "rank 1 ended with exit code 2"


def test_a_rank_death_has_its_own_exit_code():
    death = launch.RankDied("rank 1 died of SIGKILL")
    assert errors.exit_code(death) == errors.RANK_DIED == 5
    assert errors.RANK_DIED not in (errors.OK, errors.INTEGRITY, errors.BAD_INPUT, errors.MODEL_FAILURES, errors.BUG)
    assert errors.exit_code(RuntimeError("x")) == errors.BAD_INPUT  # other runtime errors are unchanged


def _descendants(pid: int) -> list[int]:
    """Every live process below `pid`, read from /proc (children's children too)."""
    parent: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parent[int(stat.parent.name)] = int(fields[1])
    found, todo = [], [pid]
    while todo:
        above = todo.pop()
        below = [p for p, pp in parent.items() if pp == above]
        found += below
        todo += below
    return found


def _rank_pids(pids: list[int]) -> dict[int, int]:
    """rank -> pid among `pids`, read from each process's RANK variable."""
    ranks = {}
    for pid in pids:
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        rank = [v.split(b"=", 1)[1] for v in env if v.startswith(b"RANK=")]
        if rank:
            ranks[int(rank[0])] = pid
    return ranks


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _start_two_ranks(tmp_path: Path) -> tuple[subprocess.Popen, dict[int, int]]:
    """A 2-process `rules` run, returned once both ranks are running (their pids by rank)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "gacc_hf", "run", "--preset", "rules", "--num-processes", "2", "--no-progress",
           "--cache-dir", "cache", "--output-dir", "out"]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=PIPE, stderr=PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ranks = _rank_pids(_descendants(proc.pid))
        if len(ranks) == 2:
            return proc, ranks
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    pytest.fail(f"the two ranks never ran: {proc.communicate()[1][-2000:]}")


def _finish(proc: subprocess.Popen, ranks: dict[int, int], tmp_path: Path) -> tuple[int, str]:
    """gacc's exit code and stderr; then no rank may be left, nor a results folder appear a while later."""
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("gacc did not end")
    deadline = time.monotonic() + 10  # the kernel delivers a parent-death signal soon, not at once
    while any(_alive(p) for p in ranks.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [p for p in ranks.values() if _alive(p)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], f"ranks outlived gacc: {left}"
    time.sleep(2)
    assert not (tmp_path / "out").exists()
    return proc.returncode, err


@linux_only
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_gacc_stops_every_rank_and_says_so(tmp_path, sig):
    proc, ranks = _start_two_ranks(tmp_path)
    os.kill(proc.pid, sig)  # the launcher's pid only, not its process group
    code, err = _finish(proc, ranks, tmp_path)
    assert code == 128 + sig
    assert f"gacc run: stopped by {sig.name}: every rank was stopped; rerun the same command to resume" in err


@linux_only
def test_ranks_do_not_outlive_a_killed_gacc(tmp_path):
    proc, ranks = _start_two_ranks(tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    code, _ = _finish(proc, ranks, tmp_path)
    assert code == -signal.SIGKILL


@linux_only
def test_a_dead_rank_is_one_line_naming_it_with_its_own_exit_code(tmp_path):
    proc, ranks = _start_two_ranks(tmp_path)
    os.kill(ranks[1], signal.SIGKILL)
    code, err = _finish(proc, ranks, tmp_path)
    assert code == errors.RANK_DIED
    lines = [line for line in err.splitlines() if line.startswith("gacc run: error:")]
    assert lines == [
        "gacc run: error: rank 1 died of SIGKILL; the other ranks were stopped; rerun the same command to "
        "resume: everything stored in the cache is reused"
    ]
    assert "Traceback" not in err and "ChildFailedError" not in err


ABORTS_IN_RANK_1 = f"""
import os
from gacc_hf.methods.rules import TruncateCompressor

if os.environ.get("RANK") == "1":  # rank 1 aborts in its native teardown, after its part was gathered
    {ABORT_IN_NATIVE_TEARDOWN}


class Truncate(TruncateCompressor):
    pass
"""


def test_a_rank_aborting_in_its_teardown_costs_neither_the_results_nor_the_exit_code(tmp_path):
    (tmp_path / "aborting.py").write_text(ABORTS_IN_RANK_1, encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "gacc_hf", "run", "--preset", "rules", "--compressors", "import:aborting:Truncate",
           "--num-processes", "2", "--no-progress", "--cache-dir", "cache", "--output-dir", "out"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "out" / "results.json").is_file()
    for rank in (0, 1):  # the work of every rank is shown, each under its rank
        assert f"gacc: rank {rank}/2: reader fields: " in proc.stderr


def test_a_rank_that_refuses_its_input_passes_its_own_exit_code_on(tmp_path):
    (tmp_path / "bad.jsonl").write_text('{"context_id": 1}\n', encoding="utf-8")  # read by the ranks only
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "gacc_hf", "run", "--preset", "rules", "--data", "bad.jsonl", "--num-processes", "2",
           "--no-progress", "--cache-dir", "cache", "--output-dir", "out"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == errors.BAD_INPUT, proc.stderr[-3000:]
    assert "gacc run: error:" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def _launch(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "gacc_hf", *args, "--num-processes", "2"]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


@linux_only
def test_a_limited_launch_ends_as_one_with_exit_3_until_done(tmp_path, capsys):
    # rank 0's contexts are all in the cache, so rank 0 waits at the gather while rank 1 stops at its share:
    # a rank that left then broke the connection its peer waited on (gloo: "Connection closed by peer", exit 2)
    owner = assign_contexts([SimpleNamespace(context=r["context"], questions=r["questions"]) for r in ROWS], 2)
    first = [r for r in ROWS if owner[text_hash(r["context"])] == 0]
    (tmp_path / "first.jsonl").write_text("".join(json.dumps(r) + "\n" for r in first), encoding="utf-8")
    prefill = run_args(tmp_path, "--data", str(tmp_path / "first.jsonl"), "--output-dir", str(tmp_path / "prefill"))
    assert outcome(prefill, capsys)[0] == 0
    codes, stops = [], []
    while len(codes) < 6 and (not codes or codes[-1] == 3):
        proc = _launch(tmp_path, *run_args(tmp_path, "--max-calls", "4"))
        codes.append(proc.returncode)
        assert "Connection" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-3000:]
        stops += [line for line in proc.stderr.splitlines() if line.startswith("gacc run: error:")]
    # rank 1 has 5 calls to make (a memory, 2 answers, 2 verdicts) and 2 a run: 2 + 2 + 1
    assert codes == [3, 3, 0]
    assert len(stops) == 2 and all(
        line.startswith("gacc run: error: stopped at --max-calls 4 (shared by 2 processes, each stopping at its "
                        "share): this run made 2 calls") for line in stops
    )  # fmt: skip
    assert (tmp_path / "out" / "results.json").is_file()


@linux_only
def test_ctrl_c_to_a_launch_at_work_stops_it_with_one_line_and_no_native_abort(tmp_path):
    # the terminal's Ctrl-C: SIGINT to gacc's whole process group, which the agent passes on to each rank's;
    # sent once both ranks have loaded the data (earlier, a rank may be importing: Python's own traceback)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "gacc_hf", "run", "--preset", "rules", "--data", "synthetic:contexts=60",
           "--num-processes", "2", "--no-progress", "--cache-dir", "cache", "--output-dir", "out"]  # fmt: skip
    log = tmp_path / "stderr.txt"
    with log.open("w") as err:
        proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=PIPE, stderr=err, start_new_session=True)
        deadline = time.monotonic() + 300
        while log.read_text().count("gacc: data synthetic") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        code = proc.wait(timeout=120)
    lines = [line for line in log.read_text().splitlines() if not line.startswith("gacc: ")]
    assert (code, lines) == (
        128 + signal.SIGINT,
        [
            "gacc run: stopped by SIGINT: every rank was stopped; rerun the same command to resume: everything "
            "stored in the cache is reused"
        ],
    )
    assert not (tmp_path / "out").exists()
