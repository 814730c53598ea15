"""The caps that keep one misbehaving server, method or option from taking unbounded time, memory or disk.

Stated in docs/scaling-and-servers.md. Each overflow is refused with the cap named: a reply or an answer
over its cap is one failed item (never cached, so a rerun retries it), an option over its cap is refused
before any work.
"""

from __future__ import annotations

# Bytes of one server reply read (after gzip/deflate decoding, so a small compressed reply cannot inflate
# past it): far above any answer, verdict or compressed memory (a 100k-token memory is ~0.5 MB of JSON).
MAX_RESPONSE_BYTES = 2 * 1024 * 1024
# Characters of one reader answer stored (the cache, answers.parquet); a compressor's output is cut to L.
MAX_ANSWER_CHARS = 20_000
# Characters of one recorded failure message (results.json `errors`, the report).
MAX_ERROR_CHARS = 2_000
# Bootstrap resamples: 8 bytes per resample and score series; a million already gives CIs stable to 1e-4.
MAX_BOOTSTRAP = 1_000_000


def check_resampling(bootstrap: int, seed: int, names: tuple[str, str] = ("--bootstrap", "--seed")) -> None:
    """Refuse, before any work, a bootstrap count below 0 or over `MAX_BOOTSTRAP` and a negative seed: the
    one check of `gacc run` and `gacc compare` (`names` say where each value came from).

    >>> check_resampling(1000, 0)
    >>> check_resampling(-3, 0)
    Traceback (most recent call last):
    ...
    ValueError: --bootstrap must be >= 0, got -3
    """
    if bootstrap < 0:
        raise ValueError(f"{names[0]} must be >= 0, got {bootstrap}")
    if bootstrap > MAX_BOOTSTRAP:  # refused now, not after the work as a MemoryError or hours of resampling
        raise ValueError(
            f"{names[0]} {bootstrap} is over the cap of {MAX_BOOTSTRAP} resamples (8 bytes each per score, "
            "held at once); 1000 give the usual 95% intervals"
        )
    if seed < 0:
        raise ValueError(f"{names[1]} must be >= 0, got {seed}")


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying how much was left out.

    >>> clip("abcdef", 3)
    'abc… (3 more characters)'
    """
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit} more characters)"
