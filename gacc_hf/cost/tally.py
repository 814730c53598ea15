"""A run's usage per role and method: what its results cost (every value it used, cached or not) and what
the run itself sent (fresh calls only), with the source of the counts (`gacc_hf.cost.usage`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

ROLES = ("compressor", "reader", "judge")
_TOKENS = ("prompt_tokens", "completion_tokens")


def _empty() -> dict[str, Any]:
    return {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "sources": set()}


def source_of(sources: Iterable[str]) -> str:
    """One word for where a method's counts came from: `server`, `local`, `server+local`, or `none`
    (a method that sends no prompt).

    >>> source_of({"local", "server"}), source_of(set())
    ('server+local', 'none')
    """
    found = [s for s in ("server", "local") if s in set(sources)]
    return "+".join(found) or "none"


class UsageTally:
    """Adds up the values a runner returns, once per key: `used` (all) and `sent` (this run's calls)."""

    def __init__(self) -> None:
        self.used: dict[str, dict[str, dict[str, Any]]] = {role: {} for role in ROLES}
        self.sent: dict[str, dict[str, dict[str, Any]]] = {role: {} for role in ROLES}
        self._seen: set[tuple[str, str, str]] = set()

    def add(self, role: str, method: str, values: Mapping[str, Any], fresh: set[str]) -> None:
        """Count each successful value of `values` (by key) not counted before for this role and method."""
        for key, value in values.items():
            if "error" in value or (role, method, key) in self._seen:
                continue
            self._seen.add((role, method, key))
            tallies = [self.used] + ([self.sent] if key in fresh else [])
            for into in tallies:
                entry = into[role].setdefault(method, _empty())
                entry["calls"] += 1
                found = value.get("usage")
                if found is not None:
                    for f in _TOKENS:
                        entry[f] += found[f]
                    entry["sources"].add(found["source"])

    def document(self) -> dict[str, Any]:
        """`used` and `sent` as results.json holds them (sources as one word)."""
        return {"roles": _plain(self.used), "sent": _plain(self.sent)}


def _plain(tally: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> dict[str, dict[str, dict[str, Any]]]:
    return {
        role: {
            name: {"calls": e["calls"], **{f: e[f] for f in _TOKENS}, "source": source_of(e["sources"])}
            for name, e in by_method.items()
        }
        for role, by_method in tally.items()
    }


def merge_usage(parts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The usage of disjoint shards of a run, added up (sources joined)."""
    merged: dict[str, Any] = {"roles": {r: {} for r in ROLES}, "sent": {r: {} for r in ROLES}}
    for part in parts:
        for section in ("roles", "sent"):
            for role, by_method in part.get(section, {}).items():
                for name, e in by_method.items():
                    into = merged[section].setdefault(role, {}).setdefault(name, _empty())
                    into["calls"] += e["calls"]
                    for f in _TOKENS:
                        into[f] += e[f]
                    into["sources"].update(s for s in e["source"].split("+") if s != "none")
    return {section: _plain(merged[section]) for section in ("roles", "sent")}
