"""Where a memory's text and a gold reference sit in a source, as character spans: what the results page marks.

A memory is cut into the pieces an extractive compressor copies (lines, then sentences: `split_sentences`), and
each piece is looked up verbatim in the source, after the previous piece first (extraction keeps source order),
else anywhere. Pieces found nowhere (an abstractive memory, a rewritten line) are returned apart, so they can be
shown beside the source. References are marked by a case-insensitive literal search in which any run of
whitespace matches any other: a reading aid. Whether a memory holds a reference is the matcher's call
(`gacc_hf.text.matching`), never this module's.
"""

from __future__ import annotations

import regex

from gacc_hf.text.matching import CJK_CLASS
from gacc_hf.text.sentences import split_sentences

Span = tuple[int, int]

#: marks of one reference at most: a one-letter key (`A`) would otherwise mark a whole source
MAX_MARKS = 50

# a letter or digit of a space-separated script: a reference starting or ending with one needs a boundary there
_WORD_EDGE = regex.compile(rf"[\p{{L}}\p{{N}}--[{CJK_CLASS}]]", regex.V1)


def kept_spans(source: str, memory: str) -> tuple[list[Span], list[str]]:
    """The spans of `source` that `memory` copies verbatim (merged, in order) and the pieces it holds that are
    not in `source`.

    >>> kept_spans("Disk full. Failover at 09:41. Done.", "Disk full.\\nDone.")
    ([(0, 10), (30, 35)], [])
    >>> kept_spans("磁盘写满了。随后切换。完成。", "磁盘写满了。总结：切换")
    ([(0, 6)], ['总结：切换'])
    """
    text = memory.strip()
    if not text:
        return [], []
    whole = source.find(text)
    if whole >= 0:
        return [(whole, whole + len(text))], []
    spans: list[Span] = []
    missing: list[str] = []
    cursor = 0
    for line in filter(None, map(str.strip, memory.splitlines())):
        found = _find(source, line, cursor)  # a whole line first: the splitter only where it is needed
        for piece in [line] if found >= 0 else split_sentences(line):
            at = found if found >= 0 else _find(source, piece, cursor)
            if at < 0:
                missing.append(piece)
                continue
            spans.append((at, at + len(piece)))
            cursor = at + len(piece)
    return merge_spans(source, spans), missing


def _find(source: str, piece: str, cursor: int) -> int:
    """Where `piece` is in `source`: after `cursor` first (extraction keeps source order), else anywhere (the
    first), -1 if nowhere. The second search stops where the first began: nothing starts after `cursor`."""
    at = source.find(piece, cursor)
    return source.find(piece, 0, cursor + len(piece) - 1) if at < 0 else at


def merge_spans(source: str, spans: list[Span]) -> list[Span]:
    """Spans sorted, with those that overlap or are separated only by whitespace of `source` joined.

    >>> merge_spans("ab cd, ef", [(7, 9), (0, 2), (3, 5)])
    [(0, 5), (7, 9)]
    """
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and (start <= merged[-1][1] or not source[merged[-1][1] : start].strip()):
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def reference_marks(source: str, reference: str) -> list[Span]:
    """Where `reference` occurs in `source` (case-insensitive, whitespace runs alike, whole words at the edges of
    space-separated scripts), at most `MAX_MARKS` spans.

    >>> reference_marks("It lasted 145 minutes, then 45  Minutes.", "45 minutes")
    [(28, 39)]
    >>> reference_marks("加载数据集时出错", "数据集")
    [(2, 5)]
    """
    words = reference.split()
    if not words:
        return []
    pattern = regex.compile(r"\s+".join(regex.escape(w) for w in words), regex.IGNORECASE)
    head, tail = _WORD_EDGE.match(words[0][0]) is not None, _WORD_EDGE.match(words[-1][-1]) is not None
    marks = []
    for found in pattern.finditer(source, overlapped=False):
        start, end = found.span()
        if (head and start and _WORD_EDGE.match(source[start - 1])) or (
            tail and end < len(source) and _WORD_EDGE.match(source[end])
        ):
            continue
        marks.append((start, end))
        if len(marks) == MAX_MARKS:
            break
    return marks
