"""Sentence splitting and budget packing shared by the extractive compressors and the oracle memory.

Extraction copies source text verbatim, so every fact it keeps is exact; what differs between
methods is only how sentences are scored.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gacc_hf.tokenizer import Codec

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
SEPARATOR = "\n"


def split_sentences(text: str) -> list[str]:
    """Non-empty lines, each cut after `.`, `!` or `?` when the next word starts a sentence.

    >>> split_sentences("Summary\\n\\nThe disk filled. Failover ran at 09:41! it did? yes")
    ['Summary', 'The disk filled.', 'Failover ran at 09:41! it did? yes']
    """
    return [s.strip() for line in text.splitlines() for s in SENTENCE_END.split(line) if s.strip()]


def pack(sentences: Sequence[str], scores: Sequence[float], budget: int, codec: Codec) -> str:
    """The best-scoring sentences that fit `budget` cl100k tokens together, joined in source order.

    Sentences are tried best first; one that does not fit is skipped so a shorter one can still use
    the room. The joined text is re-counted, and the weakest kept sentence dropped until it fits.

    >>> from gacc_hf.tokenizer import get_codec
    >>> pack(["alpha beta.", "gamma.", "delta epsilon zeta eta."], [0.1, 0.9, 0.5], 5, get_codec())
    'alpha beta.\\ngamma.'
    """
    ranked = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))
    kept: list[int] = []
    used = 0
    for i in ranked:
        cost = len(codec.encode(sentences[i] + SEPARATOR))
        if used + cost <= budget:
            kept.append(i)
            used += cost
    while kept:
        text = SEPARATOR.join(sentences[i] for i in sorted(kept))
        if len(codec.encode(text)) <= budget:
            return text
        kept.pop()  # ranked order: the last kept is the weakest
    return ""
