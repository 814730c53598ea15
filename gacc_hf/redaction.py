"""Keep credentials inside the process: `redact` hides them in any text before it is shown or written.

Hidden are: the user-info of URLs (`http://user:pass@host/` becomes `http://***@host/`); the value of a
query option named like a credential (`?api_key=…`, `token`, `secret`, `password`, `auth`…); values shaped
like a key (`sk-…`, `hf_…`, a Bearer token); and every secret value registered with `register` (the API
keys a client read from the environment), wherever it appears, even when a misbehaving server echoes it
back in an error body. Call `redact` on anything
that names a method or quotes a server before it reaches a message, a log, a results file or a card.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from urllib.parse import unquote_plus

# scheme://user-info@ : the user-info is everything up to the last '@' before the host's '/', '?' or '#'
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#@\s]*(?:@[^/?#@\s]*)*)@")
# `?name=value` / `&name=value` where the name says credential (not `api_key_env`, which names a variable)
_CREDENTIAL_OPTION = re.compile(
    r"(?i)(?P<head>[?&](?:api[_-]?key|key|access[_-]?token|token|secret|password|passwd|pwd|auth|authorization)=)"
    r"(?P<value>[^&#\s'\"]*)"
)
# values shaped like API keys: OpenAI-style `sk-…`, Hugging Face `hf_…`, and any Bearer token
_KEY_SHAPED = re.compile(r"\b(?:sk-[A-Za-z0-9_-]{8,}|hf_[A-Za-z0-9]{16,})|(?i:(?<=bearer )[^\s'\",]+)")
_MASK = "***"
_MIN_SECRET = 4  # shorter values would mask ordinary text
_lock = threading.Lock()
_secrets: set[str] = set()


def register(value: str | None) -> None:
    """Remember a secret value so that every later `redact` hides it."""
    if value and len(value) >= _MIN_SECRET:
        with _lock:
            _secrets.add(value)


def url_userinfo(url: str) -> str | None:
    """The user-info part of a URL (None when it has none).

    >>> url_userinfo("http://u:p@127.0.0.1:8/v1"), url_userinfo("http://127.0.0.1:8/v1")
    ('u:p', None)
    """
    match = _USERINFO.match(url)
    return match["userinfo"] if match else None


def redact(text: str) -> str:
    """`text` with URL user-info and registered secrets replaced by `***`.

    >>> redact("openai:m@http://user:pass@127.0.0.1:8000/v1?retries=1")
    'openai:m@http://***@127.0.0.1:8000/v1?retries=1'
    """
    text = _USERINFO.sub(lambda m: m["scheme"] + _MASK + "@", text)
    text = _CREDENTIAL_OPTION.sub(lambda m: m["head"] + _MASK, text)
    text = _KEY_SHAPED.sub(_MASK, text)
    with _lock:
        found = [s for s in _secrets if s in text]
    for secret in sorted(found, key=len, reverse=True):
        text = text.replace(secret, _MASK)
    return text


def mask_options(spec: str, masked: Callable[[str], bool]) -> str:
    """`spec` (`name?option=value&...`) with the value of every option that `masked` picks hidden, then redacted.

    For messages about options that are not understood: an unknown option's value may be a secret.

    >>> mask_options("m@http://h/v1?retries=2&apikey=abc", lambda name: name != "retries")
    'm@http://h/v1?retries=2&apikey=***'
    """
    head, sep, query = spec.partition("?")
    if not sep:
        return redact(spec)
    parts = []
    for part in query.split("&"):
        name, eq, _ = part.partition("=")
        parts.append(f"{name}={_MASK}" if eq and masked(unquote_plus(name)) else part)
    return redact(f"{head}?{'&'.join(parts)}")
