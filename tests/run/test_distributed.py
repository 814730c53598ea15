"""Several processes: sharding by context, the rank-0 merge, and a real 2-process `accelerate launch` run."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from subprocess import PIPE

import pytest

from gacc_hf.cli import main
from gacc_hf.data.schema import validate
from gacc_hf.data.synthetic import synthetic_rows
from gacc_hf.methods.rules import TruncateCompressor
from gacc_hf.protocol import CompressorInput
from gacc_hf.run.benchmark import run_benchmark
from gacc_hf.run.cache import Cache
from gacc_hf.run.distributed import (
    ContextShard,
    Topology,
    assign_contexts,
    detect,
    merge,
)


def _rows() -> list[dict]:
    """Five contexts with two goals, the text of context 0 again under another id (same goal text: its
    memories share keys with context 0's), and a context with a single goal (its cross goal comes from
    another context, chosen among all groups)."""
    rows = synthetic_rows(seed=3, contexts=5, goals_per_context=2, questions_per_goal=3)
    twin = json.loads(json.dumps(rows[0]).replace(rows[0]["context_id"], "twin"))
    twin["context"], twin["goal"] = rows[0]["context"], rows[0]["goal"]
    single = synthetic_rows(seed=4, contexts=1, goals_per_context=1, questions_per_goal=3)[0]
    return [*rows[:4], twin, *rows[4:], single]


class RecordingTruncate(TruncateCompressor):
    """`truncate` that records its inputs and fails on budgets divisible by 7 (to merge errors too)."""

    name = "recording-truncate"
    revision = "recording-truncate-v1"

    def __init__(self) -> None:
        self.inputs: list[CompressorInput] = []
        self._lock = threading.Lock()

    def __call__(self, item: CompressorInput) -> str:
        with self._lock:
            self.inputs.append(item)
        if item.token_budget % 7 == 0:
            raise RuntimeError(f"no budget of {item.token_budget}")
        return super().__call__(item)


KWARGS = dict(
    ratios=[0.1, 0.3],
    conditions=["own", "none", "cross", "full"],
    reader="fields",
    judge="exact",
    n_bootstrap=200,
    batch_size=4,
    on_error="record",
    progress=False,
)


def test_detect_reads_launcher_variables():
    assert detect({"RANK": "2", "WORLD_SIZE": "4", "LOCAL_RANK": "0"}) == Topology(2, 4, 0)
    assert detect({"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "3"}) == Topology(1, 3, 1)
    assert detect({"LOCAL_RANK": "1"}) == Topology()  # no world size: a plain process
    with pytest.raises(ValueError, match="RANK=4 WORLD_SIZE=4"):
        detect({"RANK": "4", "WORLD_SIZE": "4"})
    with pytest.raises(ValueError, match="must be integers"):
        detect({"RANK": "x", "WORLD_SIZE": "2"})


@pytest.mark.parametrize("world", [1, 2, 3, 9])
def test_every_context_text_has_one_rank_and_the_load_is_balanced(world):
    groups = validate(_rows())
    owner = assign_contexts(groups, world)
    texts = {g.context for g in groups}
    assert len(owner) == len(texts) == 6  # 7 context ids, 6 distinct texts
    assert set(owner.values()) <= set(range(world))
    assert assign_contexts(list(reversed(groups)), world) == owner  # same map whatever the row order
    shards = [ContextShard(Topology(r, world))(groups) for r in range(world)]
    assert sorted(g.goal_id for s in shards for g in s) == sorted(g.goal_id for g in groups)  # a partition
    twins = [r for r, s in enumerate(shards) for g in s if g.context == groups[0].context]
    assert len(twins) == 3 and len(set(twins)) == 1  # both ids of one text on one rank
    # greedy balance: no rank carries more than the lightest one plus the heaviest single context
    weight = {g.context: 0 for g in groups}
    for g in groups:
        weight[g.context] += len(g.context) * (1 + len(g.questions))
    loads = [sum(weight[t] for t in {g.context for g in s}) for s in shards]
    assert max(loads) - min(loads) <= max(weight.values())


@pytest.mark.parametrize("world", [2, 3, 9])
def test_merged_shards_equal_one_process_and_no_memory_is_computed_twice(world, tmp_path):
    rows = _rows()
    whole_comp = RecordingTruncate()
    whole = run_benchmark(rows, compressor=whole_comp, cache_dir=str(tmp_path / "one"), **KWARGS)
    assert whole.errors and whole.calls["compressor"] > 0  # the comparison covers failures too

    comp = RecordingTruncate()
    parts, order = [], None
    for rank in range(world):  # the ranks share one cache, as launched processes do
        shard = ContextShard(Topology(rank, world))
        parts.append(run_benchmark(rows, compressor=comp, cache_dir=str(tmp_path / "many"), shard=shard, **KWARGS))
        order = shard.goal_order
    merged = merge(parts, order)

    assert len(comp.inputs) == len(set(comp.inputs)) == len(whole_comp.inputs)  # each memory once, by one rank
    assert set(comp.inputs) == set(whole_comp.inputs)
    assert sum(p.calls["compressor"] for p in parts) == whole.calls["compressor"]
    assert merged.calls == whole.calls
    assert merged.memories == whole.memories
    assert merged.answers == whole.answers
    assert merged.scores == whole.scores
    assert merged.errors == whole.errors
    assert merged.integrity == whole.integrity
    times = {"cache_dir": None, "started_at": None, "finished_at": None}
    assert {**merged.config, **times} == {**whole.config, **times}  # only the dir and the clock differ
    for role, by_method in merged.method_seconds.items():  # each method's time is the sum of the ranks'
        for name, seconds in by_method.items():
            ranks = sum(p.method_seconds[role].get(name, 0.0) for p in parts)
            assert seconds == pytest.approx(ranks, abs=0.001 * world)
    assert list(merged.method_seconds["compressor"]) == list(whole.method_seconds["compressor"])


def test_num_processes_inside_a_launch_must_match_it(monkeypatch, capsys):
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert main(["run", "--num-processes", "3", "--no-progress"]) == 2
    assert "--num-processes 3 inside a launch of 2 processes" in capsys.readouterr().err


def _gacc(cwd: Path, *args: str) -> tuple[int, str, str]:
    """Run `gacc run` in its own process group, so a stuck launch is killed with all its ranks."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "gacc_hf", "run", *args, "--cache-dir", "cache", "--output-dir", "out"]
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=PIPE, stderr=PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"gacc run {' '.join(args)} did not finish in 300 s:\n{err[-3000:]}")
    return proc.returncode, out, err


