"""What the matcher finds in each memory: its goal's evidence flags and the held-out texts it exposes.

Both are pure functions of texts, so each is worked out once per content and kept in the cache, like an
answer or a verdict: a warm rerun reads them instead of normalising and searching every memory again.
One entry per distinct (memory, goal, shown goal) of the ledger, kind `matches`:

    {"evidence": "0110" (one character per question of the goal), "exposed": [[kind, text], ...], "seal": "…"}

`evidence` is `gacc_hf.scoring.evidence.evidence_flags` over the goal's questions, `1` for a question
whose reference the memory holds; `exposed` is
`gacc_hf.scoring.integrity.LeakAudit.exposed` for the goal the compressor was shown. The key binds the
memory text, the goal's references, the source, the context's held-out texts, the shown goal and
`matches_revision()`, the hash of the source code of the matcher (and of the format characters it removes)
and of both audits: an edit to any of them re-keys every entry. A read-only cache is read but never written
(what it lacks is worked out again each run); a stored entry whose flags do not fit its goal is not used, and
one that claims an exposure is recomputed before it is believed (exposures are rare, so this costs little): a
run never reports an exposure the memory does not hold. `seal` is a checksum of the entry's key and value
(the function `seal`): an entry edited by hand (flags that would move an outcome or a score, an exposure added or
removed) no longer fits its seal, and is said to be unusable and recomputed before the run uses it, as
`gacc cache check` lists it (`matches_check`). The seal is no signature: it catches edits, not a forger who
recomputes it, whom the check's recomputation of the entry from its input texts still finds.

So that `gacc cache check` can recompute an entry from the cache alone, each entry's inputs are kept too:
kind `matches-inputs` under the same key holds the five part hashes of the key, and kind `text` holds each
input text under its `text_hash` (references and held-out texts as the JSON the key hashes).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from gacc_hf.data.schema import Group, Question
from gacc_hf.keys import text_hash
from gacc_hf.run.cache.key_template import KeyTemplate
from gacc_hf.run.cache.store import Cache
from gacc_hf.scoring import evidence as evidence_module
from gacc_hf.scoring import integrity as integrity_module
from gacc_hf.scoring.evidence import evidence_flags
from gacc_hf.scoring.integrity import LeakAudit
from gacc_hf.text import hygiene as hygiene_module
from gacc_hf.text import matching as matching_module
from gacc_hf.text import screen as screen_module
from gacc_hf.text.matching import Normalized, normalized

KIND = "matches"
#: pending entries from which a run works them out in a process of its own (`gacc_hf.run.aside`): below it,
#: starting the process (about 2 s) costs more than it saves
APART_FROM = 2_000
INPUTS = "matches-inputs"
TEXT = "text"
PARTS = ("memory", "references", "source", "held", "goal")


@functools.cache
def matches_revision() -> str:
    """`matches-v3@` (sealed entries) and the sha256 of the source of the modules that decide a `matches` value."""
    modules = (hygiene_module, matching_module, screen_module, evidence_module, integrity_module)
    code = "".join(inspect.getsource(module) for module in modules)
    return f"matches-v3@{hashlib.sha256(code.encode('utf-8')).hexdigest()[:16]}"


def seal(key: str, value: Mapping[str, Any]) -> str:
    """The checksum a `matches` entry is stored with: of its key, its flags and its exposures.

    >>> seal("k", {"evidence": "10", "exposed": []})
    '62ba0819a0fbff30'
    """
    exposed = value["exposed"]
    text = f"{key}\n{value['evidence']}\n{json.dumps(exposed, ensure_ascii=False) if exposed else '[]'}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def is_sealed(key: str, value: Mapping[str, Any]) -> bool:
    """Whether a stored `matches` value is as it was written: its seal fits its key, flags and exposures."""
    return value.get("seal") == seal(key, value)


class Matched(NamedTuple):
    """A ledger row's evidence flags (one per question of its goal) and the (kind, text) pairs it exposes."""

    evidence: list[bool]
    exposed: list[tuple[str, str]]


def references_text(questions: Sequence[Question]) -> str:
    """The references of a goal's questions as the JSON text its key part hashes."""
    return json.dumps([list(q.references) for q in questions], ensure_ascii=False)


def held_text(pairs: Sequence[tuple[str, str]]) -> str:
    """A context's held-out (kind, text) pairs as the JSON text its key part hashes."""
    return json.dumps(pairs, ensure_ascii=False)


def key_template() -> KeyTemplate:
    """The key of a `matches` entry over `PARTS`, bound to `matches_revision()`."""
    return KeyTemplate(PARTS, matcher=matches_revision())


class Pending(NamedTuple):
    """An entry still to work out: its key, its memory's text, its goal and context, and the goal shown."""

    key: str
    memory: str
    goal_id: str
    context_id: str
    shown_goal: str


class MatchPlan(NamedTuple):
    """A run's matching, planned (`plan_matches`): per ledger row its key (None: its memory failed), the
    entries the cache holds, those of them claiming an exposure, and the distinct entries to work out."""

    keys: list[str | None]
    found: dict[str, Matched]
    suspect: set[str]
    todo: list[Pending]
    inputs: dict[str, tuple[str, ...]]
    texts: _Texts
    held: dict[str, list[tuple[str, str]]]


