"""Scores per language beside the overall ones: a bilingual run must not hide one language in the other's mean.

Each answer row carries its group's language (the declared BCP-47 tag, or the detected one). The rows of
one language are scored exactly as a whole run is (`score_answers`: Micro, Macro, evidence recall, goal
bootstrap CIs with the run's seed), so a language's row is what a run on that language's groups alone
would report. Answers of runs written before rows carried a language give no per-language rows.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gacc_hf.protocol import is_ceiling
from gacc_hf.scoring.compare import format_table, paired_table
from gacc_hf.scoring.groups import kept
from gacc_hf.scoring.scores import score_answers


def run_languages(config: Mapping[str, Any]) -> dict[str, Any]:
    """The languages a run's config records with its data (`{tag: {n_groups, n_questions, detected}}`)."""
    return (config.get("data") or {}).get("languages") or {}


def named_languages(config: Mapping[str, Any]) -> str:
    """The run's languages as shown in reports and cards: `en (detected), zh`."""
    return ", ".join(f"{k}{' (detected)' if v.get('detected') else ''}" for k, v in run_languages(config).items())


_LANGUAGE, _READ_LANGUAGE = operator.methodcaller("get", "language"), operator.itemgetter("language")
_LANGUAGE_QUESTION, _QUESTION_ID = operator.itemgetter("language", "question_id"), operator.itemgetter("question_id")


def answer_languages(answers: Sequence[Mapping[str, Any]]) -> list[str]:
    """The languages of the answer rows in first-seen order; empty when a row records none."""
    return kept(answers, "languages", _languages)


def _languages(answers: Sequence[Mapping[str, Any]]) -> list[str]:
    try:  # one pass in C: a run has ~200,000 rows (a getter with a default is twice as slow)
        found = dict.fromkeys(map(_READ_LANGUAGE, answers))
    except KeyError:
        found = dict.fromkeys(map(_LANGUAGE, answers))
    if not found or any(not language for language in found):
        return []
    return list(dict.fromkeys(map(str, found)))


def rows_per_language(
    figures: Callable[[Sequence[Mapping[str, Any]], int, int], list[dict[str, Any]]],
    answers: Sequence[Mapping[str, Any]],
    n_boot: int,
    seed: int,
) -> list[dict[str, Any]]:
    """`figures` of each language's answer rows, `language` first, when the run has several languages (else [])."""
    languages = answer_languages(answers)
    if len(languages) < 2:
        return []
    return [
        {"language": language, **row}
        for language in languages
        for row in figures([r for r in answers if r["language"] == language], n_boot, seed)
    ]


def language_mismatch(payload: Mapping[str, Any], answers: Sequence[Mapping[str, Any]]) -> str | None:
    """What in a results document's languages disagrees with its answer rows (None: nothing): the languages
    its config records and their question counts (its `scores_by_language` are checked as its scores are).
    Rows that record no language (folders written before they did) are not checked.

    >>> rows = [{"language": "en", "question_id": "q1"}, {"language": "zh", "question_id": "q2"}]
    >>> payload = {"config": {"data": {"languages": {"en": {"n_questions": 1}}}}}
    >>> language_mismatch(payload, rows)
    'the config records languages [en] but the answers have [en, zh]'
    >>> one = [{"language": "zh", "question_id": q} for q in ("问1", "问1", "问2")]  # two questions, one twice
    >>> language_mismatch({"config": {"data": {"languages": {"zh": {"n_questions": 3}}}}}, one)
    'the config records 3 zh questions, the answers 2'
    >>> language_mismatch({"config": {"data": {"languages": {"zh": {"n_questions": 2}}}}}, one) is None
    True
    """
    found = answer_languages(answers)
    if not found:
        return None
    recorded = run_languages(payload.get("config") or {})
    if sorted(recorded) != sorted(found):
        return f"the config records languages [{', '.join(recorded)}] but the answers have [{', '.join(found)}]"
    if len(found) == 1:  # every row's language is that one: its questions are the distinct ids, read in C
        asked = Counter({found[0]: len(set(map(_QUESTION_ID, answers)))})
    else:
        asked = Counter(language for language, _ in set(map(_LANGUAGE_QUESTION, answers)))  # read in C
    for language, entry in recorded.items():
        questions = asked[language]
        if entry.get("n_questions") != questions:
            return f"the config records {entry.get('n_questions')} {language} questions, the answers {questions}"
    return None


def score_by_language(
    answers: Sequence[Mapping[str, Any]], n_bootstrap: int, seed: int, overall: Sequence[Mapping[str, Any]] = ()
) -> list[dict[str, Any]]:
    """One score row per (language, compressor, condition, ratio), languages in first-seen order, each a
    `score_answers` row with its `language` first.

    `overall`, the run's `score_answers(answers, n_bootstrap, seed)` when the caller has it, is reused for a
    one-language run: its rows are exactly what scoring the same rows again would give."""
    languages = answer_languages(answers)
    if len(languages) == 1 and overall:
        return [{"language": languages[0], **row} for row in overall]
    out: list[dict[str, Any]] = []
    for language in languages:
        rows = [dict(row) for row in answers if row["language"] == language]
        out += [{"language": language, **row} for row in score_answers(rows, n_bootstrap, seed)]
    return out


def language_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Per-language rows as a fixed-width text table (what `gacc run` prints under the overall one)."""
    head = (
        f"{'language':<9} {'compressor':<16} {'condition':<9} {'ratio':>6} {'micro':>7} {'macro':>7} "
        f"{'micro 95% CI':>15} {'n_q':>6}"
    )
    lines = [head, "-" * len(head)]
    for s in rows:
        ci = "" if s["micro_ci_low"] is None else f"[{s['micro_ci_low']:.3f},{s['micro_ci_high']:.3f}]"
        lines.append(
            f"{s['language']:<9} {s['compressor']:<16} {s['condition']:<9} {s['ratio']:>6.3g} {s['micro']:>7.3f} "
            f"{s['macro']:>7.3f} {ci:>15} {s['n_questions']:>6}"
        )
    return "\n".join(lines)


def paired_by_language(
    rows_a: Sequence[Mapping[str, Any]],
    rows_b: Sequence[Mapping[str, Any]],
    n_boot: int,
    seed: int,
    labels: tuple[str, str],
) -> list[tuple[str, list[dict[str, Any]]]]:
    """`paired_table` per language of A's rows (B's rows of the same questions), when A has several languages;
    empty otherwise (the overall table is then the one language's)."""
    languages = answer_languages(rows_a)
    if len(languages) < 2:
        return []
    return [
        (
            language,
            paired_table(
                [r for r in rows_a if r["language"] == language],
                [r for r in rows_b if r.get("language") == language],
                n_boot,
                seed,
                labels,
            ),
        )
        for language in languages
    ]


def format_by_language(tables: Sequence[tuple[str, Sequence[Mapping[str, Any]]]], labels: tuple[str, str]) -> str:
    """The per-language paired tables, each under its language's name."""
    return "\n\n".join(f"language {language}:\n{format_table(rows, *labels)}" for language, rows in tables)


def card_languages(
    payload: Mapping[str, Any], compressor: str, shown: Callable[[Mapping[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    """What a model card says of languages: the run's languages, and (with several) each language's rows of the
    compressor's method conditions, as `shown` displays a score row."""
    several = len(run_languages(payload["config"])) > 1
    rows = [s for s in payload.get("scores_by_language") or [] if s["compressor"] == compressor and not is_ceiling(s)]
    return {
        "languages": named_languages(payload["config"]),
        "by_language": [{"language": s["language"], **shown(s)} for s in rows] if several else [],
    }
