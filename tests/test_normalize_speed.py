"""`normalize_answer` after its speed-up (translate table, memoised) equals the plain character filter."""

import string
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from gacc_hf.methods.judges import _ARTICLES, normalize_answer

PUNCT = set(string.punctuation) | set("\u2018\u2019\u201c\u201d\u2013\u2014")


def by_hand(text: str) -> str:
    """The normaliser spelled out character by character (its definition)."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(ch for ch in text if ch not in PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


@given(
    st.lists(st.sampled_from([*string.printable, "\u2019", "\u2014", "é", "Ｔ", "ﬁ", " the "]), max_size=40).map(
        "".join
    )
)
def test_translate_equals_the_character_filter(text):
    assert normalize_answer(text) == normalize_answer(text) == by_hand(text)


def test_hand_examples():
    assert normalize_answer("“The” ledger—pg’02!") == "ledgerpg02"
    assert normalize_answer("An apple, a pear") == "apple pear"
