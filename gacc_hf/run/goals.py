"""Choosing goals by id: `gacc run --goals ID,ID`, `--goals-file FILE`, `goals:` in a config, `run_benchmark(goals=)`.

A choice is a list of goal ids, checked against the data before any model call: an id given twice, or one the
data does not hold, is refused in one line that names them all (a bounded list). The groups kept are the chosen
goals in the data's order. The choice is recorded (`config["goals"]`) and the data fingerprint is that of the
groups kept, so a run on some goals is never taken for a run on the whole data: a report says it is partial and
publishing refuses it, as it refuses a `--limit` run.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # `gacc_hf.data.schema` imports `datasets`, which checking a results folder does without
    from gacc_hf.data.schema import Group


#: ids a message names before "and N more": a file of a thousand typos is one readable line
SHOWN_IDS = 10
#: the longest goals file read (bytes): far above any real choice of goals
MAX_FILE_BYTES = 10_000_000


class GoalChoiceError(ValueError):
    """A choice of goals that cannot be run; the message names the ids (and the file and line) at fault."""


def _listed(ids: Sequence[str]) -> str:
    shown = ", ".join(repr(i) for i in ids[:SHOWN_IDS])
    return shown + (f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else "")


def read_goals_file(path: str | Path) -> list[str]:
    """The ids of a goals file: one per line, blank lines and lines starting with `#` skipped (UTF-8, a byte
    order mark allowed). Duplicates are refused naming their lines."""
    path = Path(path)
    if not path.is_file():
        raise GoalChoiceError(f"--goals-file {path}: no such file")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise GoalChoiceError(f"--goals-file {path}: larger than {MAX_FILE_BYTES:,} bytes; one goal id a line")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise GoalChoiceError(f"--goals-file {path}: not UTF-8 text (byte {exc.start})") from None
    lines = [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1)]
    ids = [(n, line) for n, line in lines if line and not line.startswith("#")]
    seen: dict[str, int] = {}
    twice = []
    for n, goal_id in ids:
        if goal_id in seen:
            twice.append(f"{goal_id!r} (lines {seen[goal_id]} and {n})")
        seen.setdefault(goal_id, n)
    if twice:
        more = f" and {len(twice) - SHOWN_IDS} more" if len(twice) > SHOWN_IDS else ""
        raise GoalChoiceError(f"--goals-file {path}: goal id(s) given twice: {', '.join(twice[:SHOWN_IDS])}{more}")
    if not ids:
        raise GoalChoiceError(f"--goals-file {path}: names no goal id (one a line; # starts a comment)")
    return [goal_id for _, goal_id in ids]


def check_goal_ids(ids: Any, where: str = "goals") -> list[str]:
    """The ids as a list of non-empty strings, each once; GoalChoiceError naming `where` and the ids otherwise."""
    if isinstance(ids, str) or not isinstance(ids, Iterable):
        raise GoalChoiceError(f"{where} must be a list of goal ids, got {type(ids).__name__}")
    ids = list(ids)
    bad = [i for i in ids if not isinstance(i, str) or not i.strip()]
    if bad:
        raise GoalChoiceError(f"{where}: a goal id is a non-empty string, got {_listed(bad)}")
    if not ids:
        raise GoalChoiceError(f"{where} names no goal id; give at least one")
    twice = [i for i, n in Counter(ids).items() if n > 1]
    if twice:
        raise GoalChoiceError(f"{where}: goal id(s) given twice: {_listed(twice)}; give each goal once")
    return ids


def select_goals(groups: Sequence[Group], ids: Sequence[str], where: str = "goals") -> tuple[list[Group], dict]:
    """The groups of the chosen goals, in the data's order, and the record of the choice (`ids` as given, the
    `groups` kept, `of` the data's). Every unknown id is named in one GoalChoiceError, with a near id."""
    ids = check_goal_ids(ids, where)
    known = {g.goal_id for g in groups}
    unknown = [i for i in ids if i not in known]
    if unknown:
        near = difflib.get_close_matches(unknown[0], sorted(known), n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise GoalChoiceError(
            f"{where}: {len(unknown)} goal id(s) not in the data: {_listed(unknown)}{hint}; the data has "
            f"{len(known)} goals (their ids are its goal_id column)"
        )
    chosen = set(ids)
    kept = [g for g in groups if g.goal_id in chosen]
    return kept, {"ids": list(ids), "groups": len(kept), "of": len(groups)}


def partial_choice(record: Mapping[str, Any] | None) -> str | None:
    """What makes a choice of goals partial (some goals of the data left out), or None."""
    if record and record["groups"] < record["of"]:
        return f"a partial run (goals chosen by id: {record['groups']} of {record['of']} goals)"
    return None
