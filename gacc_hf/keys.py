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


def answer_key(question_id: str, answer: str) -> str:
    """The key a judgement of one answer is filed under: 16 hex digits of sha256 of the question's id and the
    answer text, joined by a newline.

    Bound to the answer's text rather than to the cell it came from, so a person's label (`right`/`wrong`)
    follows the same answer across compressors, readers and runs, and an answer edited afterwards no longer
    matches its label."""
    return hashlib.sha256(f"{question_id}\n{answer}".encode()).hexdigest()[:16]
