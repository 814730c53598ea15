"""`gacc cache check`'s recomputation of `matches` entries: a value edited by hand is found, not trusted.

A sample of entries, or all of them, is recomputed (which finds an entry sealed again after an edit as well),
and every other entry's seal is checked (`gacc_hf.run.cache.matches.is_sealed`, the test a run makes before it
uses an entry).

A `matches` entry is a pure function of the texts its key binds, and `gacc_hf.run.cache.matches` keeps those texts
in the cache beside it, so each entry can be worked out again from the cache alone and compared with what is
stored. An entry made by another matcher revision cannot be recomputed by this code and is counted, not
judged; an entry whose input texts are missing or altered is a problem, like one whose value differs.
"""

from __future__ import annotations

import json
import random
from typing import Any, NamedTuple

from gacc_hf.data.schema import Question
from gacc_hf.keys import text_hash
from gacc_hf.run.cache.matches import INPUTS, KIND, TEXT, is_sealed, key_template
from gacc_hf.run.cache.store import Cache
from gacc_hf.scoring.evidence import evidence_flags
from gacc_hf.scoring.integrity import LeakAudit
from gacc_hf.text.matching import normalized

DEFAULT_SAMPLE = 200


class MatchesCheck(NamedTuple):
    """What the recomputation found: problems (one line each), entries recomputed, entries of another revision."""

    problems: list[str]
    checked: int
    other_revision: int


def check_matches(cache: Cache, sample: int | None = DEFAULT_SAMPLE, seed: int = 0) -> MatchesCheck:
    """Recompute `sample` `matches` entries drawn at random (`seed`), or every one (`sample=None`)."""
    every = sorted(key for kind, key, _ in cache.entries() if kind == KIND)
    keys = every if sample is None or len(every) <= sample else sorted(random.Random(seed).sample(every, sample))
    drawn = set(keys)
    problems = [  # the entries not recomputed: a seal that does not fit says edited (the run will not use it)
        f"{KIND}/{key}: its seal does not fit its flags and exposures (edited)"
        for key, value in cache.get_many(KIND, [k for k in every if k not in drawn]).items()
        if "seal" in value and not is_sealed(key, value)
    ]
    stored = cache.get_many(KIND, keys)
    inputs = cache.get_many(INPUTS, keys)
    texts = cache.get_many(TEXT, {h for parts in inputs.values() for h in parts})
    template = key_template()
    checked = other = 0
    for key in keys:
        if key not in stored:
            continue  # unusable values are listed by `Cache.check`
        parts = inputs.get(key)
        if parts is None or any(h not in texts for h in parts):
            problems.append(f"{KIND}/{key}: its input texts are not in the cache, so it cannot be verified")
            continue
        if template(*parts) != key:
            other += 1
            continue
        altered = [h for h in parts if text_hash(texts[h]) != h]
        if altered:
            problems.append(f"{KIND}/{key}: input text {TEXT}/{altered[0]} does not hash to its key (edited)")
            continue
        checked += 1
        recomputed = _recompute(*(texts[h] for h in parts))
        if recomputed != {k: v for k, v in stored[key].items() if k != "seal"}:
            problems.append(f"{KIND}/{key}: stored {_shown(stored[key])}, recomputed {_shown(recomputed)} (edited)")
    return MatchesCheck(problems, checked, other)


def _recompute(memory: str, references: str, source: str, held: str, goal: str) -> dict[str, Any]:
    """The `matches` value of one memory from its key's texts, as `gacc_hf.run.cache.matches` stores it."""
    questions = [Question(f"q{i}", "", tuple(refs)) for i, refs in enumerate(json.loads(references))]
    audit = LeakAudit.of_held({source: [(kind, text) for kind, text in json.loads(held)]})
    form = normalized(memory)
    flags = "".join("1" if f else "0" for f in evidence_flags(form, questions))
    return {"evidence": flags, "exposed": [list(p) for p in audit.exposed(form, source, goal)]}


def _shown(value: dict[str, Any]) -> str:
    return f"evidence {value['evidence']} exposed {json.dumps(value['exposed'], ensure_ascii=False)[:120]}"
