"""Every registered compressor, reader and judge, once, with small settings: the list the contract tests run.

A new method joins the contract (tests/test_method_contract.py) by adding one `Case` line here;
`test_every_registered_method_is_listed` fails until it does. Prefix methods are covered by one
representative spec (`hf:` on a tiny random model) or excluded in `EXCLUDED` with the reason.
Methods on a real model (SmolLM2) are marked slow; the same code runs fast on the tiny models.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gacc_hf.methods.registry import resolve


@dataclass(frozen=True)
class Models:
    """Tiny randomly initialised model folders, built once per test session."""

    chat: Path  # 2-layer Llama with the SmolLM2 tokenizer (seed 0)
    chat_other: Path  # the same architecture, seed 1: different weights
    encoder: Path  # 1-layer BERT with the MiniLM tokenizer


@dataclass(frozen=True)
class Case:
    """One registered method: how to build it and, when it has settings, the same method with one changed."""

    role: str
    covers: str  # the registered name; a prefix as `hf:`
    build: Callable[[Models], Any]
    changed: Callable[[Models], Any] | None = None  # None: the method has no setting to change
    slow: bool = False

    @property
    def id(self) -> str:
        return f"{self.role}:{self.covers}"


def named(role: str, spec: str | Callable[[Models], str]) -> Callable[[Models], Any]:
    """A builder resolving `spec` (or `spec(models)`) through the registry, as the CLI does."""
    return lambda models: resolve(role, spec(models) if callable(spec) else spec)


def save_tiny_encoder(folder: Path) -> Path:
    """A randomly initialised 1-layer BERT with the real all-MiniLM-L6-v2 tokenizer: a different `embed` encoder."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from gacc_hf.methods.weights import minilm_ref

    tokenizer = AutoTokenizer.from_pretrained(minilm_ref().path)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=512,
    )
    torch.manual_seed(0)
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _embed_on(models: Models) -> Any:
    from gacc_hf.methods.embed import EmbedCompressor
    from gacc_hf.methods.weights import load_sentence_encoder

    return EmbedCompressor(load_sentence_encoder(str(models.encoder)))


def _f1(threshold: float) -> Callable[[Models], Any]:
    from gacc_hf.methods.judges import F1Judge

    return lambda models: F1Judge(threshold)


def _hf(role: str, attr: str = "chat", prefix: str = "hf") -> Callable[[Models], Any]:
    return named(role, lambda models: f"{prefix}:{getattr(models, attr)}")


CASES: list[Case] = [
    Case("compressor", "truncate", named("compressor", "truncate")),
    Case("compressor", "goal-lines", named("compressor", "goal-lines")),
    Case("compressor", "embed", named("compressor", "embed"), changed=_embed_on),
    Case("compressor", "bm25", named("compressor", "bm25")),
    Case("compressor", "llmlingua", named("compressor", "llmlingua"), _hf("compressor", prefix="llmlingua:hf"), True),
    Case(
        "compressor",
        "longllmlingua",
        named("compressor", "longllmlingua"),
        _hf("compressor", prefix="longllmlingua:hf"),
        True,
    ),
    Case(
        "compressor",
        "llmlingua:",
        _hf("compressor", prefix="llmlingua:hf"),
        _hf("compressor", "chat_other", "llmlingua:hf"),
    ),
    Case(
        "compressor",
        "longllmlingua:",
        _hf("compressor", prefix="longllmlingua:hf"),
        _hf("compressor", "chat_other", "longllmlingua:hf"),
    ),
    Case("compressor", "smollm2", named("compressor", "smollm2"), _hf("compressor"), slow=True),
    Case("compressor", "hf:", _hf("compressor"), _hf("compressor", "chat_other")),
    Case("compressor", "import:", named("compressor", "import:gacc_hf.methods.rules:TruncateCompressor")),
    Case("reader", "fields", named("reader", "fields")),
    Case("reader", "smollm2", named("reader", "smollm2"), _hf("reader"), slow=True),
    Case("reader", "hf:", _hf("reader"), _hf("reader", "chat_other")),
    Case("reader", "import:", named("reader", "import:gacc_hf.methods.rules:FieldsReader")),
    Case("judge", "exact", named("judge", "exact")),
    Case("judge", "contains", named("judge", "contains")),
    Case("judge", "f1", named("judge", "f1"), _f1(0.75)),
    Case("judge", "smollm2", named("judge", "smollm2"), _hf("judge"), slow=True),
    Case("judge", "hf:", _hf("judge"), _hf("judge", "chat_other")),
    Case("judge", "import:", named("judge", "import:gacc_hf.methods.judges:ExactJudge")),
]

#: Registered names the generic contract cannot run here, with the reason.
EXCLUDED: dict[str, str] = {
    f"{role}:openai:": "needs a running OpenAI-compatible server; tests/test_openai.py runs it against a local "
    "HTTP peer and (marker `server`) a real llama.cpp server"
    for role in ("compressor", "reader", "judge")
}
