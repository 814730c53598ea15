"""The integrity audits whose counters every run reports (docs/protocol.md §10), expected to be 0.

- count errors: N recounted by the pure-Python encoder of `gacc_hf.bpe`, and L recounted in integer arithmetic
  from the ratio's own numerator and denominator, disagree with the primary path (tiktoken, fractions);
- budget violations: a memory re-encodes to more than its budget L;
- exposures: a memory, the text that actually reaches the reader, holds held-out text that the
  compressor was never shown: a question of its context (any goal), or a gold reference of its
  context's questions, where neither the source nor the shown goal contains it. Matching is the
  judges' (`gacc_hf.text.matching`). Questions always count. A reference counts only when it is long
  enough and could not have been assembled from what the compressor read, because short forms and
  phrases assembled from the source's own words are what an honest compressor may write, and
  counting them would raise false alarms:
  - English (space-separated words): at least `MIN_REFERENCE_CHARS` normalised characters and a word
    found nowhere in the source or the shown goal. Short forms ("18", "OTP", "6 months") and phrases
    such as "irreversibly anonymized data" from the source's words (a plural or possessive `s` is
    forgiven) do not count;
  - Chinese, Japanese, Korean: the same length with each Han, Kana or Hangul character counted
    `CJK_CHAR_WEIGHT` times (so at least 6 Han characters), and a CJK character bigram (a lone
    character, for a one-character run) found nowhere in the source or the shown goal. "24 个月"
    (short) and "不可逆匿名化的数据" for a source that says "数据经过不可逆匿名化" and "匿名化的数据"
    (every bigram shown) do not count.
  A mixed reference counts when it is long enough by the weighted length and holds a new word or a new
  bigram. What is left ("twenty-four months" for a source saying "24 months") can still be an honest
  paraphrase: every hit is listed with its text.

The input objects themselves are frozen slotted dataclasses carrying only their contract's fields
(`gacc_hf.protocol`), so the structural guarantee needs no counter; what a method *writes* does.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from numbers import Rational
from typing import TYPE_CHECKING, Any

from tqdm.auto import tqdm

from gacc_hf.budget import RatioLike, token_budget
from gacc_hf.data.schema import Group
from gacc_hf.keys import make_key, text_hash
from gacc_hf.text.matching import Normalized, cjk_count, contains, normalize_answer, normalized, words_and_bigrams
from gacc_hf.text.screen import contains_screened, may_occur
from gacc_hf.tokenizer import Codec, independent_count

if TYPE_CHECKING:
    from gacc_hf.run.cache import Cache  # the store the run passes in; the audits never open one

MIN_REFERENCE_CHARS = 12
CJK_CHAR_WEIGHT = 2


def _integer_ratio(ratio: RatioLike) -> tuple[int, int]:
    """Numerator and denominator of the ratio as given, without going through `fractions` or floats."""
    if isinstance(ratio, Rational):
        return int(ratio.numerator), int(ratio.denominator)
    if isinstance(ratio, float):
        return Decimal(repr(ratio)).as_integer_ratio()
    if isinstance(ratio, Decimal):
        return ratio.as_integer_ratio()
    return Decimal(str(ratio).strip()).as_integer_ratio()


def independent_budget(n_tokens: int, ratio: RatioLike) -> int:
    """floor(r * N) by integer floor division, a second path to `budget.token_budget`.

    >>> from fractions import Fraction
    >>> independent_budget(3, Fraction(1, 3)), independent_budget(100, 0.29), independent_budget(7, 1 / 7)
    (1, 29, 0)
    """
    p, q = _integer_ratio(ratio)
    return (n_tokens * p) // q


def count_errors(
    groups: Sequence[Group],
    n_tokens: Mapping[str, int],
    ratios: Sequence[RatioLike],
    cache: Cache,
    progress: bool = False,
) -> int:
    """Disagreements of the independent N and L recounts with the primary ones, over distinct contexts.

    The pure-Python recount is slower than tiktoken, so it is stored in the cache under its own kind.
    """
    texts = list(dict.fromkeys(g.context for g in groups))
    keys = {t: make_key(kind="count", text=text_hash(t), counter="gacc_hf.bpe-cl100k_base") for t in texts}
    stored = cache.get_many("count", keys.values())
    fresh = {
        keys[t]: independent_count(t)
        for t in tqdm(texts, desc="recount N (pure-Python BPE)", disable=not progress or len(stored) == len(texts))
        if keys[t] not in stored
    }
    cache.put_many("count", fresh)
    stored.update(fresh)
    errors = 0
    for t in texts:
        n = n_tokens[t]
        errors += stored[keys[t]] != n
        errors += sum(token_budget(n, r) != independent_budget(n, r) for r in ratios)
    return errors


def budget_violations(
    ledger: Iterable[Mapping[str, Any]], memories: Mapping[str, Mapping[str, Any]], codec: Codec
) -> int:
    """Ledger rows whose memory, re-encoded here, has more tokens than the row's budget."""
    rows = [r for r in ledger if "error" not in memories[r["memory_key"]]]
    texts = list({memories[r["memory_key"]]["memory"] for r in rows})
    lengths = dict(zip(texts, codec.count_batch(texts), strict=True))
    return sum(lengths[memories[r["memory_key"]]["memory"]] > r["budget"] for r in rows)


def held_out_texts(groups: Iterable[Group]) -> dict[str, list[tuple[str, str]]]:
    """(kind, text) pairs a compressor is never shown, per context: every question and counted reference."""
    held: dict[str, dict[tuple[str, str], None]] = defaultdict(dict)
    for g in groups:
        for q in g.questions:
            held[g.context].setdefault(("question", q.question), None)
            for ref in q.references:
                if reference_weight(ref) >= MIN_REFERENCE_CHARS:
                    held[g.context].setdefault(("reference", ref), None)
    return {context: list(pairs) for context, pairs in held.items()}


