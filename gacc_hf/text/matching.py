"""The one text matcher behind every comparison: the judges, evidence recall, the oracle and the leak audit.

They must never disagree about whether a reference "is in" a text, so they all go through here. Rules,
for English and Chinese (and any mix) alike:

- NFKC (full-width `Ａ１（` become `A1(`), then lower case;
- every punctuation or symbol character (Unicode P* and S*: ASCII, full-width and CJK `。，、「」《》`
  alike) is a separator, not deleted: `from_generator` is found in `Dataset.from_generator()` and
  `num_proc` in `num_proc=8`; but a `.` or `:` between two digits is part of its number (`57.5` holds
  no `57`, `1.5` is not `15`, `8:30` holds no `30`) and an ASCII thousands comma is dropped (`1,000`);
- English articles (`a`, `an`, `the`) are dropped where they stand among Latin-script words, never next
  to Han, Kana or Hangul (where a lone `A` is an option or a key), and never when that would leave
  nothing: the key `A` stays `a`;
- Han, Kana and Hangul are matched as character sequences: no space is kept next to them (`使用 Dataset`
  and `使用Dataset` are one text) and no boundary is needed at their edge;
- a word boundary is required only between two letters or digits of space-separated scripts:
  `45 minutes` is not found in `145 minutes`, `数据集` is found in `加载数据集时`.
"""

from __future__ import annotations

import functools
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import regex

#: Han, Kana and Hangul (and the Kana length mark, a Common-script character used only inside Kana words).
CJK_CLASS = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u30fc"
_CJK = regex.compile(f"[{CJK_CLASS}]")
_CJK_RUN = regex.compile(f"[{CJK_CLASS}]+")
#: a decimal point or a time's colon is part of its number (`57.5` is not `57`, `8:30` holds no `30`) ...
_SEPARATORS = regex.compile(r"(?:(?!(?<=\d)[.:]\d)[\p{P}\p{S}\s])+")
#: ... and so is an ASCII thousands comma (`1,000` is `1000`); a full-width `，` between digits separates a list
_THOUSANDS = regex.compile(r"(?<=\d),(?=\d{3}(?!\d))")
#: applied after spaces next to CJK are gone, so `\b` never falls between an article and a CJK character
_ARTICLES = regex.compile(r"\b(?:a|an|the)\b")
_SPACE_AT_CJK = regex.compile(rf" (?=[{CJK_CLASS}])|(?<=[{CJK_CLASS}]) ")
_TOKEN = regex.compile(rf"[{CJK_CLASS}]|[^ {CJK_CLASS}]+")


def is_cjk(ch: str) -> bool:
    """Whether a character is Han, Kana or Hangul (matched as part of a character sequence)."""
    return _CJK.match(ch) is not None


def _spaced(ch: str) -> bool:
    """A letter or digit of a space-separated script (or a number's `.` or `:`): two side by side are one word."""
    return ch in ".:" or (ch.isalnum() and not is_cjk(ch))


@dataclass(frozen=True, slots=True)
class Normalized:
    """A text in matching form: `bare` without articles (the usual key), `plain` with them."""

    bare: str
    plain: str

    @property
    def key(self) -> str:
        """The comparison key: `bare`, or `plain` when dropping articles leaves nothing (the key `A`)."""
        return self.bare or self.plain


def _collapse(text: str) -> str:
    return _SPACE_AT_CJK.sub("", " ".join(text.split()))


@functools.lru_cache(maxsize=1 << 14)
def normalized(text: str) -> Normalized:
    """Both matching forms of a text (memoised: a reference or a memory is matched many times).

    >>> normalized("The key is A。")
    Normalized(bare='key is', plain='the key is a')
    >>> normalized("调用 Dataset.from_generator() 时，设置 num_proc=8。").key
    '调用dataset from generator时设置num proc 8'
    """
    text = unicodedata.normalize("NFKC", _THOUSANDS.sub("", text)).lower()
    plain = _collapse(_SEPARATORS.sub(" ", text))
    return Normalized(_collapse(_ARTICLES.sub(" ", plain)), plain)


def normalize_answer(text: str) -> str:
    """The comparison key of a text (see `Normalized.key`).

    >>> normalize_answer("  The  Quick-Brown fox. "), normalize_answer("A"), normalize_answer("答案：Ａ。")
    ('quick brown fox', 'a', '答案a')
    """
    return normalized(text).key


