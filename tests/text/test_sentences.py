import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from gacc_hf.text import sentences
from gacc_hf.text.matching import CJK_CLASS
from gacc_hf.text.sentences import pack, split_sentences
from tests.helpers.counting_codec import CountingCodec

EN = "The disk filled at noon. The pager fired twice.\nNobody answered it. The replica took over."
ZH = "磁盘在中午写满了。告警触发了两次。\n没有人回应。副本接管了服务。"


@pytest.mark.parametrize("text", [EN, ZH], ids=["en", "zh"])
def test_sentences_are_counted_once_whatever_the_scores_and_budget(text):
    sentences._costs.cache_clear()
    codec = CountingCodec()
    parts = split_sentences(text)
    assert len(parts) == 4
    packed = [pack(parts, scores, budget, codec) for scores in ([1, 2, 3, 4], [4, 3, 2, 1]) for budget in (8, 30)]
    singles = [text for text in codec.encoded if text.endswith("\n") and text[:-1] in parts]
    assert sorted(singles) == sorted(p + "\n" for p in parts)  # each sentence once, with its separator
    assert packed[0] != packed[2]  # the scores still decide what is kept


@pytest.mark.parametrize("text", [EN, ZH], ids=["en", "zh"])
def test_a_split_is_reused_and_a_caller_cannot_change_it(text):
    first = split_sentences(text)
    first.append("edited")
    assert split_sentences(text) == first[:-1] and len(first[:-1]) == 4


# The rule as first written, with look-behinds over the run of closing quotes: exact, but its time grows with the
# square of a run's length. The patterns in use must cut every text where it cuts.
_CLOSE = "”’」』）》〉】"
_CJK_BY_LOOK_BEHIND = rf"(?<=[。！？；｡][{_CLOSE}]*)(?![。！？；｡…{_CLOSE}])\s*|(?<=…[{_CLOSE}]*)\s*(?=[{CJK_CLASS}])"
_BY_LOOK_BEHIND = {
    "CJK_SENTENCE_END": regex.compile(_CJK_BY_LOOK_BEHIND),
    "SENTENCE_END": regex.compile(rf"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|{_CJK_BY_LOOK_BEHIND}"),
}


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=list("。！？；｡”’」』）》〉】…中文 \t.!?A1a\"'([x"), max_size=16))
def test_the_cuts_are_those_of_the_look_behind_rule(text):
    for name, rule in _BY_LOOK_BEHIND.items():
        assert getattr(sentences, name).split(text) == rule.split(text), name


def _look_behinds(pattern: str) -> list[str]:
    """The bodies of the look-behind groups of a pattern (escapes and character classes skipped)."""
    bodies, i = [], 0
    while (i := pattern.find("(?<", i)) >= 0:
        depth, j, in_class = 1, i + 4, False
        while depth:
            ch = pattern[j]
            if ch == "\\":
                j += 1
            elif ch == "[":
                in_class = True
            elif ch == "]":
                in_class = False
            elif not in_class:
                depth += {"(": 1, ")": -1}.get(ch, 0)
            j += 1
        bodies.append(pattern[i + 4 : j - 1])
        i = j
    return bodies


def _outside_classes(body: str) -> str:
    return regex.sub(r"\\.|\[(?:\\.|[^\]\\])*\]", "", body)


def test_no_look_behind_has_a_variable_width():
    # a look-behind with `*` or `+` rescans a run at each of its characters: "好。" and a run of n closing quotes
    # took time growing as n * n (80,000 quotes: 51 s); fixed-width ones look at one character
    assert _look_behinds(r"(?<=[.!?])\s+|(?<=[。][”]*)x") == ["[.!?]", "[。][”]*"]
    assert _outside_classes("[。][”]*") == "*"
    for name in ("SENTENCE_END", "CJK_SENTENCE_END"):
        for body in _look_behinds(getattr(sentences, name).pattern):
            assert not set(_outside_classes(body)) & set("*+?{"), (name, body)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("好。" + "”" * 50_000 + "他来了。", ["好。" + "”" * 50_000, "他来了。"]),
        ("）" * 50_000, ["）" * 50_000]),
        ("等" + "…" * 50_000 + "中", ["等" + "…" * 50_000, "中"]),
        ("Done." + " " * 50_000 + "Next one.", ["Done.", "Next one."]),
        ("x" * 50_000 + "! " + "y" * 10, ["x" * 50_000 + "! " + "y" * 10]),
    ],
    ids=["zh-quotes", "zh-brackets", "zh-ellipsis", "en-spaces", "en-lowercase"],
)
def test_one_long_line_is_cut_where_its_sentences_end(text, expected):
    assert split_sentences(text) == expected
