"""Verified seals: what `gacc board` made of a run whose checks passed, kept by the exact bytes they were made from.

A board verifies each run as `gacc report` does (every figure re-derived from its answers) and renders its page,
seconds a run at the release's size. A seal keeps what that gave, the verified `results.json` document, the run's
board cells and its page, in the gacc-hf cache folder (`$GACC_HF_CACHE`, else `$XDG_CACHE_HOME/gacc-hf` or
`~/.cache/gacc-hf`, under `verified/`), never in the results folder. A seal is found by its name, the sha256 of:

- the path and bytes of every file in the run's folder (its data, `results.json`, the plots the page inlines);
- the code that checks and renders: the path and bytes of every file of the gacc_hf package in use, and the
  versions of Python, numpy, pandas, pyarrow and Jinja;
- the name the run's page is filed under on the board.

An edit to any byte of any of them gives another name, which no seal holds, so the run is verified afresh; a file
changed while it was being checked gives no seal (the folder is hashed before and after). A run whose checks
warned (CIs another bootstrap drew) is never sealed, so the warning is given every time. The cache folder is
trusted as the run cache is: whoever can write there can write a seal.
"""

from __future__ import annotations

import functools
import hashlib
import json
import platform
import zlib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import gacc_hf
from gacc_hf import strict_json
from gacc_hf.methods.weights import model_cache_dir
from gacc_hf.results.atomic import write_atomic

#: bumped when what a seal holds changes
SEAL_VERSION = 1
SEALS_DIR = "verified"
_LIBRARIES = ("numpy", "pandas", "pyarrow", "jinja2")


@dataclass(frozen=True)
class Sealed:
    """What a board keeps of a verified run: its `results.json` document, its board cells and its page."""

    payload: dict[str, Any]
    cells: list[dict[str, Any]]
    page: bytes


def seals_dir() -> Path:
    """Where seals are kept: `verified/` in the gacc-hf cache folder."""
    return model_cache_dir() / SEALS_DIR


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """sha256 of every file of the gacc_hf package in use (path and bytes) and of the library versions."""
    digest = hashlib.sha256(f"python {platform.python_version()}\n".encode())
    for name in _LIBRARIES:
        digest.update(f"{name} {metadata.version(name)}\n".encode())
    root = Path(gacc_hf.__file__).parent
    _hash_tree(digest, root, (p for p in root.rglob("*") if "__pycache__" not in p.parts))
    return digest.hexdigest()


def seal_name(folder: Path, label: str) -> str | None:
    """The seal's name for a run's folder filed under `label` (see the module); None where it is not a folder."""
    if not folder.is_dir():
        return None
    digest = hashlib.sha256(f"gacc board seal {SEAL_VERSION}\n{code_fingerprint()}\n{label}\n".encode())
    _hash_tree(digest, folder, folder.rglob("*"))
    return digest.hexdigest()


def _hash_tree(digest: Any, root: Path, paths: Any) -> None:
    """Each regular file's path (relative to `root`), size and bytes, in path order, into `digest`."""
    for path in sorted(p for p in paths if p.is_file()):
        data = path.read_bytes()
        digest.update(f"{path.relative_to(root).as_posix()}\0{len(data)}\0".encode())
        digest.update(data)


def _paths(name: str, where: Path) -> tuple[Path, Path]:
    folder = where / name[:2]
    return folder / f"{name}.json", folder / f"{name}.html.z"


def read_seal(name: str, where: Path) -> Sealed | None:
    """The seal of that name, or None where there is none (or it cannot be read: then the run is verified)."""
    doc_path, page_path = _paths(name, where)
    try:
        doc = json.loads(doc_path.read_bytes())
        page = zlib.decompress(page_path.read_bytes())
    except (OSError, ValueError, zlib.error):
        return None
    if not isinstance(doc, dict) or doc.get("seal") != SEAL_VERSION or doc.get("name") != name:
        return None
    if hashlib.sha256(page).hexdigest() != doc.get("page_sha256"):
        return None
    return Sealed(doc["payload"], doc["cells"], page)


def write_seal(name: str, where: Path, sealed: Sealed) -> bool:
    """Keep a seal (page first, then the document that names its sha256: a seal cut short is never read).

    Returns whether it was kept: a cache folder that cannot be written leaves the run unsealed, never the board
    unbuilt."""
    doc_path, page_path = _paths(name, where)
    doc = {
        "seal": SEAL_VERSION,
        "name": name,
        "page_sha256": hashlib.sha256(sealed.page).hexdigest(),
        "payload": sealed.payload,
        "cells": sealed.cells,
    }
    try:
        page_path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(page_path, zlib.compress(sealed.page, 1))
        write_atomic(doc_path, strict_json.dumps(doc, str(doc_path), separators=(",", ":")).encode("utf-8"))
    except OSError:
        return False
    return True
