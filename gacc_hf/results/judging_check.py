"""The judging figures a results folder stores (`agreement`, `survival`), checked against its answer rows.

A run of several judges stores their agreement, and a run of several (reader, judge) settings the survival of
its ranking (`gacc_hf.scoring.judging`); both are derived from the answers alone, so `verify_folder` derives
them again and holds the stored ones to them as it holds the scores: a point estimate or count that differs is
refused, naming where; a CI that differs only because another harness version's bootstrap drew differently
warns and the stored figures are kept. The labels section (`labels`) is kept as stored: the person's labels it
was computed from are not in the folder.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from gacc_hf.results.layout import ANSWERS_FILE, ResultsError, json_bytes
from gacc_hf.scoring.judging import judging_figures

JUDGING = ("agreement", "survival")


def checked_judging(
    path: Path, payload: Mapping[str, Any], answers: Sequence[Mapping[str, Any]], n_boot: int, seed: int
) -> dict[str, Any]:
    """The judging figures of a run: the stored ones where they pass, those derived where the file has none.

    Raises ResultsError when a stored figure is not what the answers give, or is stored for a run whose answers
    give none (one judge, one setting)."""
    derived = json.loads(json_bytes(judging_figures(answers, n_boot, seed)))  # as `results.json` holds them
    out: dict[str, Any] = {}
    for what in JUDGING:
        if what not in payload:
            if what in derived:
                out[what] = derived[what]
            continue
        if what not in derived:
            raise ResultsError(f"{path}: {what} is recorded, but the answers in {ANSWERS_FILE} give none")
        differ = list(differences(payload[what], derived[what], what))
        points = [where for where, is_ci in differ if not is_ci]
        if points:
            raise ResultsError(
                f"{path}: {what} differs from what {ANSWERS_FILE} gives at {', '.join(points[:3])}"
                + (f" and {len(points) - 3} more" if len(points) > 3 else "")
            )
        if differ:
            warnings.warn(
                f"{path}: {len(differ)} {what} CI figure(s) that this harness version's bootstrap does not "
                "reproduce; keeping the stored figures",
                stacklevel=3,
            )
        out[what] = payload[what]
    return out


def differences(stored: Any, derived: Any, where: str) -> Iterator[tuple[str, bool]]:
    """Where two JSON values differ, each place with whether it is a CI's (a key holding `_ci_`).

    >>> list(differences({"kappa": 0.5, "kappa_ci_low": 0.1}, {"kappa": 0.5, "kappa_ci_low": 0.2}, "agreement"))
    [('agreement.kappa_ci_low', True)]
    >>> list(differences([{"tau": 1.0}], [{"tau": 0.0}, {"tau": 0.0}], "survival"))
    [('survival (2 items, 1 stored)', False)]
    """
    if isinstance(stored, Mapping) and isinstance(derived, Mapping):
        for key in dict.fromkeys([*stored, *derived]):
            here = f"{where}.{key}"
            if key not in stored or key not in derived:
                yield here, False
            else:
                found = list(differences(stored[key], derived[key], here))
                yield from ((w, is_ci or "_ci_" in str(key)) for w, is_ci in found)
    elif isinstance(stored, list) and isinstance(derived, list):
        if len(stored) != len(derived):
            yield f"{where} ({len(derived)} items, {len(stored)} stored)", False
        else:
            for i, (a, b) in enumerate(zip(stored, derived, strict=True)):
                yield from differences(a, b, f"{where}[{i}]")
    elif type(stored) is not type(derived) or stored != derived:
        yield where, False
