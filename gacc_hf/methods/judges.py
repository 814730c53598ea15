"""Rule judges: deterministic verdicts from the reader's answer and the gold references.

All three compare through `gacc_hf.text.matching` (script-aware: English and Chinese), which evidence recall,
the oracle, the leak audit and the `evaluate` metric share, so that they never disagree.
"""

from __future__ import annotations

from gacc_hf.protocol import JudgeInput
from gacc_hf.text.matching import contains as contains_match
from gacc_hf.text.matching import exact as exact_match
from gacc_hf.text.matching import f1 as token_f1
from gacc_hf.text.matching import normalize_answer

__all__ = ["ContainsJudge", "ExactJudge", "F1Judge", "contains_match", "exact_match", "normalize_answer", "token_f1"]


class ExactJudge:
    """Normalised exact match against any reference."""

    name = "exact"
    revision = "exact-v3"

    def __call__(self, item: JudgeInput) -> bool:
        return exact_match(item.answer, item.references)


class ContainsJudge:
    """A reference appears inside the answer (word-bounded, normalised)."""

    name = "contains"
    revision = "contains-v3"

    def __call__(self, item: JudgeInput) -> bool:
        return contains_match(item.answer, item.references)


class F1Judge:
    """Best token F1 over the references reaches `threshold`."""

    name = "f1"

    def __init__(self, threshold: float = 0.5) -> None:
        if not 0 < threshold <= 1:
            raise ValueError(f"f1 threshold must be in (0, 1], got {threshold}")
        self.threshold = threshold
        self.revision = f"f1-v3@{threshold}"

    def __call__(self, item: JudgeInput) -> bool:
        return max((token_f1(item.answer, ref) for ref in item.references), default=0.0) >= self.threshold
