from hypothesis import given, settings
from hypothesis import strategies as st

from gacc_hf.text.matching import contains, normalized
from gacc_hf.text.screen import contains_screened, may_occur

# words that stress the matcher's rules: articles, numbers with points and commas, CJK runs, punctuation
_WORDS = ["a", "A", "the", "an", "45", "145", "1,000", "1.5", "8:30", "minutes", "num_proc"]
_WORDS += ["数据集", "加载", "。", "，", "-"]
texts = st.lists(st.sampled_from(_WORDS), max_size=12).map(" ".join)
spaced = st.lists(st.sampled_from(_WORDS), max_size=12).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.one_of(texts, spaced), st.lists(st.one_of(texts, spaced), max_size=4))
def test_screened_answers_are_contains_answers(text, references):
    hay = normalized(text)
    assert contains_screened(hay, references) == contains(hay, references)
    for ref in references:
        assert may_occur(hay, ref) or not contains(hay, [ref])  # the screen never hides a match
        assert may_occur(hay, normalized(ref)) == may_occur(hay, ref)  # a needle given normalised: same answer


def test_the_screen_passes_a_substring_that_is_not_a_match_on_to_contains():
    hay = normalized("It lasted 145 minutes.")
    assert may_occur(hay, "45 minutes")  # a substring, but not word-bounded: contains says no
    assert not contains_screened(hay, ["45 minutes"])
    assert not may_occur(hay, "an hour") and not contains_screened(hay, ["an hour"])


def test_a_reference_made_of_articles_is_screened_against_the_text_with_articles():
    assert may_occur(normalized("Pick A."), "A") and contains_screened(normalized("Pick A."), ["A"])
    assert not may_occur(normalized("Pick B."), "A")


def test_a_needle_given_normalised_is_screened_as_its_text_in_both_languages():
    for text, present, absent in [
        ("It lasted 145 minutes.", "145 Minutes", "an hour"),
        ("加载数据集时设置 num_proc=8。", "数据集", "主节点"),
    ]:
        hay = normalized(text)
        assert may_occur(hay, normalized(present)) and may_occur(hay, present)
        assert not may_occur(hay, normalized(absent)) and not may_occur(hay, absent)
