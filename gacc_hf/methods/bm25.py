"""`bm25`: goal-conditioned sentence extraction ranked by BM25 (the `bm25s` package, MIT).

The source is split into sentences (`gacc_hf.text.sentences`, as for `embed`), each sentence is a BM25
document and the goal is the query. Sentences that share no word with the goal (all of them when there
is no goal) are ranked by centrality: the summed BM25 score of the sentence against every other sentence
as a query, so the sentences that repeat the source's own vocabulary come first; remaining ties keep
source order, which makes a source without repeated words degrade to its lead. The best sentences are
kept in source order while their cl100k tokens fit the budget L. The output is copied from the source,
so it never states a fact the source does not.

Centrality costs a query per sentence, quadratic in the sentences of a source, and does not depend on the
goal: it is summed in numpy (the same additions, in the same order, as a plain loop) and kept for the last
few sources, so the goals, conditions and ratios of one long source pay for it once.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import sys
from collections.abc import Sequence

import numpy as np
import regex

from gacc_hf.protocol import CompressorInput
from gacc_hf.text import matching
from gacc_hf.text import sentences as shared
from gacc_hf.text.matching import CJK_CLASS, cjk_terms
from gacc_hf.text.sentences import pack, split_sentences
from gacc_hf.tokenizer import get_codec

#: Lucene BM25 with the usual k1 / b; tokens are lower-cased words of 2+ characters minus English stopwords,
#: and the character bigrams of Chinese text (`gacc_hf.text.matching.cjk_terms`), which has no spaces between words.
_CJK_RUN = regex.compile(f"[{CJK_CLASS}]+")
SETTINGS = {"method": "lucene", "k1": 1.5, "b": 0.75, "stopwords": "en", "lower": True}


def _tokenize(texts: Sequence[str]) -> list[list[str]]:
    import bm25s

    return bm25s.tokenize(
        [_CJK_RUN.sub(lambda run: f" {' '.join(cjk_terms(run[0]))} ", text) for text in texts],
        lower=SETTINGS["lower"],
        stopwords=SETTINGS["stopwords"],
        return_ids=False,
        show_progress=False,
    )


def rank(sentences: Sequence[str], goal: str) -> list[int]:
    """Sentence indices, best first: BM25 against the goal, then centrality, then source order.

    >>> rank(["Lunch was pizza.", "The disk filled up.", "Disk alerts fired late."], "why did the disk fill")
    [1, 2, 0]
    """
    found = _indexed(tuple(sentences))
    if found is None:  # no indexable word anywhere (or no sentence): BM25 has nothing to rank
        return list(range(len(sentences)))
    index, centrality = found
    query = _tokenize([goal])[0] if goal.strip() else []
    relevance = index.get_scores(query).tolist() if query else [0.0] * len(sentences)
    return sorted(range(len(sentences)), key=lambda i: (-relevance[i], -centrality[i], i))


@functools.lru_cache(maxsize=4)
def _indexed(sentences: tuple[str, ...]) -> tuple[object, list[float]] | None:
    """The BM25 index of a source's sentences and each sentence's centrality; None when nothing is indexable."""
    import bm25s

    docs = _tokenize(sentences) if sentences else []
    if not any(docs):
        return None
    index = bm25s.BM25(method=SETTINGS["method"], k1=SETTINGS["k1"], b=SETTINGS["b"])
    index.index(docs, show_progress=False)
    centrality = np.zeros(len(sentences), dtype=np.float64)
    for j, other in enumerate(docs):
        if other:
            scores = index.get_scores(other).astype(np.float64)  # float32 to float64: exact, as .tolist() is
            scores[j] = 0.0  # a sentence is not its own neighbour; adding 0.0 leaves a sum unchanged
            centrality += scores
    return index, centrality.tolist()


class BM25Compressor:
    """Keeps the sentences BM25 ranks highest for the goal (the most central ones without a goal) within L."""

    name = "bm25"

    def __init__(self) -> None:
        import bm25s  # fail at construction, not at the first call, when the package is missing

        # the code of this module and of the shared splitter / packer: editing either re-keys the cache
        code = "".join(inspect.getsource(module) for module in (sys.modules[__name__], shared, matching))
        blob = json.dumps({"bm25s": bm25s.__version__, **SETTINGS, "code": hashlib.sha256(code.encode()).hexdigest()})
        self.revision = f"bm25-v2@{hashlib.sha256(blob.encode()).hexdigest()[:16]}"

    def __call__(self, item: CompressorInput) -> str:
        sentences = split_sentences(item.context)
        order = rank(sentences, item.goal)
        scores = [0.0] * len(sentences)
        for position, i in enumerate(order):
            scores[i] = -float(position)  # `pack` takes best-first scores: the rank itself
        return pack(sentences, scores, item.token_budget, get_codec())
