import hashlib

from gacc_hf.keys import answer_key, make_key, text_hash


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


def test_answer_key_is_bound_to_the_question_and_the_answer_text():
    # hand-made: sha256 of b"q1\nParis", its first 16 hex digits
    assert answer_key("q1", "Paris") == hashlib.sha256(b"q1\nParis").hexdigest()[:16]
    assert answer_key("目标/q1", "巴黎") == hashlib.sha256("目标/q1\n巴黎".encode()).hexdigest()[:16]
    assert answer_key("q1", "Paris.") != answer_key("q1", "Paris")  # an edited answer no longer matches
    assert answer_key("q2", "Paris") != answer_key("q1", "Paris")
