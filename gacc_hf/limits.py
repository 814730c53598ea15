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


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying how much was left out.

    >>> clip("abcdef", 3)
    'abc… (3 more characters)'
    """
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit} more characters)"