def plan_matches(
    ledger: Sequence[Mapping[str, Any]],
    memories: Mapping[str, Mapping[str, Any]],
    work: Sequence[Group],
    every_group: Sequence[Group],
    shown_goals: Mapping[str, str],
    cache: Cache,
) -> MatchPlan:
    """The keys of the ledger's rows, what the cache holds for them, and what is left to work out.

    `work` holds the groups of the ledger's rows, `every_group` every group of the dataset (the leak audit
    counts a context's other goals too); `shown_goals` maps a shown goal id to its text.
    """
    goals = {g.goal_id: g for g in work}
    audit = LeakAudit(every_group)
    template = key_template()
    texts = _Texts()
    held = {c: texts.add(held_text(pairs)) for c, pairs in audit.held.items()}
    of_goal = {  # per goal: the hashes of its references, its source and its context's held-out texts
        goal_id: (texts.add(references_text(g.questions)), texts.add(g.context), held[g.context])
        for goal_id, g in goals.items()
    }
    of_shown = {goal_id: texts.add(text) for goal_id, text in shown_goals.items()}
    of_memory = {k: texts.add(v["memory"]) for k, v in memories.items() if "error" not in v}
    inputs: dict[str, tuple[str, ...]] = {}
    keys: list[str | None] = []
    for row in ledger:
        if row["memory_key"] not in of_memory:
            keys.append(None)
            continue
        parts = (of_memory[row["memory_key"]], *of_goal[row["goal_id"]], of_shown[row["shown_goal_id"]])
        key = template(*parts)
        inputs[key] = parts
        keys.append(key)
    found: dict[str, Matched] = {}
    patterns: dict[str, list[bool]] = {}  # flags by their stored form: few distinct ones, read-only lists
    for key, value in cache.get_many(KIND, filter(None, keys)).items():
        if not is_sealed(key, value):
            cache.reject(KIND, key, "edited: its seal does not fit its flags and exposures; recomputed")
            continue
        flags = patterns.get(value["evidence"])
        if flags is None:
            flags = patterns[value["evidence"]] = [f == "1" for f in value["evidence"]]
        found[key] = Matched(flags, [(kind, text) for kind, text in value["exposed"]] if value["exposed"] else [])
    suspect = {key for key, m in found.items() if m.exposed}  # believed only once recomputed
    todo: dict[str, Pending] = {}
    for row, key in zip(ledger, keys, strict=True):
        if key is None or key in todo:
            continue
        stored = found.get(key)
        if stored is None or len(stored.evidence) != len(goals[row["goal_id"]].questions) or key in suspect:
            memory = memories[row["memory_key"]]["memory"]
            todo[key] = Pending(key, memory, row["goal_id"], row["context_id"], shown_goals[row["shown_goal_id"]])
    return MatchPlan(keys, found, suspect, list(todo.values()), inputs, texts, audit.held)


def find_matches(
    todo: Sequence[Pending], goals: Mapping[str, Group], held: Mapping[str, list[tuple[str, str]]]
) -> dict[str, Matched]:
    """What the matcher finds for each pending entry: a pure function of its arguments, so that it can run in
    a process of its own (`gacc_hf.run.aside`). Each memory text is normalised once while its context's
    entries last (they come in ledger order)."""
    audit = LeakAudit.of_held(held)
    found: dict[str, Matched] = {}
    forms: dict[str, Normalized] = {}
    forms_context = None
    for entry in todo:
        group = goals[entry.goal_id]
        if entry.context_id != forms_context:
            forms, forms_context = {}, entry.context_id
        form = forms.get(entry.memory) or forms.setdefault(entry.memory, memory_form(entry.memory))
        exposed = audit.exposed(form, group.context, entry.shown_goal)
        found[entry.key] = Matched(evidence_flags(form, group.questions), exposed)
    return found


def finish_matches(
    plan: MatchPlan,
    ledger: Sequence[Mapping[str, Any]],
    goals: Mapping[str, Group],
    fresh: Mapping[str, Matched],
    cache: Cache,
) -> list[Matched]:
    """Per ledger row (in order), what the matcher finds in its memory, from the cache or `fresh` (what
    `find_matches` worked out for `plan.todo`); a failed memory finds nothing. A stored entry whose
    exposures differ from the recomputed ones is rejected; the fresh entries are stored."""
    for key in plan.suspect:
        if plan.found[key] != fresh[key]:
            cache.reject(KIND, key, "its exposures differ from the memory's; recomputed")
    out = [
        Matched([False] * len(goals[row["goal_id"]].questions), [])
        if key is None
        else fresh.get(key) or plan.found[key]
        for row, key in zip(ledger, plan.keys, strict=True)
    ]
    if fresh and not cache.read_only:
        cache.put_many(KIND, {key: _stored(key, m) for key, m in fresh.items()})
        cache.put_many(INPUTS, {key: list(plan.inputs[key]) for key in fresh})
        cache.put_many(TEXT, plan.texts.of(h for key in fresh for h in plan.inputs[key]))
    return out


def memory_form(text: str) -> Normalized:
    """A memory's matching form, worked out outside the matcher's memo: a memory is matched once per run, and
    the memo would hold thousands of long memories, each in three forms, for the rest of the run."""
    return normalized.__wrapped__(text)


class _Texts:
    """The input texts of a run's `matches` keys by their `text_hash`, to store beside the entries."""

    def __init__(self) -> None:
        self._by_hash: dict[str, str] = {}

    def add(self, text: str) -> str:
        digest = text_hash(text)
        self._by_hash[digest] = text
        return digest

    def of(self, hashes: Iterable[str]) -> dict[str, str]:
        return {h: self._by_hash[h] for h in hashes}


def _stored(key: str, matched: Matched) -> dict[str, Any]:
    """A `Matched` as its cache value, sealed."""
    value = {
        "evidence": "".join("1" if f else "0" for f in matched.evidence),
        "exposed": [list(p) for p in matched.exposed],
    }
    return {**value, "seal": seal(key, value)}
