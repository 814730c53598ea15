"""`contains` for the audits that ask it hundreds of thousands of times, most answers being "no".

Evidence recall and the leak audit look for every reference of a goal in every memory of it. `contains`
(`gacc_hf.text.matching`) normalises, then looks for the needle with its boundary rules; a needle that is
not even a substring of a form of the text it would be looked for in cannot occur there, and a plain
substring test says so at a fraction of the cost. Only the references that pass it go to `contains`, so
the answer is `contains`'s own.
"""

from __future__ import annotations

from collections.abc import Iterable

from gacc_hf.text.matching import Normalized, contains, normalized, punctuation_form


def may_occur(text: Normalized, reference: str | Normalized) -> bool:
    """False only where `contains(text, [reference])` is False: no form of the reference is a substring of
    the same form of the text (`gacc_hf.text.matching.found`: without articles, with them, or as
    punctuation). The reference may be given already normalised (one reference screened against many texts)."""
    needle = reference if isinstance(reference, Normalized) else normalized(reference)
    if not needle.plain:
        return needle.folded in punctuation_form(text)
    return (bool(needle.bare) and needle.bare in text.bare) or needle.plain in text.plain


def contains_screened(text: Normalized, references: Iterable[str]) -> bool:
    """`contains(text, references)`, asked only about the references that `may_occur`.

    >>> contains_screened(normalized("It lasted 145 minutes."), ["45 minutes", "an hour"])
    False
    >>> contains_screened(normalized("It lasted 45 minutes."), ["an hour", "45 minutes"])
    True
    """
    candidates = [ref for ref in references if may_occur(text, ref)]
    return bool(candidates) and contains(text, candidates)
