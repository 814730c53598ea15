"""Credentials never leave the process: URL user-info and registered secrets are masked in any text."""

from __future__ import annotations

import pytest

from gacc_hf.redaction import redact, register, url_userinfo


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("openai:m@http://user:pass@127.0.0.1:8000/v1", "openai:m@http://***@127.0.0.1:8000/v1"),
        ("https://tok@host/v1?x=1", "https://***@host/v1?x=1"),
        ("http://u:p@ss@host/v1", "http://***@host/v1"),  # an '@' inside the password
        ("see http://a:b@h1/x and https://c:d@h2/y.", "see http://***@h1/x and https://***@h2/y."),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),  # nothing to hide
        ("http://host/path@not-userinfo", "http://host/path@not-userinfo"),
        ("org/model@v2 and mail me@example.com", "org/model@v2 and mail me@example.com"),
    ],
)
def test_url_userinfo_is_masked_and_nothing_else(text, shown):
    assert redact(text) == shown


def test_a_registered_secret_is_masked_wherever_it_appears():
    register("sk-redaction-test-41f3")
    register("abc")  # too short to mask safely: ignored
    assert redact('{"error": "bad key Bearer sk-redaction-test-41f3"}') == '{"error": "bad key Bearer ***"}'
    assert redact("abc def") == "abc def"


def test_url_userinfo():
    assert url_userinfo("http://u:p@h/v1") == "u:p"
    assert url_userinfo("http://@h/v1") == ""
    assert url_userinfo("http://h/v1") is None
