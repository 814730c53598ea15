"""Counts and token-length distribution of a dataset: what `gacc data stats` prints and the dataset card shows."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gacc_hf.data.language import row_language
from gacc_hf.data.schema import DataValidationError, Problem, as_rows

if TYPE_CHECKING:
    from gacc_hf.tokenizer import Codec


def _quartiles(values: Sequence[int]) -> tuple[float, float, float]:
    if len(values) == 1:
        return (values[0],) * 3  # type: ignore[return-value]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def _bin_width(low: int, high: int, max_bins: int = 10) -> int:
    """The smallest width of the 1-2-5 series that covers [low, high] in at most `max_bins` bins."""
    exponent = 0
    while True:
        for step in (1, 2, 5):
            width = step * 10**exponent
            if (high // width - low // width) + 1 <= max_bins:
                return width
        exponent += 1


@dataclass(frozen=True)
class DataStats:
    """Counts and cl100k_base token lengths of a dataset: what `gacc data stats` prints and the card shows.

    Token lengths are per distinct context, per question, and per canonical answer (the first reference;
    empty for data without gold).
    """

    contexts: int
    goals: int
    questions: int
    sources: dict[str, int]
    goals_per_context: tuple[int, int]
    questions_per_goal: tuple[int, int]
    context_tokens: tuple[int, ...]
    question_tokens: tuple[int, ...]
    answer_tokens: tuple[int, ...]

    def histogram(self) -> list[tuple[int, int, int]]:
        """Context token lengths in equal bins: (low, high exclusive, count), no empty edge bins."""
        lo, hi = min(self.context_tokens), max(self.context_tokens)
        width = _bin_width(lo, hi)
        counts = Counter(n // width for n in self.context_tokens)
        return [(b * width, (b + 1) * width, counts[b]) for b in range(lo // width, hi // width + 1)]

    def text(self) -> str:
        """A plain-text report."""
        sources = ", ".join(f"{name} {n}" for name, n in sorted(self.sources.items()))
        lines = [
            f"contexts:  {self.contexts} from {len(self.sources)} sources ({sources})",
            f"goals:     {self.goals} ({_span(self.goals_per_context)} per context)",
            f"questions: {self.questions} ({_span(self.questions_per_goal)} per goal)",
            "",
            "context tokens (cl100k_base), one per context:",
            "  " + _summary(self.context_tokens),
        ]
        bar_scale = max(c for _, _, c in self.histogram())
        for low, high, count in self.histogram():
            bar = "#" * math.ceil(30 * count / bar_scale) if count else ""
            lines.append(f"  {low:>6}-{high - 1:<6} {count:>4} {bar}".rstrip())
        lines += ["", "question tokens: " + _summary(self.question_tokens)]
        if self.answer_tokens:
            lines.append("answer tokens (first reference): " + _summary(self.answer_tokens))
        return "\n".join(lines)


def _span(bounds: tuple[int, int]) -> str:
    return str(bounds[0]) if bounds[0] == bounds[1] else f"{bounds[0]}-{bounds[1]}"


def _summary(values: Sequence[int]) -> str:
    q1, q2, q3 = _quartiles(values)
    return (
        f"min {min(values)}, p25 {q1:g}, median {q2:g}, p75 {q3:g}, max {max(values)}, "
        f"mean {statistics.fmean(values):.1f}, total {sum(values)}"
    )


def data_stats(dataset: Any, codec: Codec | None = None) -> DataStats:
    """Stats of valid rows (judge or public config); token lengths with the project's verified codec."""
    if codec is None:
        from gacc_hf.tokenizer import get_codec

        codec = get_codec()
    rows = as_rows(dataset)
    if not rows:
        raise DataValidationError([Problem(0, "*", "the dataset has no rows")])
    contexts = {r["context_id"]: (r["source"], r["context"]) for r in rows}
    goals = Counter(r["context_id"] for r in rows)
    per_goal = [len(r["questions"]) for r in rows]
    questions = [q["question"] for r in rows for q in r["questions"]]
    answers = [g["references"][0] for r in rows for g in r.get("gold") or [] if g["references"]]
    return DataStats(
        contexts=len(contexts),
        goals=len(rows),
        questions=len(questions),
        sources=dict(Counter(source for source, _ in contexts.values())),
        goals_per_context=(min(goals.values()), max(goals.values())),
        questions_per_goal=(min(per_goal), max(per_goal)),
        context_tokens=tuple(sorted(codec.count_batch([c for _, c in contexts.values()]))),
        question_tokens=tuple(sorted(codec.count_batch(questions))),
        answer_tokens=tuple(sorted(codec.count_batch(answers))),
    )


def stats_text(dataset: Any, codec: Codec | None = None) -> str:
    """What `gacc data stats` prints: the stats of the whole dataset, then (with several languages) of each
    language, each language named with its goal count and whether its tag was detected or declared."""
    rows = as_rows(dataset)
    by_language: dict[str, list[dict[str, Any]]] = {}
    detected: dict[str, bool] = {}
    for row in rows:
        tag, guessed = row_language(row)
        by_language.setdefault(tag, []).append(row)
        detected[tag] = detected.get(tag, False) or guessed
    named = ", ".join(
        f"{tag} ({len(group)} goals, {'detected' if detected[tag] else 'declared'})"
        for tag, group in by_language.items()
    )
    text = [f"languages: {named}", "", data_stats(rows, codec).text()]
    if len(by_language) > 1:
        for tag, group in by_language.items():
            text += ["", f"-- language {tag} --", data_stats(group, codec).text()]
    return "\n".join(text)