def _without_commit(data: bytes) -> bytes:
    """The bytes without what differs between two launches: a git commit id (if one landed between the
    runs; memory hashes have 64 digits), the UTC start and end times and time spent in model calls."""
    data = re.sub(rb"\b[0-9a-f]{40}\b", b"<commit>", data)
    data = re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", b"<time>", data)
    data = re.sub(rb'("method_seconds": \{)(?:[^{}]|\{[^{}]*\})*\}', rb"\1<seconds>}", data)
    return re.sub(rb'("seconds": \{)[^}]*\}', rb"\1<seconds>}", data)


def test_two_accelerate_processes_write_the_one_process_results_folder(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows()), encoding="utf-8")
    args = ["--data", str(data), "--conditions", "own,none,cross,full", "--bootstrap", "200", "--no-progress"]
    args += ["--compressors", "truncate,goal-lines", "--reader", "fields", "--judge", "exact"]  # rule methods
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    code, _, err = _gacc(one, *args)
    assert code == 0, err
    code, out, err = _gacc(two, *args, "--num-processes", "2")
    assert code == 0, err

    files = sorted(p.name for p in (one / "out").iterdir())
    assert "results.json" in files and "answers.parquet" in files
    assert sorted(p.name for p in (two / "out").iterdir()) == files
    for name in files:  # identical folders, but for the harness commit if one landed between the two runs
        a, b = (_without_commit((d / "out" / name).read_bytes()) for d in (one, two))
        assert a == b, name

    calls = json.loads((one / "out" / "results.json").read_text())["calls"]
    per_rank = re.search(r"calls per process: 0: (\{.*?\}); 1: (\{.*?\})", out)
    assert per_rank, out
    ranks = [json.loads(part.replace("'", '"')) for part in per_rank.groups()]
    assert all(r["compressor"] > 0 for r in ranks)  # both processes did work
    assert sum(r["compressor"] for r in ranks) == calls["compressor"]  # and no memory was computed twice


def _open_and_write(path: str, worker: int) -> None:
    with Cache(path) as c:
        c.put_many("answer", {f"w{worker}": {"answer": "x"}})


def test_ranks_opening_a_new_cache_together_all_succeed(tmp_path):
    # A stress test: SQLite may refuse a concurrent switch to WAL at once ("database is locked", about 1
    # open in 100 here before `_enable_wal` waited it out); ranks of a launch open one new file together.
    ctx = mp.get_context("fork")
    for trial in range(20):
        procs = [ctx.Process(target=_open_and_write, args=(str(tmp_path / str(trial)), w)) for w in range(4)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        assert [p.exitcode for p in procs] == [0] * 4
        with Cache(tmp_path / str(trial)) as c:
            assert c.count("answer") == 4 and c.check() == []


GROUP_THEN_MODEL_IMPORT = """
import json, os, sys
from gacc_hf.run.distributed import Topology, process_group

rank = int(sys.argv[1])
with process_group(Topology(rank, 2, rank)):
    import torch.distributed.nn.functional  # what loading a transformers model imports, inside the group
names = [open(f"/proc/self/task/{t}/comm").read().strip() for t in os.listdir("/proc/self/task")]
print(json.dumps(sorted(n for n in names if "gloo" in n)))
"""


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads thread names from /proc")
def test_no_gloo_thread_outlives_the_group_when_a_model_was_loaded_inside_it(tmp_path):
    # the threads that outlived the group reached interpreter exit, where a rank aborted now and then
    from gacc_hf.run.launch import free_port

    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port())}
    cmd = [sys.executable, "-c", GROUP_THEN_MODEL_IMPORT]
    ranks = [subprocess.Popen([*cmd, str(r)], env=env, stdout=PIPE, stderr=PIPE, text=True) for r in (0, 1)]
    outs = [p.communicate(timeout=300) for p in ranks]
    assert [p.returncode for p in ranks] == [0, 0], outs
    assert [json.loads(out.strip().splitlines()[-1]) for out, _ in outs] == [[], []]
