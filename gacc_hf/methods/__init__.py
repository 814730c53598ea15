"""Built-in methods, one file per family, and the catalogue that names them.

`BUILTINS` and `PREFIXES` are plain tables (role, name, factory, one-line description); `OPTIONED`
names the built-ins whose factory also takes `<name>?<options>` (the local models). The registry
reads them on first use, so this package never imports the registry and naming a rule method never
imports torch. A new built-in joins by adding one row here (and one line to the method list of the
contract tests).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from gacc_hf.methods.judges import ContainsJudge, ExactJudge, F1Judge
from gacc_hf.methods.rules import FieldsReader, GoalLinesCompressor, TruncateCompressor

ROLES = ("compressor", "reader", "judge")


class Entry(NamedTuple):
    """One registered name: its role, its factory and what it does in one line."""

    role: str
    name: str
    factory: Callable[..., Any]
    description: str


def _served(role: str) -> Callable[[str], Any]:
    def factory(spec: str) -> Any:
        from gacc_hf.methods.openai_server import from_spec  # lazy: httpx only when a served method is named

        return from_spec(role, spec)

    return factory


def _imported(spec: str) -> Any:
    from gacc_hf.methods.user_import import load

    return load(spec)


def _local(role: str) -> Callable[..., Any]:
    """`smollm2` (no argument) or `hf:<folder-or-hub-id>`: a text-generation pipeline method for `role`."""

    def factory(spec: str = "smollm2") -> Any:
        from gacc_hf.methods.hf_chat import build  # lazy: torch loads only when a model is named

        return build(role, spec)

    return factory


def _embed(spec: str = "embed") -> Any:
    from gacc_hf.methods.embed import from_spec  # lazy: torch loads only when named

    return from_spec(spec)


def _bm25() -> Any:
    from gacc_hf.methods.bm25 import BM25Compressor  # lazy: bm25s and numpy only when named

    return BM25Compressor()


def _lingua(variant: str) -> Callable[..., Any]:
    """`llmlingua` / `longllmlingua` (SmolLM2) or `<variant>:<model>` with model `smollm2` or `hf:<spec>`."""

    def factory(model: str = "smollm2") -> Any:
        from gacc_hf.methods.llmlingua import build  # lazy: the optional extra is checked before any work

        return build(variant, model)

    return factory


BUILTINS: list[Entry] = [
    Entry("compressor", "truncate", TruncateCompressor, "the head of the source, cut to L by the protocol"),
    Entry("compressor", "goal-lines", GoalLinesCompressor, "lines sharing words with the goal, in source order"),
    Entry("compressor", "embed", _embed, "goal-closest sentences by MiniLM (English model: no gain on Chinese)"),
    Entry("compressor", "bm25", _bm25, "sentences ranked by BM25 against the goal, in source order"),
    Entry("compressor", "llmlingua", _lingua("llmlingua"), "LLMLingua token pruning by SmolLM2 perplexity (extra)"),
    Entry("compressor", "longllmlingua", _lingua("longllmlingua"), "LongLLMLingua with the goal as question (extra)"),
    Entry("reader", "fields", FieldsReader, "answers `key: value` lookups from the memory (no model)"),
    Entry("judge", "exact", ExactJudge, "normalised exact match against a reference"),
    Entry("judge", "contains", ContainsJudge, "a reference inside the answer, word-bounded"),
    Entry("judge", "f1", F1Judge, "token F1 against the best reference >= 0.5"),
    *(Entry(role, "smollm2", _local(role), f"SmolLM2-135M-Instruct (offline, bundled) as {role}") for role in ROLES),
]

OPTIONED: list[Entry] = [entry for entry in BUILTINS if entry.name in ("smollm2", "embed")]

PREFIXES: list[Entry] = [
    entry
    for role in ROLES
    for entry in (
        Entry(role, "hf", _local(role), f"hf:<folder-or-hub-id>: any chat causal LM as {role}"),
        Entry(role, "openai", _served(role), f"openai:<model>@<url>: an OpenAI-compatible server as {role}"),
        Entry(role, "import", _imported, "import:<module>:<attribute>: a method from your own module"),
    )
] + [
    Entry("compressor", variant, _lingua(variant), f"{variant}:hf:<folder-or-hub-id>: {variant} on that small model")
    for variant in ("llmlingua", "longllmlingua")
]

__all__ = [
    "BUILTINS",
    "OPTIONED",
    "PREFIXES",
    "ContainsJudge",
    "Entry",
    "ExactJudge",
    "F1Judge",
    "FieldsReader",
    "GoalLinesCompressor",
    "TruncateCompressor",
]
