"""Text hygiene: every text the harness hashes, tokenises, stores or compares must be valid Unicode.

A Python `str` can hold lone surrogates (`"\\ud800"`, which `json.loads` makes from `"\\ud800"` escapes);
they cannot be encoded as UTF-8, so they would fail far downstream (in a cache write, in `datasets`,
in a Parquet file). They are caught where they enter: as validation problems of the data (row and
field), and, for a method's output, as the failure of that one item (`gacc_hf.run.calls.check_str`).

IDs are compared as users read them: two IDs that differ only by case or Unicode normalisation
(`"Q1"` / `"q1"`, `"é"` composed / decomposed) are a collision, and an ID with leading or trailing
whitespace is refused, because such IDs look the same in every report while naming different rows.
"""

from __future__ import annotations

import unicodedata


def encoding_problem(text: str) -> str | None:
    """Why `text` cannot be written as UTF-8 (None: it can).

    >>> encoding_problem("ok ü 🙂") is None
    True
    >>> encoding_problem("a\\ud800b")
    'holds a lone surrogate U+D800 at character 1 (not encodable as UTF-8)'
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"holds a lone surrogate U+{ord(text[exc.start]):04X} at character {exc.start} (not encodable as UTF-8)"
    return None


def id_key(identifier: str) -> str:
    """The form under which two IDs collide: NFKC-normalised and case-folded.

    >>> id_key("Q1") == id_key("q1") == id_key("\\uff31\\uff11")  # fullwidth Q1
    True
    """
    return unicodedata.normalize("NFKC", identifier).casefold()


def id_problem(identifier: str) -> str | None:
    """Why a string cannot be an ID (None: it can): padding, control characters, unencodable text.

    >>> id_problem(" ctx-1")
    'has leading or trailing whitespace'
    >>> id_problem("a\\tb")
    'holds a control character U+0009'
    """
    if identifier.isprintable() and identifier == identifier.strip():
        return None  # the common case, in C: no control, format, surrogate or other unprintable character
    problem = encoding_problem(identifier)
    if problem:
        return problem
    if identifier != identifier.strip():
        return "has leading or trailing whitespace"
    for ch in identifier:
        if unicodedata.category(ch) in ("Cc", "Cf"):
            return f"holds a control character U+{ord(ch):04X}"
    return None
