"""The independent encoder's merge (`gacc_hf.bpe`): BPE's order of joins, and a cost that grows as n log n.

The small cases use made-up ranks whose results are worked out by hand in each comment (tiktoken's rule: join
the adjacent pair of lowest rank, the leftmost of equal ones, until no pair is a token), and tiktoken's own
encoder, given the same ranks, is asked as a second referee.
"""

import math
import random

import pytest
import tiktoken

from gacc_hf import bpe
from gacc_hf.bpe import IndependentEncoder, merge
from gacc_hf.tokenizer import get_codec, verified_ranks

BYTES = {b"a": 0, b"b": 1, b"c": 2, b"d": 3, b"x": 6}

# piece, ranks beyond single bytes, ids worked out by hand
HAND = [
    # "aa" at 0 and at 1 tie; the leftmost joins: [aa][a], and "aaa" is no token
    ("aaa", {b"aa": 10}, [10, 0]),
    # "bc" (11) ranks below "ab" (12) though it stands to its right: [a][bc], and "abc" is no token
    ("abc", {b"bc": 11, b"ab": 12}, [0, 11]),
    # [a][bc][d] after "bc" (11); the queued "ab" at 0 and "cd" at 2 are pairs no longer there and must be
    # skipped (joining them would make [abc] or [bcd] from the wrong parts); then "bcd" (14): [a][bcd]
    ("abcd", {b"bc": 11, b"ab": 12, b"cd": 13, b"bcd": 14}, [0, 14]),
    # "ab" at 0 and at 2 (rank 11): [ab][a][b]; the new pair "aba" ranks after them (15, as BPE training ranks
    # every token after its parts), so "ab" at 2 joins next: [ab][ab], and "abab" is no token
    ("abab", {b"ab": 11, b"aba": 15}, [11, 11]),
    # the same, but "aba" ranks before "ab" (8, a table no training made): after [ab][a][b] the lowest pair is
    # now "aba", which joins before "ab" at 2: [aba][b]
    ("abab", {b"ab": 11, b"aba": 8}, [8, 1]),
    # the whole piece is a token: one id, whatever its parts would merge into
    ("abc", {b"abc": 20}, [20]),
    ("x", {}, [6]),
]


@pytest.mark.parametrize(("piece", "extra", "ids"), HAND)
def test_joins_follow_rank_then_position(piece, extra, ids):
    ranks = {**BYTES, **extra}
    assert merge(piece.encode(), ranks) == ids
    referee = tiktoken.Encoding(name="toy", pat_str=r"[a-z]+", mergeable_ranks=ranks, special_tokens={})
    assert referee.encode_ordinary(piece) == ids


class Rank(int):
    """A rank that counts how often it is compared."""

    compared = 0

    def __lt__(self, other):
        Rank.compared += 1
        return int(self) < other

    def __le__(self, other):
        Rank.compared += 1
        return int(self) <= other

    def __gt__(self, other):
        Rank.compared += 1
        return int(self) > other

    def __ge__(self, other):
        Rank.compared += 1
        return int(self) >= other


class CountingRanks(dict):
    """cl100k_base's ranks (as `Rank`s), counting every look-up."""

    lookups = 0

    def get(self, key, default=None):
        CountingRanks.lookups += 1
        return super().get(key, default)

    def __getitem__(self, key):
        CountingRanks.lookups += 1
        return super().__getitem__(key)


@pytest.fixture(scope="module")
def counting_ranks():
    return CountingRanks({token: Rank(rank) for token, rank in verified_ranks().items()})


def _piece(kind, size, rng):
    if kind == "repeated":
        return "a" * size
    if kind == "letters":
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(size))
    return "".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(size // 3))  # three UTF-8 bytes each


@pytest.mark.parametrize("kind", ["repeated", "letters", "chinese"])
def test_a_long_piece_costs_n_log_n_look_ups_and_comparisons(kind, counting_ranks):
    # n bytes make n - 1 first pairs; a join removes a part (at most n - 1 joins) and looks up at most two new
    # pairs; the whole piece and the final parts are looked up once: at most 4n look-ups. Ranks are compared
    # in a binary heap of at most 3n entries (one per pair ever queued), log2(3n) comparisons a push and twice
    # that a pop, and twice a join when its new pairs are checked against the rank being joined. Rescanning
    # every pair after each join, as a plain BPE loop does, compares about n * n / 2 times (200 million here).
    text = _piece(kind, 20_000, random.Random(7))
    piece = text.encode()
    n = len(piece)
    CountingRanks.lookups = Rank.compared = 0
    ids = merge(piece, counting_ranks)
    assert ids == get_codec().encode(text)
    assert CountingRanks.lookups <= 4 * n
    assert Rank.compared <= 9 * n * math.log2(3 * n) + 2 * n


def test_a_pre_token_is_merged_once_and_the_memo_is_bounded(monkeypatch):
    merged = []
    monkeypatch.setattr(bpe, "merge", lambda piece, ranks: merged.append(piece) or [len(piece)])
    encoder = IndependentEncoder({})
    assert encoder.encode("one two one two one") == [3, 4, 4, 4, 4]  # "one", " two", " one", " two", " one"
    assert merged == [b"one", b" two", b" one"]  # each distinct pre-token once
    monkeypatch.setattr(bpe, "_MEMO_LIMIT", 2)
    full = IndependentEncoder({})
    assert full.count("one two three four") == 4  # four pre-tokens, one id each here
    assert list(full._memo) == ["one", " two"]  # " three" and " four" merged but not kept


def test_a_long_pre_token_is_not_remembered(monkeypatch):
    merged = []
    monkeypatch.setattr(bpe, "merge", lambda piece, ranks: merged.append(piece) or [len(piece)])
    encoder = IndependentEncoder({})
    long = "数" * bpe._MEMO_PIECE_CHARS
    assert encoder.count(f"{long} {long}x {long}x") == 3  # "数数…", " 数数…x", " 数数…x"
    assert merged == [long.encode(), f" {long}x".encode(), f" {long}x".encode()]  # the longer one merged twice
    assert list(encoder._memo) == [long]  # at the bound: kept; one over it: not
