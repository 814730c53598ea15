"""One benchmark over several processes: `accelerate launch -m gacc_hf run ...` or `gacc run --num-processes N`.

Every rank validates and plans the whole dataset (the cross-goal pairing needs every group), then computes
only its shard: the groups of the contexts assigned to it. A memory key binds the context text, and every
memory of a context (own, none, cross, the ceilings; the token count too) belongs to the groups of that context,
so sharding by context text gives each memory to exactly one rank: no memory is computed twice and the
compressor calls of all ranks add up to those of one process. Ranks of one machine share the
content-addressed cache (SQLite in WAL mode: safe for several processes of one host, not across hosts on a
network file system: there, give each machine its own cache and combine them with `gacc cache merge`;
entries are immutable). Rank 0 gathers the per-rank
results over a gloo process group and merges them into what one process would have produced: the same
ledger, answers and errors in the same order, scores recomputed from them, calls and integrity counters
summed. A killed rank makes the launcher stop the others; the same command resumes from the cache
(`gacc_hf.run.launch`; how a rank lives and ends: `gacc_hf.run.rank`).
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator, Sequence
from datetime import timedelta
from typing import Any

from gacc_hf.cost.cells import merge_cells
from gacc_hf.cost.limits import LimitReached, LimitTooLow, Meter, SpendingLimits, UnsoundUsage, launch_meter
from gacc_hf.cost.tally import merge_usage
from gacc_hf.data.schema import Group
from gacc_hf.keys import text_hash
from gacc_hf.progress import show_rank
from gacc_hf.results.result import BenchmarkResult
from gacc_hf.run.benchmark import run_benchmark
from gacc_hf.run.rank import Topology, detect
from gacc_hf.scoring.reading import setting_scores
from gacc_hf.scoring.settings import config_methods, config_settings, setting_of

# Ranks wait for the slowest shard at the gather: allow for long model runs.
GATHER_TIMEOUT = timedelta(days=7)
# the stops of a rank's meter: delivered to rank 0 at the gather, which ends the launch with one of them
METER_STOPS = (LimitReached, LimitTooLow, UnsoundUsage)


def assign_contexts(groups: Sequence[Group], world_size: int) -> dict[str, int]:
    """The rank of every distinct context text (keyed by its sha256), balancing the estimated work.

    Work of a context ~ its length x (memories + answers), i.e. x (groups + questions). Greedy: heaviest
    context first onto the least loaded rank; ties go by hash and rank, so every rank derives the same map.

    >>> from gacc_hf.data.schema import Question
    >>> q = (Question("q", "What?", ("x",)),)
    >>> gs = [Group(c, "s", c * 10, f"g{i}", "goal", q) for i, c in enumerate("aabc")]
    >>> sorted(assign_contexts(gs, 2).values())
    [0, 1, 1]
    """
    if world_size < 1:
        raise ValueError(f"world_size must be >= 1, got {world_size}")
    weight: dict[str, int] = {}
    for g in groups:
        h = text_hash(g.context)
        weight[h] = weight.get(h, 0) + len(g.context) * (1 + len(g.questions))
    load = [0] * world_size
    owner: dict[str, int] = {}
    for h in sorted(weight, key=lambda h: (-weight[h], h)):
        rank = min(range(world_size), key=lambda r: (load[r], r))
        owner[h] = rank
        load[rank] += weight[h]
    return owner


class ContextShard:
    """The `shard` hook of `run_benchmark`: keeps the groups whose context this rank owns.

    It also remembers the order of all groups it was shown, which the merge on rank 0 restores, and
    gives the rank its share of the spending limits.
    """

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self.goal_order: list[str] = []
        self.meter: Meter | None = None

    def share(self, limits: SpendingLimits) -> Meter:
        """This rank's part of the spending limits; its meter is kept, for the launch's one stop message."""
        self.meter = Meter.for_rank(limits, self.topology.rank, self.topology.world_size)
        return self.meter

    def __call__(self, groups: list[Group]) -> list[Group]:
        self.goal_order = [g.goal_id for g in groups]
        owner = assign_contexts(groups, self.topology.world_size)
        return [g for g in groups if owner[text_hash(g.context)] == self.topology.rank]


def merge(parts: Sequence[BenchmarkResult], goal_order: Sequence[str]) -> BenchmarkResult:
    """The result one process would have produced, from the results of disjoint shards.

    Rows of one group all come from one shard in plan order, so a stable sort by the group's dataset
    position restores the single-process order; scores are recomputed from the merged answers (same
    bootstrap seed, same rows: same intervals).
    """
    if not parts:
        raise ValueError("nothing to merge")
    position = {goal: i for i, goal in enumerate(goal_order)}
    memories = sorted((row for p in parts for row in p.memories), key=lambda row: position[row["goal_id"]])
    first = parts[0]
    order = {s: i for i, s in enumerate(config_settings(first.config))}  # answers: setting by setting
    answers = sorted(
        (row for p in parts for row in p.answers),
        key=lambda row: (order.get(setting_of(row), 0), position[row["goal_id"]]),
    )
    n_boot, seed = first.config["n_bootstrap"], first.config["seed"]
    scored = setting_scores(answers, n_boot, seed)
    return BenchmarkResult(
        scores=scored["scores"],
        scores_by_language=scored["scores_by_language"],
        memories=memories,
        answers=answers,
        calls={role: sum(p.calls[role] for p in parts) for role in first.calls},
        integrity={name: sum(p.integrity[name] for p in parts) for name in first.integrity},
        config={
            **first.config,
            "started_at": min(p.config["started_at"] for p in parts),
            "finished_at": max(p.config["finished_at"] for p in parts),
        },
        tokenizer=first.tokenizer,
        errors=_merge_errors(parts, memories, answers),
        exposures=sorted((row for p in parts for row in p.exposures), key=lambda row: position[row["goal_id"]]),
        seconds={role: round(sum(p.seconds.get(role, 0.0) for p in parts), 3) for role in first.seconds},
        method_seconds=_merge_method_seconds(parts),
        generated_tokens={role: sum(p.generated_tokens.get(role, 0) for p in parts) for role in first.generated_tokens},
        usage={
            **merge_usage(p.usage for p in parts),
            "cells": merge_cells(p.usage.get("cells", []) for p in parts),
            "counters": first.usage.get("counters", {}),
        },
        prices=first.prices,
    )


def _merge_method_seconds(parts: Sequence[BenchmarkResult]) -> dict[str, dict[str, float]]:
    """Each method's time summed over the ranks, methods in the order the ranks first ran them."""
    merged: dict[str, dict[str, float]] = {}
    for p in parts:
        for role, by_method in p.method_seconds.items():
            into = merged.setdefault(role, {})
            for name, seconds in by_method.items():
                into[name] = into.get(name, 0.0) + seconds
    return {role: {name: round(s, 3) for name, s in by_method.items()} for role, by_method in merged.items()}