@functools.lru_cache(maxsize=1 << 16)  # evidence and leak audits ask the same (reference, memory) pairs again
def occurs(needle: str, haystack: str) -> bool:
    """Whether a normalised needle occurs in a normalised haystack, bounded where both sides are spaced words.

    >>> occurs("45 minutes", "for 45 minutes"), occurs("45 minutes", "for 145 minutes"), occurs("数据", "加载数据集")
    (True, False, True)
    """
    if not needle:
        return False
    first, last = _spaced(needle[0]), _spaced(needle[-1])
    start = haystack.find(needle)
    while start >= 0:
        end = start + len(needle)
        left_ok = not (first and start > 0 and _spaced(haystack[start - 1]))
        if left_ok and not (last and end < len(haystack) and _spaced(haystack[end])):
            return True
        start = haystack.find(needle, start + 1)
    return False


def contains(text: str | Normalized, references: Iterable[str]) -> bool:
    """Whether any non-empty reference occurs in the text (a reference made only of articles, such as the
    key `A`, is looked for with the text's articles kept).

    >>> contains("故障转移在 47 分钟后完成。", ["47 分钟"]), contains("It lasted 145 minutes.", ["45 minutes"])
    (True, False)
    """
    hay = text if isinstance(text, Normalized) else normalized(text)
    for ref in references:
        needle = normalized(ref)
        if occurs(needle.key, hay.bare if needle.bare else hay.plain):
            return True
    return False


def exact(answer: str, references: Iterable[str]) -> bool:
    """Whether the answer's key equals a reference's key.

    >>> exact("主节点。", ["主节点"]), exact("the 45 minutes.", ["45 minutes"]), exact("A", ["the"])
    (True, True, False)
    """
    key = normalize_answer(answer)
    return any(key == normalize_answer(ref) for ref in references)


def tokens(text: str) -> list[str]:
    """F1 units: words of space-separated scripts, and each Han, Kana or Hangul character on its own.

    Character level for CJK, as CMRC 2018 scores Chinese (the choice is measured in
    `benchmarks/chinese_matching.py`).

    >>> tokens("主节点 ledger-pg-02 停止写入")
    ['主', '节', '点', 'ledger', 'pg', '02', '停', '止', '写', '入']
    """
    return _TOKEN.findall(normalize_answer(text))


def f1(answer: str, reference: str) -> float:
    """SQuAD-style F1 over `tokens`.

    >>> round(f1("primary database in us-east", "primary database"), 3), f1("主节点。", "主节点")
    (0.571, 1.0)
    """
    pred, gold = tokens(answer), tokens(reference)
    if not pred or not gold:
        return float(pred == gold)
    overlap = sum((Counter(pred) & Counter(gold)).values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(pred), overlap / len(gold)
    return 2 * precision * recall / (precision + recall)


def cjk_terms(text: str) -> list[str]:
    """Character bigrams of each Han, Kana or Hangul run of a text (a one-character run is its own term).

    How the goal-conditioned rule compressors (`goal-lines`, `bm25`) index Chinese, which has no spaces
    to find words by; bigrams beat a word segmenter there (measured in `benchmarks/chinese_matching.py`).

    >>> cjk_terms("保留 72 小时的 WAL 段")
    ['保留', '小时', '时的', '段']
    """
    return [
        bigram
        for run in _CJK_RUN.findall(unicodedata.normalize("NFKC", text))
        for bigram in ([run] if len(run) == 1 else (run[i : i + 2] for i in range(len(run) - 1)))
    ]


def words_and_bigrams(text: str | Normalized) -> tuple[set[str], set[str]]:
    """The spaced-script words of a text and its `cjk_terms`: the leak audit's vocabulary.

    A reference whose words and CJK bigrams all occur in what a compressor was shown could have been
    assembled from it.

    >>> [sorted(units) for units in words_and_bigrams("保留 72 小时的 WAL 段")]
    [['72', 'wal'], ['保留', '小时', '时的', '段']]
    """
    key = text.key if isinstance(text, Normalized) else normalize_answer(text)
    return set(_CJK_RUN.sub(" ", key).split()), set(cjk_terms(key))


def cjk_count(text: str) -> int:
    """Han, Kana and Hangul characters in a text."""
    return len(_CJK.findall(text))
