"""`embed`: goal-conditioned extraction with all-MiniLM-L6-v2.

The source is split into sentences; each is scored by cosine similarity to the goal (with no goal, to
the centroid of all sentences: the most central sentences summarise the source best). The best ones
are kept, in source order, while their cl100k tokens fit the budget. Extraction copies source text
verbatim, so every fact it keeps is exact. `embed?device=cuda&threads=2` takes the local models'
execution options (device, threads); the vectors, and so the memories, do not depend on them.

Limit: all-MiniLM-L6-v2 is an English model and no offline multilingual sentence embedder with a clear
licence ships inside a PyPI package, so on Chinese goals `embed` is no better than no goal (Chinese
sample, r = 0.2: evidence 0.238 own vs 0.310 none, `benchmarks/chinese_matching.py --embed`).
"""

from __future__ import annotations

import hashlib
from typing import Any

from gacc_hf.methods.weights import ModelLoadError, ModelOptions, SentenceEncoder, load_sentence_encoder, split_spec
from gacc_hf.protocol import CompressorInput
from gacc_hf.text.sentences import SENTENCE_END, SEPARATOR, pack, split_sentences
from gacc_hf.tokenizer import get_codec

_MAX_CONTEXTS = 256  # sentence vectors kept per instance: every budget and goal of a source reuses them


class EmbedCompressor:
    """Keeps the sentences closest to the goal (or the most central ones without a goal) within the budget."""

    name = "embed"

    def __init__(self, encoder: SentenceEncoder | None = None) -> None:
        self.encoder = encoder or load_sentence_encoder()
        settings = f"{self.encoder.identity}|{SENTENCE_END.pattern}|{SEPARATOR!r}|cosine-goal|centroid-no-goal"
        self.revision = f"embed-v1@{hashlib.sha256(settings.encode()).hexdigest()[:16]}"
        self._vectors: dict[str, tuple[list[str], Any]] = {}

    def _sentences(self, context: str) -> tuple[list[str], Any]:
        if context not in self._vectors:
            if len(self._vectors) >= _MAX_CONTEXTS:
                self._vectors.pop(next(iter(self._vectors)))
            sentences = split_sentences(context)
            self._vectors[context] = (sentences, self.encoder.encode(sentences))
        return self._vectors[context]

    def scores(self, item: CompressorInput) -> list[float]:
        """One relevance score per sentence of `split_sentences(item.context)`."""
        sentences, vectors = self._sentences(item.context)
        if not sentences:
            return []
        target = self.encoder.encode([item.goal])[0] if item.goal.strip() else vectors.mean(dim=0)
        return (vectors @ target).tolist()

    def __call__(self, item: CompressorInput) -> str:
        sentences, _ = self._sentences(item.context)
        return pack(sentences, self.scores(item), item.token_budget, get_codec())


def from_spec(spec: str = "embed") -> EmbedCompressor:
    """`embed` or `embed?device=...&threads=...`; the options that would change outputs are refused."""
    _, options = split_spec(spec)
    given = [k for k in ("dtype", "max_new_tokens", "batch_size") if getattr(options, k) != getattr(ModelOptions(), k)]
    if given:
        raise ModelLoadError(f"compressor {spec!r}: option {given[0]} does not apply to embed (only device, threads)")
    return EmbedCompressor(load_sentence_encoder(options=options))
