"""Rule judges: deterministic verdicts from the reader's answer and the gold references.

All three share one normaliser (lower case, punctuation, English articles and whitespace removed),
which the `evaluate` metric reuses so that its `default` config and the `exact` judge never disagree.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

from gacc_hf.protocol import JudgeInput

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = frozenset(string.punctuation) | {"\u2018", "\u2019", "\u201c", "\u201d", "\u2013", "\u2014"}
_DROP_PUNCT = str.maketrans(dict.fromkeys(_PUNCT))


@lru_cache(maxsize=1 << 16)
def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation and articles, collapse whitespace.

    Memoised: the evidence flags and the leak check normalise the same references and memories many
    times per run (profile of `benchmarks/harness.py`: a third of a warm rerun before).

    >>> normalize_answer("  The  Quick-Brown fox. ")
    'quickbrown fox'
    """
    text = unicodedata.normalize("NFKC", text).lower()
    text = text.translate(_DROP_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(answer: str, references: Iterable[str]) -> bool:
    """True when the normalised answer equals a normalised reference.

    >>> exact_match("the 45 minutes.", ["45 minutes", "forty-five minutes"])
    True
    """
    norm = normalize_answer(answer)
    return any(norm == normalize_answer(ref) for ref in references)


def contains_match(answer: str, references: Iterable[str]) -> bool:
    """True when a non-empty normalised reference occurs, on word boundaries, in the normalised answer.

    >>> contains_match("It stayed read-only for 45 minutes.", ["45 minutes"])
    True
    >>> contains_match("145 minutes", ["45 minutes"])
    False
    """
    norm = f" {normalize_answer(answer)} "
    return any((ref := normalize_answer(r)) and f" {ref} " in norm for r in references)


def token_f1(answer: str, reference: str) -> float:
    """SQuAD-style token F1 between normalised strings.

    >>> round(token_f1("primary database in us-east", "primary database"), 3)
    0.667
    """
    pred, gold = normalize_answer(answer).split(), normalize_answer(reference).split()
    if not pred or not gold:
        return float(pred == gold)
    overlap = sum((Counter(pred) & Counter(gold)).values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(pred), overlap / len(gold)
    return 2 * precision * recall / (precision + recall)


class ExactJudge:
    """Normalised exact match against any reference."""

    name = "exact"
    revision = "exact-v1"

    def __call__(self, item: JudgeInput) -> bool:
        return exact_match(item.answer, item.references)


class ContainsJudge:
    """A reference appears inside the answer (word-bounded, normalised)."""

    name = "contains"
    revision = "contains-v1"

    def __call__(self, item: JudgeInput) -> bool:
        return contains_match(item.answer, item.references)


class F1Judge:
    """Best token F1 over the references reaches `threshold`."""

    name = "f1"

    def __init__(self, threshold: float = 0.5) -> None:
        if not 0 < threshold <= 1:
            raise ValueError(f"f1 threshold must be in (0, 1], got {threshold}")
        self.threshold = threshold
        self.revision = f"f1-v1@{threshold}"

    def __call__(self, item: JudgeInput) -> bool:
        return max((token_f1(item.answer, ref) for ref in item.references), default=0.0) >= self.threshold
