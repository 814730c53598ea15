"""The content addresses of the cache's entries (docs/protocol.md §11): `make_key` and `text_hash`.

Kept below every stage because the dataset builder, the run's stages and the integrity audits all address
the cache, and a key must be the same whoever derives it.
"""

from __future__ import annotations

import functools
import hashlib


def make_key(**parts: str | int | float | bool | None) -> str:
    """sha256 over the key parts in sorted order, as `name<US>value` records joined by `<RS>`.

    Values are scalars (texts enter as their `text_hash`), so the encoding is canonical and cheap.
    """
    blob = "\x1e".join(f"{name}\x1f{parts[name]!r}" for name in sorted(parts))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=1 << 16)
def text_hash(text: str) -> str:
    """sha256 of a text, the content address used inside keys (memoised: texts repeat across a plan)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
