import pytest

from gacc_hf.text import sentences
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
