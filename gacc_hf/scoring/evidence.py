"""Where gold is allowed: evidence recall and the oracle memory (judge side only).

Both answer "did the fact survive compression?" without a reader. A question's evidence is in a
memory when one of its references occurs there, matched as the judges match (`gacc_hf.text.matching`:
script-aware, word-bounded only between space-separated words, so `45 minutes` is not found in
`145 minutes` while `数据集` is found in `加载数据集时`). The oracle memory is the source sentences
that hold such evidence for any question of the group, in source order, cut to the budget by the
protocol: the upper bound of extractive compression at that budget. It is built from gold, so it
never passes through a compressor.
"""

from __future__ import annotations

from collections.abc import Iterable

from gacc_hf.budget import Memory, fit_to_budget
from gacc_hf.data.schema import Question
from gacc_hf.text.matching import Normalized, contains, normalized
from gacc_hf.text.screen import contains_screened
from gacc_hf.text.sentences import SEPARATOR, split_sentences
from gacc_hf.tokenizer import Codec

#: The oracle's cache revision: its memories change whenever the matcher or the sentence splitter does.
ORACLE_REVISION = "oracle-v3"


def evidence_flags(memory: str | Normalized, questions: Iterable[Question]) -> list[bool]:
    """For each question, whether one of its references is in the memory (given as text or already normalised).

    >>> q = Question("q1", "How long?", ("45 minutes", "forty-five minutes"))
    >>> evidence_flags("It stayed read-only for 45 minutes.", [q]), evidence_flags("145 minutes", [q])
    ([True], [False])
    >>> evidence_flags("账本只读了 45 minutes。", [q])
    [True]
    """
    text = memory if isinstance(memory, Normalized) else normalized(memory)
    return [contains_screened(text, q.references) for q in questions]


def oracle_text(context: str, questions: Iterable[Question]) -> str:
    """The source sentences holding a reference of any of the questions, in source order."""
    refs = [r for q in questions for r in q.references]
    return SEPARATOR.join(s for s in split_sentences(context) if contains(s, refs))


def oracle_memory(context: str, questions: Iterable[Question], budget: int, codec: Codec | None = None) -> Memory:
    """The oracle memory at budget L: `oracle_text` cut to L tokens by the protocol's prefix rule."""
    return fit_to_budget(oracle_text(context, questions), budget, codec)
