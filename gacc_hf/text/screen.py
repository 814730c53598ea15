"""`contains` for the audits that ask it hundreds of thousands of times, most answers being "no".

Evidence recall and the leak audit look for every reference of a goal in every memory of it. `contains`
(`gacc_hf.text.matching`, unchanged here: its source enters the `bm25` revision) normalises, then looks
for the needle with its word-boundary rules; a needle that is not even a substring of the text it would
be looked for in cannot occur there, and a plain substring test says so at a fraction of the cost. Only
the references that pass it go to `contains`, so the answer is `contains`'s own.
"""

from __future__ import annotations

from collections.abc import Iterable

from gacc_hf.text.matching import Normalized, contains, normalized


def may_occur(text: Normalized, reference: str | Normalized) -> bool:
    """False only where `contains(text, [reference])` is False: the reference's key is not a substring of
    the form of the text that `contains` searches (without articles, or with them for a key such as `A`).
    The reference may be given already normalised (one reference screened against many texts)."""
    needle = reference if isinstance(reference, Normalized) else normalized(reference)
    return needle.key in (text.bare if needle.bare else text.plain)


def contains_screened(text: Normalized, references: Iterable[str]) -> bool:
    """`contains(text, references)`, asked only about the references that `may_occur`.

    >>> contains_screened(normalized("It lasted 145 minutes."), ["45 minutes", "an hour"])
    False
    >>> contains_screened(normalized("It lasted 45 minutes."), ["an hour", "45 minutes"])
    True
    """
    candidates = [ref for ref in references if may_occur(text, ref)]
    return bool(candidates) and contains(text, candidates)
