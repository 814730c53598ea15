"""`gacc_hf/gacc_bench`: GACC-Bench as an Inspect task.

    inspect eval gacc_hf/gacc_bench --model <compressor> --model-role reader=<reader> -T judge=contains

The model under evaluation is the compressor; the reader is the `reader` model role and the judge a gacc-hf
judge (`-T judge=contains`, the main job's) or the `grader` model role (`-T judge=grader`). One sample per
(context, goal) group of the data; its score gives the group's Micro and all-correct values, and the task's
metric Micro, Macro and the integrity counters. Data, budgets, the tokenizer check, prompts and audits are
gacc-hf's own (`gacc_hf.data`, `gacc_hf.budget`, `gacc_hf.tokenizer`, `gacc_hf.methods.hf_chat`,
`gacc_hf.scoring.integrity`).
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset

from gacc_hf.budget import exact_ratio
from gacc_hf.data.loading import load_any
from gacc_hf.data.schema import validate
from gacc_hf.inspect_eval.offline import seed_o200k
from gacc_hf.inspect_eval.samples import check_condition, plan_groups, to_sample
from gacc_hf.inspect_eval.scorer import GRADER_ROLE, Audit, gacc_scorer
from gacc_hf.inspect_eval.solver import compress_and_read
from gacc_hf.methods.registry import resolve
from gacc_hf.tokenizer import get_codec


def _judge(spec: str) -> Any:
    """None for the `grader` model role, else the gacc-hf judge the name resolves to."""
    return None if spec == GRADER_ROLE else resolve("judge", spec)


@task
def gacc_bench(data: str = "sample", ratio: float | str = 0.2, condition: str = "own", judge: str = "contains") -> Task:
    """GACC-Bench on `data` (a gacc-hf data spec: `sample`, `sample:all`, a file, a folder, a Hub id) at one
    retention `ratio` under `condition` (`own` or `none`), judged by `judge` (a gacc-hf judge or `grader`).

    Everything is checked before any model call: the data (validation names the row and field), the ratio, the
    condition, the judge and the tokenizer's identity.
    """
    exact_ratio(ratio)  # a ValueError naming the ratio
    check_condition(condition)
    judged = _judge(judge)
    codec = get_codec()
    if not codec.identity_verified:
        raise ValueError(f"tokenizer {codec.name} is not the verified cl100k_base: budgets would not be the protocol's")
    groups = validate(load_any(data))
    seed_o200k()  # Inspect's own token estimates, offline
    planned = plan_groups(groups, ratio, condition, codec)
    plans = {p.group.goal_id: p for p in planned}
    return Task(
        dataset=MemoryDataset([to_sample(p, condition, ratio) for p in planned], name=f"gacc-bench:{data}"),
        solver=compress_and_read(plans),
        scorer=gacc_scorer(plans, judged, Audit(groups, codec)),
        metadata={"data": data, "ratio": float(exact_ratio(ratio)), "condition": condition, "judge": judge},
    )
