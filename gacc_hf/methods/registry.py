"""Named compressors, readers and judges, so CLIs and configs can say "embed" instead of importing code.

Factories are registered per role and called lazily, so naming a rule method never imports torch.
A name with a prefix (`hf:<model>`, `openai:<model>@<url>`) is routed to the prefix's factory; a
built-in that takes options (`smollm2?device=cpu`) gets its whole spec.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

Role = Literal["compressor", "reader", "judge"]
ROLES: tuple[Role, ...] = ("compressor", "reader", "judge")

_NAMED: dict[str, dict[str, Callable[[], Any]]] = {role: {} for role in ROLES}
_PREFIXED: dict[str, dict[str, Callable[[str], Any]]] = {role: {} for role in ROLES}
_OPTIONED: dict[str, dict[str, Callable[[str], Any]]] = {role: {} for role in ROLES}


def register(role: Role, name: str, factory: Callable[[], Any]) -> None:
    """Register `factory()` as the method called `name` for `role`."""
    _NAMED[role][name] = factory


def register_prefix(role: Role, prefix: str, factory: Callable[[str], Any]) -> None:
    """Register `factory(rest)` for names of the form `<prefix>:<rest>`."""
    _PREFIXED[role][prefix] = factory


def known(role: Role) -> list[str]:
    """Registered names for a role, prefixes shown as `prefix:...`."""
    _load_builtins()
    return sorted(_NAMED[role]) + [f"{p}:..." for p in sorted(_PREFIXED[role])]


def resolve(role: Role, spec: Any) -> Any:
    """Turn a name into a method; a callable passes through unchanged."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; roles are {', '.join(ROLES)}")
    if callable(spec):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"{role} must be a callable or a registered name, got {type(spec).__name__}")
    _load_builtins()
    if spec in _NAMED[role]:
        return _NAMED[role][spec]()
    name, question_mark, _ = spec.partition("?")
    if question_mark and name in _OPTIONED[role]:
        return _OPTIONED[role][name](spec)
    if question_mark and name in _NAMED[role]:
        takes = ", ".join(sorted(_OPTIONED[role])) or "none"
        raise ValueError(f"{role} {name!r} takes no options (built-ins that do: {takes})")
    prefix, sep, rest = spec.partition(":")
    if sep and prefix in _PREFIXED[role]:
        return _PREFIXED[role][prefix](rest)
    raise ValueError(f"unknown {role} {spec!r}; known {role}s: {', '.join(known(role))}")


_loaded = False


def _load_builtins() -> None:
    """Register the catalogue of `gacc_hf.methods` once (it never imports this module: no circle)."""
    global _loaded
    if _loaded:
        return
    from gacc_hf.methods import BUILTINS, OPTIONED, PREFIXES

    for entry in BUILTINS:
        _NAMED[entry.role].setdefault(entry.name, entry.factory)
    for entry in OPTIONED:
        _OPTIONED[entry.role].setdefault(entry.name, entry.factory)
    for entry in PREFIXES:
        _PREFIXED[entry.role].setdefault(entry.name, entry.factory)
    _loaded = True
