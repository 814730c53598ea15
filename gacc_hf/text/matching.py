"""The one text matcher behind every comparison: the judges, evidence recall, the oracle and the leak audit.

They must never disagree about whether a reference "is in" a text, so they all go through here. Rules,
for English and Chinese (and any mix) alike:

- invisible format characters (zero-width space and joiner, soft hyphen, bidi controls, tatweel) are
  removed (`gacc_hf.text.hygiene.strip_format`), then NFKC (full-width `Ａ１（` become `A1(`), lower case;
- punctuation (Unicode P*: ASCII, full-width and CJK `。，、「」《》` alike) is a separator, not deleted:
  `from_generator` is found in `Dataset.from_generator()`; but a `.` or `:` between two digits is part
  of its number (`57.5` holds no `57`, `8:30` holds no `30`) and an ASCII thousands comma is dropped;
- what carries meaning is kept: a sign before a digit that does not follow a letter or digit is part of
  its number (`-40 °C` is not `40 °C`; `s3-gw-07` and `2024-01-05` keep separating hyphens); symbols
  (Unicode Sm, Sc, So, and `#`, `^`) are kept, a run of them as one unit (`x = y`, `★★`, `$`, `°`);
  a run of two or more operator characters `+-=<>!&|^~` is one unit (`==`, `!=`, `--`, `->`); `#`, `+`,
  `++` and `--` right after a letter, and not followed by one, belong to its word (`C#`, `C++`, `i--`);
- English articles (`a`, `an`, `the`) are dropped only before a word (never before `.`: `a.b()` keeps its
  `a`), never next to Han, Kana or Hangul (where a lone `A` is an option or a key), and never when the
  text is only articles: the key `A` stays `a`; a reference is found in a text with articles dropped
  from both, or kept in both;
- a text with nothing but punctuation (`。`, `...`) is compared as those characters; an empty text
  matches nothing, not even another empty text;
- Han, Kana and Hangul are matched as character sequences: no space is kept next to them (`使用 Dataset`
  and `使用Dataset` are one text) and no boundary is needed at their edge;
- any other unit needs a boundary (a space, Han/Kana/Hangul or the end) where it meets another:
  `45 minutes` is not found in `145 minutes`, `1` not in `-1`, `★★` not in `★★★★`, `数据集` is
  found in `加载数据集时`.
"""

from __future__ import annotations

import functools
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import regex

from gacc_hf.text.hygiene import strip_format

#: Han, Kana and Hangul (and the Kana length mark, a Common-script character used only inside Kana words).
CJK_CLASS = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u30fc"
_CJK = regex.compile(f"[{CJK_CLASS}]")
_CJK_RUN = regex.compile(f"[{CJK_CLASS}]+")
#: an ASCII thousands comma (`1,000` is `1000`); a full-width `，` between digits separates a list
_THOUSANDS = regex.compile(r"(?<=\d),(?=\d{3}(?!\d))")
#: a letter or digit of a space-separated script
_SPACED = rf"(?:(?![{CJK_CLASS}])[\p{{L}}\p{{N}}])"
#: an English article: after a space, an opening bracket or quote (or at the start) but not after CJK, and
#: before a space-separated word
_ARTICLE = rf"(?<![^\s\p{{Ps}}\p{{Pi}}\"'])(?<![{CJK_CLASS}]\s*)(?:a|an|the)(?=\s+[\p{{Ps}}\p{{Pi}}\"']*{_SPACED})"
#: a word: letters and digits, a `.` or `:` between digits, and a `#`, `+`, `++` or `--` after a letter
_WORD = (
    r"[^\p{P}\p{S}\s]+(?:(?<=\d)[.:](?=\d)[^\p{P}\p{S}\s]+)*"
    rf"(?:(?<=(?![{CJK_CLASS}])\p{{L}})(?:\+\+?|#|--)(?![-+#]|{_SPACED}))?"
)
#: a number's sign: before a digit, not after a letter or digit of a space-separated script
_SIGN = rf"[-+±](?=\d)(?<!{_SPACED}.)"
_OPERATOR = r"(?:[-+](?!\d)|!(?==)|[=<>&|^~])"
#: an article, or a unit of a text: a word (with its sign), a run of two or more operator characters, a symbol run
_UNIT = regex.compile(
    rf"(?P<article>{_ARTICLE})|(?P<unit>{_WORD}|{_SIGN}{_WORD}|(?={_OPERATOR}{{2}}){_OPERATOR}+|[\p{{Sm}}\p{{Sc}}\p{{So}}#^]+)"
)
_ONLY_ARTICLES = regex.compile(r"(?:(?:a|an|the)(?: |$))+")
_SPACE_AT_CJK = regex.compile(rf" (?=[{CJK_CLASS}])|(?<=[{CJK_CLASS}]) ")
_TOKEN = regex.compile(rf"[{CJK_CLASS}]|[^ {CJK_CLASS}]+")


def is_cjk(ch: str) -> bool:
    """Whether a character is Han, Kana or Hangul (matched as part of a character sequence)."""
    return _CJK.match(ch) is not None