def reference_weight(reference: str) -> int:
    """The length the false-alarm rule compares with `MIN_REFERENCE_CHARS`: normalised characters, a CJK
    character counting `CJK_CHAR_WEIGHT` times.

    >>> reference_weight("six months"), reference_weight("保留七十二小时"), reference_weight("24 个月")
    (10, 14, 6)
    """
    key = normalize_answer(reference)
    return len(key) + (CJK_CHAR_WEIGHT - 1) * cjk_count(key)


def _assembled(reference: str, shown: tuple[set[str], set[str]]) -> bool:
    """Every word (up to a plural or possessive `s`) and every CJK bigram of the reference was shown."""
    words, bigrams = words_and_bigrams(reference)
    return bigrams <= shown[1] and all(
        w in shown[0] or w == "s" or (w.endswith("s") and w[:-1] in shown[0]) for w in words
    )


class _Explained:
    """Per context and shown goal, the held-out texts its compressor could have written: found in the
    source or the shown goal, or (a reference) assembled from their words. What depends on the source
    alone is worked out once per context, not once per shown goal."""

    def __init__(self, held: Mapping[str, list[tuple[str, str]]]) -> None:
        self.held = held
        self._source: dict[str, tuple[set[tuple[str, str]], set[str], set[str]]] = {}
        self._explained: dict[tuple[str, str], set[tuple[str, str]]] = {}
        self._unexplained: dict[tuple[str, str], list[tuple[tuple[str, str], Normalized]]] = {}

    def unexplained(self, context: str, goal: str) -> list[tuple[tuple[str, str], Normalized]]:
        """The held-out texts of the context that the compressor could not have written from the source and
        the shown goal, each with its matching form: what a memory of theirs is searched for."""
        pairs = self._unexplained.get((context, goal))
        if pairs is None:
            known = self(context, goal)
            pairs = self._unexplained[(context, goal)] = [
                (p, normalized(p[1])) for p in self.held[context] if p not in known
            ]
        return pairs

    def __call__(self, context: str, goal: str) -> set[tuple[str, str]]:
        if (context, goal) in self._explained:
            return self._explained[(context, goal)]
        held = self.held[context]
        if context not in self._source:
            source = normalized(context)
            self._source[context] = (
                {p for p in held if contains_screened(source, [p[1]])},
                *words_and_bigrams(source),
            )
        in_source, source_words, source_bigrams = self._source[context]
        shown = normalized(goal)
        goal_words, goal_bigrams = words_and_bigrams(shown)
        vocabulary = (source_words | goal_words, source_bigrams | goal_bigrams)
        explained = self._explained[(context, goal)] = {
            p
            for p in held
            if p in in_source
            or contains_screened(shown, [p[1]])
            or (p[0] == "reference" and _assembled(p[1], vocabulary))
        }
        return explained


class LeakAudit:
    """The leak audit of one dataset: per context, the held-out texts of every goal (`held_out_texts`), and
    what a memory of that context exposes given the goal its compressor was shown.

    `groups` must hold every group of the dataset (a context's other goals' questions count too)."""

    def __init__(self, groups: Sequence[Group]) -> None:
        self.held = held_out_texts(groups)
        self._explained = _Explained(self.held)

    @classmethod
    def of_held(cls, held: Mapping[str, list[tuple[str, str]]]) -> LeakAudit:
        """The audit of contexts whose held-out texts are already known (`held_out_texts`' shape)."""
        audit = cls(())
        audit.held = dict(held)
        audit._explained = _Explained(audit.held)
        return audit

    def exposed(self, memory: Normalized, context: str, goal: str) -> list[tuple[str, str]]:
        """The (kind, text) pairs held out from `context` that the memory holds and neither the source nor
        the shown goal `goal` explains, in the context's order."""
        return [
            p
            for p, needle in self._explained.unexplained(context, goal)
            if may_occur(memory, needle) and contains(memory, [p[1]])
        ]


def exposure_rows(
    ledger: Iterable[Mapping[str, Any]], exposed: Iterable[Sequence[tuple[str, str]]]
) -> list[dict[str, Any]]:
    """One row per (memory row, held-out text) from each ledger row's exposed pairs (`LeakAudit.exposed`)."""
    return [
        {
            **{k: row[k] for k in ("context_id", "goal_id", "condition", "compressor", "ratio", "memory_key")},
            "kind": kind,
            "text": held_text,
        }
        for row, pairs in zip(ledger, exposed, strict=True)
        for kind, held_text in pairs
    ]


def find_exposures(
    ledger: Sequence[Mapping[str, Any]],
    memories: Mapping[str, Mapping[str, Any]],
    groups: Sequence[Group],
    shown_goals: Mapping[str, str],
) -> list[dict[str, Any]]:
    """One row per (memory row, held-out text) where the memory holds text its compressor was not shown.

    `groups` must hold every group of the dataset (a context's other goals' questions count too);
    `shown_goals` maps a shown goal id to its text ("" for the empty goal). A run gets the same rows from
    `gacc_hf.run.cache.matches`, which keeps each memory's audit in the cache.
    """
    contexts = {g.context_id: g.context for g in groups}
    audit = LeakAudit(groups)
    exposed = [
        []
        if "error" in memories[row["memory_key"]]
        else audit.exposed(
            normalized(memories[row["memory_key"]]["memory"]),
            contexts[row["context_id"]],
            shown_goals.get(row["shown_goal_id"], ""),
        )
        for row in ledger
    ]
    return exposure_rows(ledger, exposed)
