"""A reader that answers (almost) nothing: every score is then near 0 whatever the compressor kept.

Said in the run's output and in the report, so that a 0.000 table is not read as a finding. The rule
(`silent_reader`) looks only at answers whose memory holds a gold reference (`evidence`: the answer was in
front of the reader, so "unknown" is not the memory's fault): at least MIN_ANSWERS of them were given
(failed items do not count), and at least 80% of them are blank: empty once whitespace and end
punctuation are stripped, or a phrase of "no answer"
(`unknown`, `none`, `n/a`, `I don't know`, 未知, 不知道, ...), case-insensitive. The `fields` reader on prose
(it answers only `key: value` data) answers `unknown` to everything and is the case this catches.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

BLANK_ANSWERS = frozenset(
    {
        "",
        "unknown",
        "none",
        "n/a",
        "na",
        "no answer",
        "not stated",
        "not mentioned",
        "not given",
        "i don't know",
        "i do not know",
        "未知",
        "不知道",
        "不清楚",
        "无",
    }
)
SILENT_SHARE = (4, 5)  # at least 4 in 5 answers blank
MIN_ANSWERS = 10  # fewer answers say too little about the reader


def is_blank(answer: str) -> bool:
    """Whether an answer says nothing.

    >>> is_blank("  Unknown. "), is_blank("无"), is_blank("none of them")
    (True, True, False)
    """
    return answer.strip().strip(" .!?。！？\"'").casefold() in BLANK_ANSWERS


def silent_reader(answers: Iterable[Mapping[str, Any]]) -> str | None:
    """The warning for a run whose reader answered (almost) nothing, else None."""
    given = [a["answer"] for a in answers if isinstance(a.get("answer"), str) and a.get("evidence")]
    blank = sum(map(is_blank, given))
    share, of = SILENT_SHARE
    if len(given) < MIN_ANSWERS or blank * of < share * len(given):
        return None
    return (
        f"the reader answered (almost) nothing: {blank} of {len(given)} answers are empty or 'unknown', so every "
        "score is near 0 whatever the compressors kept; use a reader that fits the data (the rule-based `fields` "
        "reader answers only `key: value` text: for prose use a model reader such as smollm2)"
    )
