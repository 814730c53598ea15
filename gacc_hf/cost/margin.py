"""How many more prompt tokens than the local count a server may bill, learned per method: the margin a
cost limit keeps (`gacc_hf.cost.limits`).

A served method's prompt is counted here in cl100k over the text of its messages: the server's tokenizer
and chat template are unknown, so its `usage` may say more. What a server may credibly count for a call
whose messages hold `n` cl100k tokens is `CREDIBLE_RATIO` × n + `TEMPLATE_TOKENS` (a tokenizer four times
as fine as cl100k, and a chat template); a report over that, or of more completion tokens than the call
allowed, is not credible. Until a method's server has reported the usage of one of its calls, each of its
calls is reserved at that ceiling; after that, at the largest ratio of reported to local prompt tokens
seen so far for the method (at least 1, at most the ceiling).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

CREDIBLE_RATIO = 4
TEMPLATE_TOKENS = 128


def credible_prompt(local: int) -> int:
    """The most prompt tokens a server may credibly report for a call counted here at `local`.

    >>> credible_prompt(1000), credible_prompt(0)
    (4128, 128)
    """
    return CREDIBLE_RATIO * local + TEMPLATE_TOKENS


def credible(reported: tuple[int, int], local_prompt: int, completion_limit: int) -> bool:
    """Whether a server's (prompt, completion) tokens for a call can be believed (see the module).

    >>> credible((4128, 8), 1000, 8), credible((4129, 8), 1000, 8), credible((10, 9), 1000, 8)
    (True, False, False)
    """
    return reported[0] <= credible_prompt(local_prompt) and reported[1] <= completion_limit


@dataclass
class Margin:
    """One served method's margin: the largest ratio of reported to local prompt tokens, and of how many calls."""

    ratio: float | None = None  # None: no usage reported yet
    calls: int = 0

    def prompt_reserve(self, local: int) -> int:
        """The prompt tokens a call counted here at `local` is reserved at.

        >>> Margin().prompt_reserve(100), Margin(2.0, 3).prompt_reserve(100), Margin(0.4, 3).prompt_reserve(100)
        (528, 200, 100)
        """
        ceiling = credible_prompt(local)
        if self.ratio is None:
            return ceiling
        return min(ceiling, max(local, math.ceil(self.ratio * local)))

    def learn(self, local: int, reported: int) -> None:
        """Count one settled call whose prompt was counted here at `local` and by its server at `reported`."""
        if local > 0:
            self.ratio = max(self.ratio or 0.0, reported / local)
            self.calls += 1

    def describe(self) -> str:
        """The margin in words, for a stop message.

        >>> Margin().describe(), Margin(2.0, 6).describe(), Margin(0.4, 1).describe()
        ('4x + 128 tokens (no usage reported yet)', '2x (learned from 6 calls)', '1x (learned from 1 calls)')
        """
        if self.ratio is None:
            return f"{CREDIBLE_RATIO}x + {TEMPLATE_TOKENS} tokens (no usage reported yet)"
        return f"{max(1.0, self.ratio):.3g}x (learned from {self.calls} calls)"
