"""Rule compressors and the `fields` reader: no model, fully deterministic, free to run at scale.

A source is compressed under every goal, condition and ratio of a run: its tokens (`truncate`) and its
lines with their token counts and content words (`goal-lines`) are kept for the last few sources, so a long
source is encoded and split once, not once per memory.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from gacc_hf.protocol import CompressorInput, ReaderInput
from gacc_hf.text.matching import cjk_terms
from gacc_hf.text.sentences import CJK_SENTENCE_END, SENTENCE_END
from gacc_hf.tokenizer import get_codec

_WORD = re.compile(r"[a-z0-9]+")
_FIELD_LINE = re.compile(r"^\s*(?:[-*]\s*)?([^:\n]{1,80}?)\s*:\s*(.+?)\s*$", re.MULTILINE)
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "the",
        "this",
        "to",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
        "need",
        "want",
        "know",
        "about",
    ]
)


def content_words(text: str) -> set[str]:
    """Lower-cased alphanumeric words minus stopwords, and the character bigrams of Chinese text.

    >>> sorted(content_words("Why did the disk fill? 磁盘为何写满"))
    ['did', 'disk', 'fill', '为何', '何写', '写满', '盘为', '磁盘']
    """
    return {w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS} | set(cjk_terms(text))


class TruncateCompressor:
    """Keeps the head of the source: the goal-blind baseline every compressor should beat."""

    name = "truncate"
    revision = "truncate-v1"

    def __call__(self, item: CompressorInput) -> str:
        return get_codec().decode(_tokens(item.context)[: item.token_budget])


@functools.lru_cache(maxsize=8)
def _tokens(text: str) -> tuple[int, ...]:
    return tuple(get_codec().encode(text))


class _Line(NamedTuple):
    """A line (or sentence) of a source, its cl100k tokens with a line break, and its content words."""

    text: str
    cost: int
    words: frozenset[str]


def _measure(text: str) -> _Line:
    return _Line(text, len(get_codec().encode(text + "\n")), frozenset(content_words(text)))


@functools.lru_cache(maxsize=4096)
def _sentences(line: str) -> tuple[_Line, ...]:
    """The sentences of a line, for a line longer than a budget."""
    return tuple(_measure(part) for part in SENTENCE_END.split(line))


@functools.lru_cache(maxsize=8)
def _lines(context: str) -> tuple[_Line, ...]:
    """The source's lines, a Chinese line cut into its sentences."""
    parts = (part for line in context.splitlines() for part in CJK_SENTENCE_END.split(line) if part or not line)
    return tuple(_measure(part) for part in parts)


class GoalLinesCompressor:
    """Keeps the lines that share content words with the goal, in source order, packed to the budget.

    A Chinese line is cut into its sentences (`CJK_SENTENCE_END`), so a long paragraph on one line is
    not all or nothing; so is any line longer than the whole budget, in English too (`SENTENCE_END`): text
    without line breaks is then packed sentence by sentence instead of giving an empty memory. When not
    even one sentence fits, the head of the first matching sentence is kept, cut to the budget. With an
    empty goal no line matches, so it falls back to the head of the source.
    """

    name = "goal-lines"
    revision = "goal-lines-v3"

    def __call__(self, item: CompressorInput) -> str:
        codec = get_codec()
        goal = content_words(item.goal)
        lines = [
            part
            for line in _lines(item.context)
            for part in (_sentences(line.text) if line.cost > item.token_budget else [line])
        ]
        picked = [ln for ln in lines if goal & ln.words] if goal else []
        kept: list[str] = []
        used = 0
        for line in picked or lines:
            if used + line.cost > item.token_budget:
                if picked:
                    continue
                break
            kept.append(line.text)
            used += line.cost
        if not kept and (picked or lines):  # one sentence longer than the budget: its head
            return codec.decode(codec.encode((picked or lines)[0].text)[: item.token_budget])
        return "\n".join(kept)


@functools.lru_cache(maxsize=256)
def _fields(memory: str) -> tuple[tuple[frozenset[str], str], ...]:
    """The `key: value` lines of a memory with their key words (memoised: one memory serves many questions)."""
    parsed = ((frozenset(content_words(key)), value) for key, value in _FIELD_LINE.findall(memory))
    return tuple((words, value) for words, value in parsed if words)


class FieldsReader:
    """Answers "what is the <key>?" questions from `key: value` lines of the memory.

    The key whose words are best covered by the question wins; no matching line gives "unknown".
    """

    name = "fields"
    revision = "fields-v1"

    def __call__(self, item: ReaderInput) -> str:
        question = content_words(item.question)
        best, best_score = "unknown", 0.0
        for words, value in _fields(item.memory):
            hit = len(words & question)
            score = hit / len(words) + hit * 1e-3
            if hit and score > best_score:
                best, best_score = value, score
        return best