def _spaced(ch: str) -> bool:
    """Whether a character of a normalised text needs a boundary next to another such: all but spaces and CJK."""
    return ch != " " and not is_cjk(ch)


@dataclass(frozen=True, slots=True)
class Normalized:
    """A text in matching form: `bare` without articles (the usual key), `plain` with them, and `folded`, the
    whole text folded (format characters out, NFKC, lower case; its spaces collapsed where it is the key),
    which a punctuation-only reference is looked for in (`punctuation_form`)."""

    bare: str
    plain: str
    folded: str

    @property
    def key(self) -> str:
        """The comparison key: `bare`, or `plain` for a text of articles only (the key `A`), or `folded` for
        a text of punctuation only (`。`); empty only for a text with nothing visible."""
        return self.bare or self.plain or self.folded


def _collapse(text: str) -> str:
    return _SPACE_AT_CJK.sub("", " ".join(text.split()))


def punctuation_form(text: Normalized) -> str:
    """The form of a text that a punctuation-only reference (`。`, `...`) is looked for in: `folded`, spaces
    collapsed (rarely needed, so worked out when asked)."""
    return _collapse(text.folded)


def _joined(units: list[str]) -> str:
    return _SPACE_AT_CJK.sub("", " ".join(units))


@functools.lru_cache(maxsize=1 << 14)
def normalized(text: str) -> Normalized:
    """The matching forms of a text (memoised: a reference or a memory is matched many times).

    >>> normalized("The key is A。")
    Normalized(bare='key is a', plain='the key is a', folded='the key is a。')
    >>> normalized(" 。 ")
    Normalized(bare='', plain='', folded='。')
    >>> normalized("调用 Dataset.from_generator() 时，设置 num_proc=8。").key
    '调用dataset from generator时设置num proc = 8'
    >>> normalize_answer("-40 °C in C# and C++"), normalize_answer("x != y, i--")
    ('-40 ° c in c# and c++', 'x != y i--')
    """
    text = unicodedata.normalize("NFKC", _THOUSANDS.sub("", strip_format(text))).lower().replace("\u2212", "-")
    pairs = _UNIT.findall(text)  # (article, "") or ("", unit)
    plain = _joined([article or unit for article, unit in pairs])
    units = [unit for _, unit in pairs if unit]
    bare = "" if _ONLY_ARTICLES.fullmatch(plain) else plain if len(units) == len(pairs) else _joined(units)
    return Normalized(bare, plain, text if plain else _collapse(text))


def normalize_answer(text: str) -> str:
    """The comparison key of a text (see `Normalized.key`).

    >>> normalize_answer("  The  Quick-Brown fox. "), normalize_answer("A"), normalize_answer("答案：Ａ。")
    ('quick brown fox', 'a', '答案a')
    """
    return normalized(text).key


# The evidence and leak audits of one memory ask the same (reference, memory) pairs again, one memory after
# another: a small memo catches those, where a large one would keep thousands of long memories alive.
@functools.lru_cache(maxsize=1 << 12)
def occurs(needle: str, haystack: str) -> bool:
    """Whether a normalised needle occurs in a normalised haystack, bounded where both sides need a boundary.

    >>> occurs("45 minutes", "for 45 minutes"), occurs("45 minutes", "for 145 minutes"), occurs("数据", "加载数据集")
    (True, False, True)
    >>> occurs("1", "-1"), occurs("★★", "★★★★"), occurs("c", "c#")
    (False, False, False)
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


def found(needle: Normalized, hay: Normalized) -> bool:
    """Whether a normalised reference occurs in a normalised text: without articles in both, or with them in
    both (`Plan A` in `Plan A is the fallback`); a punctuation-only reference among the text's characters."""
    if not needle.plain:
        return occurs(needle.folded, punctuation_form(hay))
    return occurs(needle.bare, hay.bare) or (
        (needle.bare != needle.plain or hay.bare != hay.plain) and occurs(needle.plain, hay.plain)
    )


def contains(text: str | Normalized, references: Iterable[str]) -> bool:
    """Whether any reference occurs in the text (see `found`).

    >>> contains("故障转移在 47 分钟后完成。", ["47 分钟"]), contains("It lasted 145 minutes.", ["45 minutes"])
    (True, False)
    >>> contains("It was -40 °C.", ["40 °C"]), contains("We use C#.", ["C++"]), contains("", ["🎉"])
    (False, False, False)
    """
    hay = text if isinstance(text, Normalized) else normalized(text)
    return any(found(normalized(ref), hay) for ref in references)


def exact(answer: str, references: Iterable[str]) -> bool:
    """Whether the answer's key equals a reference's key; an empty answer is never right.

    >>> exact("主节点。", ["主节点"]), exact("the 45 minutes.", ["45 minutes"]), exact("A", ["the"])
    (True, True, False)
    >>> exact("", ["。"]), exact("。", ["。"]), exact("★★", ["★★★★"]), exact("1", ["-1"])
    (False, True, False, False)
    """
    key = normalize_answer(answer)
    return bool(key) and any(key == normalize_answer(ref) for ref in references)


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
        return 0.0  # an empty answer is never right
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
