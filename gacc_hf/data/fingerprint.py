"""The content fingerprint of a judge-view dataset: which data a run measured, whatever its name.

sha256 over one canonical JSON line per group (keys sorted, no insignificant whitespace, UTF-8),
lines sorted, so the fingerprint changes with any text, id or reference and not with row
order or the container the rows came in (a `datasets.Dataset`, a list, a file).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from gacc_hf.data.schema import Group


def canonical_line(group: Group) -> str:
    row = {
        "context_id": group.context_id,
        "source": group.source,
        "context": group.context,
        "goal_id": group.goal_id,
        "goal": group.goal,
        "questions": [{"question_id": q.question_id, "question": q.question} for q in group.questions],
        "gold": [{"question_id": q.question_id, "references": list(q.references)} for q in group.questions],
    }
    return json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def fingerprint(groups: Iterable[Group]) -> str:
    """`sha256:<hex>` of the groups' canonical lines, sorted."""
    digest = hashlib.sha256()
    for line in sorted(canonical_line(g) for g in groups):
        digest.update(line.encode("utf-8") + b"\n")
    return f"sha256:{digest.hexdigest()}"
