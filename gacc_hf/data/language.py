"""Language tags of GACC rows: checking a declared BCP-47 tag, and detecting the language of untagged text.

GACC-Bench is English and Chinese. A row may declare its language in the optional `language` column (a
well-formed BCP-47 tag such as `en`, `zh` or `zh-Hans`, kept in its canonical letter case); a row without
it gets the language detected from its context, goal and questions and is recorded as detected. Detection
tells apart only the benchmark's two languages, by script: text written mostly in Han characters is `zh`,
any other text is `en`. Data in a third language must declare its tag.

Declared tags are scored under one language per language and script (`language_of`): `zh`, `zh-Hans` and
`zh-CN` are all `zh`; a script other than the language's usual one stays apart (`zh-Hant`, `zh-TW`). A
declared `en` or `zh` whose text detection reads as the other is kept, with a warning (`script_conflict`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import regex

#: the well-formed BCP-47 language tags (RFC 5646 section 2.1, without the grandfathered irregular forms):
#: language (2-3 letters with up to three extlangs; the 4-8 letter form is reserved and has no registered
#: language, so `chinese` or `english` is refused), script, region, variants, extensions and a private-use
#: part; or a private-use tag on its own (`x-...`)
_TAG = regex.compile(
    r"(?:(?P<language>[a-z]{2,3}(?:-[a-z]{3}){0,3})"
    r"(?:-(?P<script>[a-z]{4}))?"
    r"(?:-(?P<region>[a-z]{2}|\d{3}))?"
    r"(?:-(?:[a-z\d]{5,8}|\d[a-z\d]{3}))*"
    r"(?:-[a-wyz\d](?:-[a-z\d]{2,8})+)*"
    r"(?:-x(?:-[a-z\d]{1,8})+)?"
    r"|x(?:-[a-z\d]{1,8})+)",
    regex.IGNORECASE,
)
_HAN = regex.compile(r"\p{Han}")
_LATIN_WORD = regex.compile(r"\p{Latin}+")
DETECTED = ("en", "zh")  # the languages detection can give


def canonical_tag(value: str) -> str | None:
    """The tag in BCP-47's canonical case (`zh-hans-cn` -> `zh-Hans-CN`); None when it is not a well-formed tag.

    >>> canonical_tag("EN-us"), canonical_tag("zh-hans"), canonical_tag("chinese"), canonical_tag("en_US")
    ('en-US', 'zh-Hans', None, None)
    """
    match = _TAG.fullmatch(value)
    if match is None:
        return None
    parts = value.lower().split("-")
    if match.group("script"):
        index = parts.index(match.group("script").lower())
        parts[index] = parts[index].title()
    if match.group("region"):
        index = parts.index(match.group("region").lower(), 1 if not match.group("script") else index + 1)
        parts[index] = parts[index].upper()
    return "-".join(parts)


# the script a language is written in unless its tag says otherwise, and regions that imply another script
_USUAL_SCRIPT = {"en": "Latn", "zh": "Hans"}
_REGION_SCRIPT = {("zh", "TW"): "Hant", ("zh", "HK"): "Hant", ("zh", "MO"): "Hant"}


def language_of(tag: str) -> str:
    """The language a declared tag is scored under: its primary subtag, followed by its script (given, or implied
    by the region) when that is not the language's usual one; region, variants and extensions are dropped.

    >>> [language_of(t) for t in ("zh", "zh-Hans", "zh-CN", "ZH-hans-cn", "en-US", "en-Latn-GB")]
    ['zh', 'zh', 'zh', 'zh', 'en', 'en']
    >>> language_of("zh-Hant"), language_of("zh-TW"), language_of("sr-Latn"), language_of("x-klingon")
    ('zh-Hant', 'zh-Hant', 'sr-Latn', 'x-klingon')
    """
    match = _TAG.fullmatch(tag)
    if match is None or match.group("language") is None:
        return tag
    language = match.group("language").lower()
    base = language.split("-")[0]
    script = (match.group("script") or "").title() or _REGION_SCRIPT.get((base, (match.group("region") or "").upper()))
    return f"{language}-{script}" if script and script != _USUAL_SCRIPT.get(base) else language


def script_conflict(declared: str, detected: str) -> bool:
    """Whether a declared tag contradicts the script of its text: both are languages detection tells apart
    (`en`, `zh`) and the text reads as the other one.

    >>> script_conflict("en-US", "zh"), script_conflict("zh-Hans", "zh"), script_conflict("fr", "en")
    (True, False, False)
    """
    return primary(declared) in DETECTED and primary(declared) != detected


def tag_problem(value: object) -> str | None:
    """Why a `language` value is unusable, or None for a well-formed tag."""
    if not isinstance(value, str):
        return f"must be a BCP-47 language tag such as 'en' or 'zh' (a string), got {type(value).__name__}"
    if canonical_tag(value) is None:
        return f"{value!r} is not a BCP-47 language tag; use a tag such as 'en', 'zh' or 'zh-Hans'"
    return None


def detect_language(*texts: str) -> str:
    """`zh` when Han characters outnumber the Latin words of the texts, else `en` (one Han character is
    about one word, so a Chinese text quoting English identifiers stays Chinese, and the reverse).

    >>> detect_language("事故复盘：缓存雪崩", "What failed?"), detect_language("The ledger-pg-02 node (账本)")
    ('zh', 'en')
    """
    counts = [_script_counts(t) for t in texts]
    han = sum(c[0] for c in counts)
    words = sum(c[1] for c in counts)
    return "zh" if han > words else "en"


@functools.lru_cache(maxsize=1 << 12)
def _script_counts(text: str) -> tuple[int, int]:
    """Han characters and Latin words of a text (memoised: the goals of one context share its source)."""
    return len(_HAN.findall(text)), len(_LATIN_WORD.findall(text))


def primary(tag: str) -> str:
    """The primary language subtag, what prompts are keyed by (`zh-Hans-CN` -> `zh`)."""
    return tag.split("-", 1)[0].lower()


def row_language(row: Mapping[str, Any]) -> tuple[str, bool]:
    """The language of a valid schema row (`language_of` its declared tag) and whether it was detected (True)
    rather than declared."""
    if row.get("language") is not None:
        return language_of(row["language"]), False
    return detect_language(row["context"], row["goal"], *(q["question"] for q in row["questions"])), True
