"""Token budgets and the prefix rule that turns a compressor's output into the memory (docs/protocol.md §2, §3).

`L = floor(r * N)` is computed in exact rational arithmetic from the ratio's decimal spelling, so
0.29 * 100 is 29 (binary floating point would give 28). The memory is the longest token prefix of the
output that decodes without a split UTF-8 character and re-encodes to at most L tokens: a short output
is kept as it is (never padded), a long one is cut (never regenerated).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from decimal import Decimal
from fractions import Fraction
from numbers import Rational

from gacc_hf.tokenizer import Codec, get_codec

RatioLike = float | int | str | Fraction | Decimal
# Enters every memory key: a change to the cut rule (docs/protocol.md §3) must never reuse stale memories.
PROTOCOL_VERSION = "gacc-1"


def exact_ratio(ratio: RatioLike) -> Fraction:
    """The ratio as an exact fraction, read from its shortest decimal spelling (or a "p/q" string).

    A float is read as the decimal it prints as: 1/3 as a float is 0.3333333333333333, a little under
    one third, so `token_budget(21, 1/7)` is 2; `Fraction(1, 7)` or "1/7" gives 3.

    Raises ValueError for NaN, infinities, booleans, non-numbers and values outside [0, 1].
    """
    if isinstance(ratio, bool):
        raise ValueError(f"retention ratio must be a number in [0, 1], got {ratio!r}")
    try:
        if isinstance(ratio, Rational):
            value = Fraction(ratio)
        elif isinstance(ratio, float):
            if not math.isfinite(ratio):
                raise ValueError(f"retention ratio must be a finite number in [0, 1], got {ratio!r}")
            value = Fraction(repr(ratio))
        elif isinstance(ratio, Decimal):
            if not ratio.is_finite():
                raise ValueError(f"retention ratio must be a finite number in [0, 1], got {ratio!r}")
            value = Fraction(ratio)
        elif isinstance(ratio, str) and "/" in ratio:  # "1/3": a fraction, exactly
            value = Fraction(ratio.strip())
        elif isinstance(ratio, str):
            value = exact_ratio(Decimal(ratio.strip()))
        else:
            raise TypeError
    except (TypeError, ArithmeticError) as exc:
        raise ValueError(f"retention ratio must be a number in [0, 1], got {ratio!r}") from exc
    if not 0 <= value <= 1:
        raise ValueError(f"retention ratio must be in [0, 1], got {ratio!r}")
    return value


def token_budget(n_tokens: int, ratio: RatioLike) -> int:
    """L = floor(ratio * n_tokens), exactly.

    >>> token_budget(100, 0.29)
    29
    >>> token_budget(7, 0.5)
    3
    """
    if isinstance(n_tokens, bool) or not isinstance(n_tokens, int) or n_tokens < 0:
        raise ValueError(f"n_tokens must be a non-negative int, got {n_tokens!r}")
    return math.floor(exact_ratio(ratio) * n_tokens)


@dataclass(frozen=True, slots=True)
class Memory:
    """The memory a reader receives, with the budget ledger fields of docs/protocol.md §9."""

    text: str
    budget: int
    proposed_tokens: int
    retained_tokens: int
    reencoded_tokens: int
    truncated: bool
    padding_tokens: int = 0

    @property
    def unused_budget(self) -> int:
        return self.budget - self.retained_tokens

    def ledger(self) -> dict[str, int | bool]:
        row = asdict(self)
        row.pop("text")
        row["unused_budget"] = self.unused_budget
        return row


def fit_to_budget(text: str, budget: int, codec: Codec | None = None) -> Memory:
    """Cut `text` to at most `budget` cl100k tokens by token prefix (docs/protocol.md §3).

    >>> m = fit_to_budget("hello world", 1)
    >>> m.text, m.retained_tokens, m.truncated
    ('hello', 1, True)
    """
    if not isinstance(text, str):
        raise TypeError(f"compressor output must be str, got {type(text).__name__}")
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise ValueError(f"budget must be a non-negative int, got {budget!r}")
    codec = codec or get_codec()
    ids = codec.encode(text)
    proposed = len(ids)
    if proposed <= budget:
        return Memory(text, budget, proposed, proposed, len(codec.encode(text)), truncated=False)
    keep = budget
    while True:
        memory = codec.decode(ids[:keep])
        reencoded = len(codec.encode(memory)) if keep else 0
        if reencoded <= budget:
            return Memory(memory, budget, proposed, keep, reencoded, truncated=True)
        keep -= 1
