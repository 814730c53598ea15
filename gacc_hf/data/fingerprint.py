"""The content fingerprint of a judge-view dataset: which data a run measured, whatever its name.

sha256 over one canonical JSON line per group (keys sorted, no insignificant whitespace, UTF-8),
lines sorted, so the fingerprint changes with any text, id, reference or declared language and not with
row order or the container the rows came in (a `datasets.Dataset`, a list, a file). A group without a
declared `language` has no `language` key in its line: its detected language is a function of the text
the line already holds, and rows written before the column existed keep their fingerprint.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from gacc_hf.data.schema import Group


def canonical_line(group: Group) -> str:
    row: dict[str, object] = {
        "context_id": group.context_id,
        "source": group.source,
        "context": group.context,
        "goal_id": group.goal_id,
        "goal": group.goal,
        "questions": [{"question_id": q.question_id, "question": q.question} for q in group.questions],
        "gold": [{"question_id": q.question_id, "references": list(q.references)} for q in group.questions],
    }
    if group.language is not None:
        row["language"] = group.language
    return json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def fingerprint(groups: Iterable[Group]) -> str:
    """`sha256:<hex>` of the groups' canonical lines, sorted."""
    digest = hashlib.sha256()
    for line in sorted(canonical_line(g) for g in groups):
        digest.update(line.encode("utf-8") + b"\n")
    return f"sha256:{digest.hexdigest()}"
