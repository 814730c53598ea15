"""Sentence splitting and budget packing shared by the extractive compressors and the oracle memory.

Extraction copies source text verbatim, so every fact it keeps is exact; what differs between
methods is only how sentences are scored. A source is split, and its sentences counted, for every goal,
condition and ratio it is compressed under: both are kept for the last few sources, so a long source
pays for them once.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import regex

from gacc_hf.text.matching import CJK_CLASS
from gacc_hf.tokenizer import Codec

_CLOSE = "”’」』）》〉】"
#: English: after `.`, `!` or `?` and whitespace, when the next word starts a sentence. Chinese (and
#: Japanese): right after `。！？；` (or the half-width `｡`) and any closing quotes, and after an
#: ellipsis `…` / `……` when a CJK character follows. A match is the whitespace at the cut: the Chinese
#: end marks and their quotes are read, then dropped from the match by `\K`, not looked back at. A
#: look-behind over a run of quotes would rescan the run at each of its characters, a time quadratic in
#: its length on a long line; every look-behind here has a fixed width.
_CJK_END = rf"[。！？；｡][{_CLOSE}]*+\K(?![。！？；｡…{_CLOSE}])\s*|…[{_CLOSE}]*+\K\s*(?=[{CJK_CLASS}])"
CJK_SENTENCE_END = regex.compile(_CJK_END)
SENTENCE_END = regex.compile(rf"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|{_CJK_END}")
SEPARATOR = "\n"


def split_sentences(text: str) -> list[str]:
    """Non-empty lines, each cut at the ends of its sentences (`SENTENCE_END`), in English and Chinese.

    >>> split_sentences("Summary\\n\\nThe disk filled. Failover ran at 09:41! it did? yes")
    ['Summary', 'The disk filled.', 'Failover ran at 09:41! it did? yes']
    >>> split_sentences("磁盘写满了。他说：“切换吧！”随后切换……完成；共 47 分钟")
    ['磁盘写满了。', '他说：“切换吧！”', '随后切换……', '完成；', '共 47 分钟']
    """
    return list(_split(text))


@functools.lru_cache(maxsize=8)
def _split(text: str) -> tuple[str, ...]:
    return tuple(s.strip() for line in text.splitlines() for s in SENTENCE_END.split(line) if s.strip())


@functools.lru_cache(maxsize=8)
def _costs(sentences: tuple[str, ...], codec: Codec) -> tuple[int, ...]:
    """The cl100k tokens of each sentence with its separator."""
    return tuple(len(codec.encode(sentence + SEPARATOR)) for sentence in sentences)


def pack(sentences: Sequence[str], scores: Sequence[float], budget: int, codec: Codec) -> str:
    """The best-scoring sentences that fit `budget` cl100k tokens together, joined in source order.

    Sentences are tried best first; one that does not fit is skipped so a shorter one can still use
    the room. The joined text is re-counted, and the weakest kept sentence dropped until it fits.

    >>> from gacc_hf.tokenizer import get_codec
    >>> pack(["alpha beta.", "gamma.", "delta epsilon zeta eta."], [0.1, 0.9, 0.5], 5, get_codec())
    'alpha beta.\\ngamma.'
    """
    ranked = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))
    costs = _costs(tuple(sentences), codec)
    kept: list[int] = []
    used = 0
    for i in ranked:
        cost = costs[i]
        if used + cost <= budget:
            kept.append(i)
            used += cost
    while kept:
        text = SEPARATOR.join(sentences[i] for i in sorted(kept))
        if len(codec.encode(text)) <= budget:
            return text
        kept.pop()  # ranked order: the last kept is the weakest
    return ""
