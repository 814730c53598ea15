"""Built-in methods, one file per family; importing this package registers their names."""

import importlib
from collections.abc import Callable
from typing import Any

from gacc_hf.methods.judges import ContainsJudge, ExactJudge, F1Judge
from gacc_hf.methods.rules import FieldsReader, FullCompressor, GoalLinesCompressor, TruncateCompressor
from gacc_hf.registry import ROLES, Role, register, register_prefix

register("compressor", "full", FullCompressor)
register("compressor", "truncate", TruncateCompressor)
register("compressor", "goal-lines", GoalLinesCompressor)
register("reader", "fields", FieldsReader)
register("judge", "exact", ExactJudge)
register("judge", "contains", ContainsJudge)
register("judge", "f1", F1Judge)


def _served(role: Role) -> Callable[[str], Any]:
    def factory(spec: str) -> Any:
        from gacc_hf.methods.openai import from_spec  # lazy: httpx only when a served method is named

        return from_spec(role, spec)

    return factory


def _imported(spec: str) -> Any:
    """`import:<module>:<attribute>`: a class (built without arguments), a function or an instance.

    Lets the command line (and every launched process) name a method defined in the user's own module.
    """
    module, sep, attr = spec.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"expected import:<module>:<attribute>, got import:{spec}")
    try:
        obj = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot import method {spec!r}: {exc}") from exc
    return obj() if isinstance(obj, type) else obj


def _local(role: Role) -> Callable[..., Any]:
    """`smollm2` (no argument) or `hf:<folder-or-hub-id>`: a text-generation pipeline method for `role`."""

    def factory(spec: str = "smollm2") -> Any:
        from gacc_hf.methods.pipeline import build  # lazy: torch loads only when a model is named

        return build(role, spec)

    return factory


def _embed() -> Any:
    from gacc_hf.methods.embed import EmbedCompressor  # lazy: torch loads only when named

    return EmbedCompressor()


register("compressor", "embed", _embed)
for _role in ROLES:
    register_prefix(_role, "openai", _served(_role))
    register_prefix(_role, "import", _imported)
    register(_role, "smollm2", _local(_role))
    register_prefix(_role, "hf", _local(_role))

__all__ = [
    "ContainsJudge",
    "ExactJudge",
    "F1Judge",
    "FieldsReader",
    "FullCompressor",
    "GoalLinesCompressor",
    "TruncateCompressor",
]
