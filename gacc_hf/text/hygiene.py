"""Text hygiene: every text the harness hashes, tokenises, stores or compares must be valid Unicode.

A Python `str` can hold lone surrogates (`"\\ud800"`, which `json.loads` makes from `"\\ud800"` escapes);
they cannot be encoded as UTF-8, so they would fail far downstream (in a cache write, in `datasets`,
in a Parquet file). They are caught where they enter: as validation problems of the data (row and
field), and, for a method's output, as the failure of that one item (`gacc_hf.run.calls.check_str`).

IDs are compared as users read them: two IDs that differ only by case or Unicode normalisation
(`"Q1"` / `"q1"`, `"é"` composed / decomposed) are a collision, and an ID with leading or trailing
whitespace is refused, because such IDs look the same in every report while naming different rows.

Invisible format characters (zero-width spaces and joiners, the soft hyphen, bidirectional controls such as
RLO, the Arabic tatweel, variation selectors) change how a text is stored but not what it says: the matcher
removes them before comparing (`strip_format`), and a text made only of them and whitespace is empty
(`visible`).
"""

from __future__ import annotations

import unicodedata

import regex

#: Unicode format characters (Cf), the Arabic tatweel (a stretching mark) and the variation selectors
_FORMAT = regex.compile(r"[\p{Cf}\u0640\ufe00-\ufe0f]+")


def strip_format(text: str) -> str:
    """The text without its invisible format characters.

    >>> strip_format("da\u200bta\u00adset \u202eok\u202c"), strip_format("数\u200d据")
    ('dataset ok', '数据')
    """
    return _FORMAT.sub("", text)


def visible(text: str) -> bool:
    """Whether the text holds anything but whitespace and format characters.

    >>> visible("\u200b\u200b\u200b"), visible(" \u00ad "), visible("。"), visible("\u200b数")
    (False, False, True, True)
    """
    return bool(strip_format(text).strip())


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
