"""The Inspect samples of a GACC-Bench run: one sample per (context, goal) group.

A sample's input is the compressor's prompt, rendered from `CompressorInput(context, shown goal, L)` alone
(docs/protocol.md §1): the questions and gold stay on the judge side, in the groups the solver and scorer
look up by the sample's id (the goal id). The budget is the protocol's: N counted by the verified cl100k_base
codec, `L = token_budget(N, ratio)`, and the shown goal is the condition's (`own` or `none`, §8).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser

from gacc_hf.budget import RatioLike, exact_ratio, token_budget
from gacc_hf.data.schema import Group
from gacc_hf.methods.hf_chat import chat_messages
from gacc_hf.protocol import CompressorInput
from gacc_hf.run.conditions import GoalAssigner
from gacc_hf.tokenizer import Codec

#: The conditions a sample can be built under. `cross` needs a pairing over the whole dataset that a run of
#: `gacc run` records with its seed; it is left to gacc-hf's own runs, as are the bounds.
OFFERED_CONDITIONS = ("own", "none")


def check_condition(condition: str) -> str:
    """The condition, when Inspect runs offer it; a ValueError naming the ones they do otherwise."""
    if condition not in OFFERED_CONDITIONS:
        raise ValueError(
            f"condition {condition!r} is not offered by the Inspect task; choose from {', '.join(OFFERED_CONDITIONS)} "
            "(cross, full, oracle and closed run with `gacc run`)"
        )
    return condition


def as_messages(chat: Sequence[dict[str, str]]) -> list[ChatMessage]:
    """gacc-hf's chat messages (role and content) as Inspect's message objects."""
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser}
    return [kinds[m["role"]](content=m["content"]) for m in chat]


def compressor_messages(item: CompressorInput) -> list[ChatMessage]:
    """The compressor's prompt: gacc-hf's compressor template filled from the input object's source and goal
    (the budget is not stated, as in gacc-hf's own model compressors)."""
    return as_messages(chat_messages("compressor", context=item.context, goal=item.goal))


@dataclass(frozen=True)
class Planned:
    """One group's compressor input and its ledger identity under the run's condition and ratio."""

    group: Group
    item: CompressorInput
    shown_goal_id: str
    source_tokens: int


def plan_groups(groups: Sequence[Group], ratio: RatioLike, condition: str, codec: Codec) -> list[Planned]:
    """Each group's compressor input: the shown goal of `condition` and `L = token_budget(N, ratio)`."""
    assigner = GoalAssigner(groups)
    texts = list(dict.fromkeys(g.context for g in groups))
    n_tokens = dict(zip(texts, codec.count_batch(texts), strict=True))
    planned = []
    for group in groups:
        shown = assigner.shown(group, condition)
        n = n_tokens[group.context]
        item = CompressorInput(group.context, shown.text, token_budget(n, ratio))
        planned.append(Planned(group, item, shown.goal_id, n))
    return planned


def to_sample(planned: Planned, condition: str, ratio: RatioLike) -> Sample:
    """The Inspect sample of one planned group: the compressor's prompt as input, the gold references as target
    (shown in the log, never sent to a model), ids and budget in the metadata."""
    group = planned.group
    metadata: dict[str, Any] = {
        "context_id": group.context_id,
        "goal_id": group.goal_id,
        "shown_goal_id": planned.shown_goal_id,
        "condition": condition,
        "ratio": float(exact_ratio(ratio)),
        "ratio_given": str(ratio),  # as given ("0.29", "1/3"): what the budget's recount reads
        "source_tokens": planned.source_tokens,
        "budget": planned.item.token_budget,
        "language": group.language_tag,
        "n_questions": len(group.questions),
    }
    target = [f"{q.question_id}: {' | '.join(q.references)}" for q in group.questions]
    return Sample(id=group.goal_id, input=compressor_messages(planned.item), target=target, metadata=metadata)
