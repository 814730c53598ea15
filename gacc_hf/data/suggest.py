"""The mapping suggested for data in neither of gacc-hf's layouts: only columns whose role their name tells.

A column's name is cut into words (`gold_answer`, `docId`, `question text`), and a word says the role: an
ID (`id`, `key`, and what it identifies: `doc_id` is a context's, `task_id` a goal's), the text (`passage`),
the goal, the question, the answers (`answer`, `label`, `target`), the kind of source (`domain`, `type`) or
the language. An ID column is only ever suggested for an ID, any other column never for one, and a column
whose words say nothing is listed as such instead of being guessed (a wrong guess fails later, farther
from its cause). IDs and `source` are optional (`gacc_hf.data.derived`): the mapping leaves a hole
(`goal=<column>`) only for a required column. The suggestion is a starting point the user checks: it is
printed, never applied.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gacc_hf.data.schema import DataSourceError

GROUPED = ("context_id", "source", "context", "goal_id", "goal", "questions", "gold")
FLAT = ("context_id", "context", "goal_id", "goal", "question_id", "question", "references")
IDS = ("context_id", "goal_id", "question_id")  # derived from the content when the data has none
OPTIONAL = ("source", "language")  # a row may lack them (source: empty; language: detected)
FLAT_REQUIRED = tuple(c for c in FLAT if c not in IDS)
GROUPED_REQUIRED = tuple(c for c in GROUPED if c not in (*IDS, *OPTIONAL))
TARGETS = tuple(dict.fromkeys((*GROUPED, *FLAT, *OPTIONAL)))
# the words that tell a role, strongest first: `answer_text` holds answers, `question_text` a question
_ROLE_WORDS: tuple[tuple[str, frozenset[str]], ...] = (
    ("references", frozenset({"answer", "answers", "reference", "references", "gold", "label", "labels", "target"})),
    ("question", frozenset({"question", "questions", "query", "queries", "q", "prompt"})),
    ("goal", frozenset({"goal", "goals", "intent", "task", "objective", "instruction", "purpose"})),
    ("source", frozenset({"domain", "genre", "kind", "category", "type"})),
    ("context", frozenset({"context", "text", "passage", "document", "doc", "article", "content", "body"})),
    ("language", frozenset({"language", "lang", "locale"})),
)
_ID_WORDS = frozenset({"id", "key", "uid", "uuid", "no", "idx", "index"})
_SHORT_IDS = {"qid": "question", "cid": "context", "gid": "goal", "docid": "context", "pid": "context"}
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


class LayoutError(DataSourceError):
    """Data in neither of gacc-hf's layouts (`layout_error` says what was found and what to map)."""


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def words(name: str) -> list[str]:
    """The lower-cased, singular words of a column name; `contextid` is two words, a role's and `id`.

    >>> words("gold_answers"), words("docId"), words("Question Text"), words("contextid")
    (['gold', 'answer'], ['doc', 'id'], ['question', 'text'], ['context', 'id'])
    """
    found: list[str] = []
    for word in (_singular(w.lower()) for w in _WORDS.findall(name)):
        stem = word[:-2]
        known = word.endswith("id") and any(stem in names for _, names in _ROLE_WORDS)
        found += [stem, "id"] if known and stem else [word]
    return found


def role(name: str, flat: bool) -> str | None:
    """The schema column a data column's name says it holds, or None when its words say nothing.

    >>> [role(n, flat=True) for n in ("doc_id", "id", "passage", "answer_text", "notes")]
    ['context_id', 'question_id', 'context', 'references', None]
    """
    found = words(name)
    short = _SHORT_IDS.get(name.lower().replace("_", ""))
    if short:
        return f"{short}_id"
    kind = next((r for r, names in _ROLE_WORDS if names & set(found)), None)
    if _ID_WORDS & set(found):
        if kind in ("context", "goal", "question"):
            return f"{kind}_id"
        return "question_id" if flat and kind is None and len(found) == 1 else None  # one row per question
    return kind


def suggested_mapping(found: Sequence[str], layout: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """For each column of `layout` the data lacks, the data column whose name tells that role; and the data
    columns whose role could not be told."""
    flat = "question" in layout
    free = [c for c in found if c not in TARGETS]
    roles = {c: role(c, flat) for c in free}
    mapping: dict[str, str] = {}
    for target in (t for t in (*layout, *OPTIONAL) if t not in found):
        column = next((c for c in free if roles[c] == target and c not in mapping.values()), None)
        if column is not None:
            mapping[target] = column
    return mapping, [c for c in free if roles[c] is None]


def other_candidates(found: Sequence[str], layout: Sequence[str], mapping: dict[str, str]) -> list[str]:
    """`role=column` for each column whose name tells a role the mapping gave to an earlier column (`doc` and
    `passage` both say context): the user picks, since the name alone cannot tell which holds it."""
    flat = "question" in layout
    told = {c: role(c, flat) for c in found if c not in TARGETS and c not in mapping.values()}
    return [f"{r}={c}" for c, r in told.items() if r in mapping]


def layout_error(found: Sequence[str]) -> LayoutError:
    """The one message for data in neither layout: the columns found, the mapping that would fix it (only the
    columns whose role their name tells), other columns named for a role it filled, and the columns left for
    the user to place."""
    flat_like = "question" in found or any(role(c, True) == "question" for c in found if c not in TARGETS)
    layout = FLAT if flat_like else GROUPED
    mapping, untold = suggested_mapping(found, layout)
    required = FLAT_REQUIRED if flat_like else GROUPED_REQUIRED
    parts = [f"{t}={mapping.get(t, '<column>')}" for t in layout if t not in found and (t in required or t in mapping)]
    optional = [f"{t}={mapping[t]}" for t in OPTIONAL if t in mapping]
    kind = "one row per question" if flat_like else "one row per (context, goal) group"
    message = (
        f"unrecognised layout: the data has the columns {', '.join(found) or '(none)'}; gacc-hf reads "
        f"{', '.join(GROUPED_REQUIRED)} (one row per group) or {', '.join(FLAT_REQUIRED)} (one row per "
        f"question), IDs and source optional. For {kind}, map the data's names: --columns {','.join(parts)} "
        "(columns={...} in load_any)"
    )
    if optional:
        message += f"; optional: {','.join(optional)}"
    if others := other_candidates(found, layout, mapping):
        message += f"; other candidates: {', '.join(others)} (their names say so too: pick the column that holds it)"
    if untold:
        message += f"; could not tell the role of {', '.join(untold)} from the name: map by hand or leave out"
    return LayoutError(message)
