"""What the matcher finds in each memory: its goal's evidence flags and the held-out texts it exposes.

Both are pure functions of texts, so each is worked out once per content and kept in the cache, like an
answer or a verdict: a warm rerun reads them instead of normalising and searching every memory again.
One entry per distinct (memory, goal, shown goal) of the ledger, kind `matches`:

    {"evidence": "0110" (one character per question of the goal), "exposed": [[kind, text], ...]}

`evidence` is `gacc_hf.scoring.evidence.evidence_flags` over the goal's questions, `1` for a question
whose reference the memory holds; `exposed` is
`gacc_hf.scoring.integrity.LeakAudit.exposed` for the goal the compressor was shown. The key binds the
memory text, the goal's references, the source, the context's held-out texts, the shown goal and
`matches_revision()`, the hash of the source code of the matcher (and of the format characters it removes)
and of both audits: an edit to any of them re-keys every entry. A read-only cache is read but never written
(what it lacks is worked out again each run); a stored entry whose flags do not fit its goal is not used.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from gacc_hf.data.schema import Group, Question
from gacc_hf.run.cache import Cache, text_hash
from gacc_hf.run.key_template import KeyTemplate
from gacc_hf.scoring import evidence as evidence_module
from gacc_hf.scoring import integrity as integrity_module
from gacc_hf.scoring.evidence import evidence_flags
from gacc_hf.scoring.integrity import LeakAudit
from gacc_hf.text import hygiene as hygiene_module
from gacc_hf.text import matching as matching_module
from gacc_hf.text import screen as screen_module
from gacc_hf.text.matching import Normalized, normalized

KIND = "matches"


@functools.cache
def matches_revision() -> str:
    """`matches-v2@` and the sha256 of the source of the modules that decide a `matches` value."""
    modules = (hygiene_module, matching_module, screen_module, evidence_module, integrity_module)
    code = "".join(inspect.getsource(module) for module in modules)
    return f"matches-v2@{hashlib.sha256(code.encode('utf-8')).hexdigest()[:16]}"


class Matched(NamedTuple):
    """A ledger row's evidence flags (one per question of its goal) and the (kind, text) pairs it exposes."""

    evidence: list[bool]
    exposed: list[tuple[str, str]]


def _references_hash(questions: Sequence[Question]) -> str:
    return text_hash(json.dumps([list(q.references) for q in questions], ensure_ascii=False))


def match_memories(
    ledger: Sequence[Mapping[str, Any]],
    memories: Mapping[str, Mapping[str, Any]],
    work: Sequence[Group],
    every_group: Sequence[Group],
    shown_goals: Mapping[str, str],
    cache: Cache,
) -> list[Matched]:
    """Per ledger row (in order), what the matcher finds in its memory; a failed memory finds nothing.

    `work` holds the groups of the ledger's rows, `every_group` every group of the dataset (the leak audit
    counts a context's other goals too); `shown_goals` maps a shown goal id to its text.
    """
    goals = {g.goal_id: g for g in work}
    audit = LeakAudit(every_group)
    template = KeyTemplate(("memory", "references", "source", "held", "goal"), matcher=matches_revision())
    held = {c: text_hash(json.dumps(pairs, ensure_ascii=False)) for c, pairs in audit.held.items()}
    of_goal = {  # per goal: the hashes of its references, its source and its context's held-out texts
        goal_id: (_references_hash(g.questions), text_hash(g.context), held[g.context]) for goal_id, g in goals.items()
    }
    of_shown = {goal_id: text_hash(text) for goal_id, text in shown_goals.items()}
    of_memory = {k: text_hash(v["memory"]) for k, v in memories.items() if "error" not in v}
    keys = [
        template(of_memory[row["memory_key"]], *of_goal[row["goal_id"]], of_shown[row["shown_goal_id"]])
        if row["memory_key"] in of_memory
        else None
        for row in ledger
    ]
    found: dict[str, Matched] = {}
    patterns: dict[str, list[bool]] = {}  # flags by their stored form: few distinct ones, read-only lists
    for key, value in cache.get_many(KIND, filter(None, keys)).items():
        flags = patterns.get(value["evidence"])
        if flags is None:
            flags = patterns[value["evidence"]] = [f == "1" for f in value["evidence"]]
        found[key] = Matched(flags, [(kind, text) for kind, text in value["exposed"]] if value["exposed"] else [])
    fresh: dict[str, Matched] = {}
    forms: dict[str, Normalized] = {}  # each memory text normalised once (the matcher's memo holds fewer)
    out: list[Matched] = []
    for row, key in zip(ledger, keys, strict=True):
        group = goals[row["goal_id"]]
        if key is None:
            out.append(Matched([False] * len(group.questions), []))
            continue
        matched = found.get(key) or fresh.get(key)
        if matched is None or len(matched.evidence) != len(group.questions):
            text = memories[row["memory_key"]]["memory"]
            form = forms.get(text) or forms.setdefault(text, normalized(text))
            exposed = audit.exposed(form, group.context, shown_goals[row["shown_goal_id"]])
            matched = fresh[key] = Matched(evidence_flags(form, group.questions), exposed)
        out.append(matched)
    if fresh and not cache.read_only:
        cache.put_many(KIND, {key: _stored(m) for key, m in fresh.items()})
    return out


def _stored(matched: Matched) -> dict[str, Any]:
    """A `Matched` as its cache value."""
    flags = "".join("1" if f else "0" for f in matched.evidence)
    return {"evidence": flags, "exposed": [list(p) for p in matched.exposed]}
