"""Which goal the compressor is shown under each condition (docs/protocol.md §8).

`own` shows the group's goal, `none` the empty goal, `cross` another goal of the same context (of
another context when the context has a single goal), picked by a hash of the run seed and goal ids so
that the pairing is deterministic and independent of row order, fallback included. Three bounds show
no goal and call no compressor: the ceilings `full` (the memory is the source itself) and `oracle` (the
source sentences holding gold evidence, cut to L: an upper bound for extractive compression, built on the
judge side), and the floor `closed` (the empty memory: what the reader answers from its own knowledge).
Questions are always the group's own.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from gacc_hf.data.schema import Group
from gacc_hf.protocol import CEILINGS, CONDITIONS


@dataclass(frozen=True)
class ShownGoal:
    goal_id: str  # "" for the empty goal and for the full condition
    text: str


def check_conditions(conditions: Sequence[str]) -> tuple[str, ...]:
    """Validate condition names, keeping order and dropping repeats."""
    if isinstance(conditions, str):
        conditions = [c.strip() for c in conditions.split(",")]
    bad = [c for c in conditions if c not in CONDITIONS]
    if bad or not conditions:
        raise ValueError(f"unknown condition(s) {bad or conditions}; choose from {', '.join(CONDITIONS)}")
    return tuple(dict.fromkeys(conditions))


def _rank(seed: int, goal_id: str, candidate: str) -> str:
    return hashlib.sha256(f"{seed}\x00{goal_id}\x00{candidate}".encode()).hexdigest()


class GoalAssigner:
    """Assigns the shown goal of every (group, condition) for one dataset and seed."""

    def __init__(self, groups: Sequence[Group], seed: int = 0) -> None:
        self.seed = seed
        self._by_context: dict[str, list[Group]] = defaultdict(list)
        for g in groups:
            self._by_context[g.context_id].append(g)
        # a ring of every goal in seeded hash order: the same whatever the row order
        self._ring = sorted(groups, key=lambda g: _rank(seed, "", g.goal_id))
        self._position = {g.goal_id: i for i, g in enumerate(self._ring)}

    def cross(self, group: Group) -> Group:
        """Another goal of the same context, else of another context; deterministic in the seed."""
        pool = [g for g in self._by_context[group.context_id] if g.goal_id != group.goal_id]
        if pool:
            return min(pool, key=lambda g: _rank(self.seed, group.goal_id, g.goal_id))
        if len(self._by_context) < 2:
            raise ValueError(f"condition 'cross' needs a second goal, but the dataset has only goal {group.goal_id!r}")
        # walk the ring from the goal's own place to the next goal of another context (O(1) on average)
        start = self._position[group.goal_id]
        for k in range(1, len(self._ring)):
            other = self._ring[(start + k) % len(self._ring)]
            if other.context_id != group.context_id:
                return other
        raise AssertionError("unreachable: another context exists")

    def shown(self, group: Group, condition: str) -> ShownGoal:
        if condition == "own":
            return ShownGoal(group.goal_id, group.goal)
        if condition in ("none", *CEILINGS):
            return ShownGoal("", "")
        if condition == "cross":
            other = self.cross(group)
            return ShownGoal(other.goal_id, other.goal)
        raise ValueError(f"unknown condition {condition!r}; choose from {', '.join(CONDITIONS)}")
