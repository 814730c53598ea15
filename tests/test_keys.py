import hashlib

from gacc_hf.keys import make_key, text_hash


def test_keys_bind_every_part():
    base = dict(context=text_hash("c"), goal=text_hash("g"), budget=10, tokenizer="t@1", compressor="x", revision="1")
    key = make_key(**base)
    assert key == make_key(**dict(reversed(base.items())))  # order-free
    for part, other in [("goal", text_hash("g2")), ("budget", 11), ("tokenizer", "t@2"), ("revision", "2")]:
        assert make_key(**{**base, part: other}) != key
    assert make_key(budget=1) != make_key(budget="1")  # types are part of the key


def test_text_hash_is_the_sha256_of_the_utf8_text():
    # the addresses already stored in caches: a move of the code must not change one byte of them
    assert text_hash("目标") == hashlib.sha256("目标".encode()).hexdigest()
    assert make_key(b=1, a="x") == hashlib.sha256(b"a\x1f'x'\x1eb\x1f1").hexdigest()