def _merge_errors(
    parts: Sequence[BenchmarkResult], memories: list[dict[str, Any]], answers: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Errors in single-process order: by role (compressors in config order, then each reader followed by
    each judge of its answers), then by the plan position of the first row the failure reached (each message
    names its item, so it is unique)."""
    seen: dict[str, int] = {}
    reached: dict[str, str] = {}  # a failed answer or verdict -> the reader of the first row it reached
    for rows in (memories, answers):
        for i, row in enumerate(rows):
            if row.get("error") is not None:
                seen.setdefault(row["error"], i)
                if "reader" in row:
                    reached.setdefault(row["error"], row["reader"])
    config = parts[0].config
    methods = [c["name"] for c in config["compressors"]]
    readers, judges = ([m["name"] for m in config_methods(config, role)] for role in ("reader", "judge"))

    def phase(error: dict[str, Any]) -> tuple[int, int]:
        if error["role"] == "compressor":
            return methods.index(error["method"]) if error["method"] in methods else 0, 0
        reader = error["method"] if error["role"] == "reader" else reached.get(error["error"])
        judge = 1 + judges.index(error["method"]) if error["role"] == "judge" and error["method"] in judges else 0
        return len(methods) + (readers.index(reader) if reader in readers else 0), judge

    errors = [e for p in parts for e in p.errors]
    return sorted(errors, key=lambda e: (phase(e), seen.get(e["error"], math.inf)))


@contextlib.contextmanager
def process_group(topology: Topology) -> Iterator[Any]:
    """A gloo process group over the launcher's ranks (CPU objects only; GPUs are left to the methods).

    Joins an existing default group (e.g. NCCL set up by accelerate) through a new gloo subgroup. On a
    CUDA machine each rank's default device becomes `cuda:<local rank>`, so models do not pile up on GPU 0.

    `torch.distributed.nn.functional` is imported before the group exists: its functions take
    `group=group.WORLD` as a default argument, bound at import, and the first import otherwise happens
    while a model loads (transformers' `from_pretrained` reaches it through torch's FSDP modules). Bound
    there, the group outlives `destroy_process_group`, and with it gloo's C++ threads (`gloo_tcp_loop`,
    two `pt_gloo_runloop`) live on into interpreter exit, which aborted a rank now and then (SIGABRT,
    "terminate called without an active exception") after its part was delivered.
    """
    import torch
    import torch.distributed as dist
    import torch.distributed.nn.functional  # before the group: see above

    if torch.cuda.is_available():
        torch.cuda.set_device(topology.local_rank % torch.cuda.device_count())
    if dist.is_initialized():
        yield dist.new_group(backend="gloo", timeout=GATHER_TIMEOUT)
        return
    missing = [v for v in ("MASTER_ADDR", "MASTER_PORT") if v not in os.environ]
    if missing:
        raise RuntimeError(
            f"{topology.world_size} processes but {', '.join(missing)} unset: start them with "
            "`accelerate launch` (or torchrun), or use `gacc run --num-processes N`"
        )
    dist.init_process_group("gloo", rank=topology.rank, world_size=topology.world_size, timeout=GATHER_TIMEOUT)
    try:
        yield None
    finally:
        dist.destroy_process_group()


def run_benchmark_sharded(
    dataset: Any, *, topology: Topology | None = None, to_all: bool = False, **kwargs: Any
) -> tuple[BenchmarkResult | None, list[dict[str, int]]]:
    """`run_benchmark` over all ranks of the launch: rank 0 gets the merged result, other ranks None (with
    `to_all`, every rank gets it: a training loop's ranks all take the same metrics).

    Also returns the calls of each rank (on rank 0, or everywhere with `to_all`), which show the work split.
    With one process this is exactly `run_benchmark`. Every rank shows its progress, labelled with its rank.
    A rank whose share of the spending limits held calls back still meets the others at the gather (a rank
    that left would break the connection a peer waits on); rank 0 then raises one LimitReached for the whole
    launch, and the other ranks end as after their part (exit 3 for the launch, every time), or, with
    `to_all`, raise a RuntimeError that says so.
    """
    topo = topology or detect()
    if topo.world_size == 1:
        result = run_benchmark(dataset, **kwargs)
        return result, [dict(result.calls)]
    import torch.distributed as dist

    shard = ContextShard(topo)
    show_rank(topo.rank, topo.world_size)
    with process_group(topo) as group:
        part: BenchmarkResult | Exception
        try:
            part = run_benchmark(dataset, shard=shard, **kwargs)
        except METER_STOPS as stop:  # delivered like a part: no rank leaves while a peer waits at the gather
            part = stop
        parts: list[Any] | None = [None] * topo.world_size if topo.is_main else None
        dist.gather_object((part, shard.meter), parts, dst=0, group=group)
        settled = None if parts is None else _settle(parts, shard.goal_order)
        if to_all:
            shared = [settled if not isinstance(settled, BaseException) else f"rank 0 stopped the run: {settled}"]
            dist.broadcast_object_list(shared, src=0, group=group)
            if isinstance(shared[0], str) and not topo.is_main:
                raise RuntimeError(shared[0])
            settled = settled if topo.is_main else shared[0]
    if isinstance(settled, BaseException):
        raise settled
    return settled if settled is not None else (None, [])


def _settle(
    parts: list[Any], goal_order: Sequence[str]
) -> tuple[BenchmarkResult, list[dict[str, int]]] | BaseException:
    """On rank 0: the merged result and each rank's calls, or the stop of a rank's meter for the launch."""
    if any(isinstance(p, METER_STOPS) for p, _ in parts):
        return launch_meter([meter for _, meter in parts]).stop()
    results = [p for p, _ in parts]
    return merge(results, goal_order), [dict(p.calls) for p in results]
