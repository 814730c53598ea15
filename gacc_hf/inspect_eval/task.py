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
from inspect_ai._util.error import PrerequisiteError  # Inspect's one-line error for a run it cannot start
from inspect_ai._util.package import get_installed_package_name
from inspect_ai.dataset import MemoryDataset
from inspect_ai.model import get_model
from inspect_ai.model._model import active_model  # set while Inspect resolves an eval's tasks
from rich.text import Text

from gacc_hf.budget import RatioLike, exact_ratio
from gacc_hf.data.loading import load_any
from gacc_hf.data.schema import validate
from gacc_hf.inspect_eval.offline import seed_o200k
from gacc_hf.inspect_eval.samples import check_condition, plan_groups, to_sample
from gacc_hf.inspect_eval.scorer import GRADER_ROLE, Audit, gacc_scorer
from gacc_hf.inspect_eval.solver import READER_ROLE, compress_and_read
from gacc_hf.methods.registry import resolve
from gacc_hf.tokenizer import get_codec

TASK = "gacc_hf/gacc_bench"


def require_roles(roles: list[str]) -> None:
    """Fail in one line (`Model role 'reader' is required and was not specified.`) when a role the run needs
    is missing: checked when Inspect builds the task inside an eval, which knows the roles; a task object
    built before its eval is checked by the solver and scorer instead, at their first call."""
    if active_model() is not None:
        for role in roles:
            get_model(role=role, required=True)


def _judge(spec: str) -> Any:
    """None for the `grader` model role, else the gacc-hf judge the name resolves to."""
    return None if spec == GRADER_ROLE else resolve("judge", spec)


def build(data: str, ratio: RatioLike, condition: str, judge: str) -> Task:
    """The task: every argument, the data and the tokenizer's identity checked before any model call."""
    exact_ratio(ratio)
    check_condition(condition)
    judged = _judge(judge)
    require_roles([READER_ROLE] + ([GRADER_ROLE] if judged is None else []))
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
        metadata={"data": data, "ratio": str(exact_ratio(ratio)), "condition": condition, "judge": judge},
    )


# Inspect names a task `<package>/<name>` when it finds the task's module in an installed package, and then finds
# it by that name. From a checkout's root (on sys.path before site-packages, as with `python -c` or PYTHONPATH) it
# reads the root's `gacc_hf.egg-info`, which has no install record, and would name it plain `gacc_bench`, so that
# `gacc_hf/gacc_bench` is not found: there the name is given whole.
_NAME = "gacc_bench" if get_installed_package_name(require_roles) == "gacc_hf" else TASK


@task(name=_NAME)
def gacc_bench(data: str = "sample", ratio: float | str = 0.2, condition: str = "own", judge: str = "contains") -> Task:
    """GACC-Bench on `data` (a gacc-hf data spec: `sample`, `sample:all`, a file, a folder, a Hub id) at one
    retention `ratio` (a decimal, or `p/q`) under `condition` (`own` or `none`), judged by `judge` (a gacc-hf
    judge such as `contains`, or `grader`: the grader model role).

    Bad arguments or data stop the eval in one line naming the argument, file, row or field.
    """
    try:
        return build(data, ratio, condition, judge)
    except (ValueError, OSError) as exc:
        raise PrerequisiteError(Text(f"{TASK}: {exc}")) from exc
