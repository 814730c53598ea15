"""A model being trained, wrapped as a gacc compressor: what a training loop evaluates at each checkpoint.

The compressor sees only the frozen `CompressorInput` (source, goal as shown, budget L) and writes its memory
by greedy generation from one prompt; the harness then applies the protocol's prefix cut to L, as for any
compressor. Its `revision` is the training step plus a hash of the weights and settings, read afresh at every
access: an evaluation at unchanged weights hits the cache, and a changed checkpoint never does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from gacc_hf.protocol import CompressorInput

DEFAULT_PROMPT = "Goal: {goal}\nSource:\n{context}\nNotes for the goal:"


class ModelCompressor:
    """A causal or seq2seq 🤗 model and its tokenizer as a compressor; `step` is set by the training loop."""

    def __init__(
        self, model: Any, tokenizer: Any, prompt: str, max_new_tokens: int | None, step: int, batch_size: int = 8
    ) -> None:
        self.model, self.tokenizer, self.prompt = model, tokenizer, prompt
        self.max_new_tokens, self.step = max_new_tokens, step
        self.batch_size = batch_size  # prompts per `generate` call: execution only, the same memories
        self.name = f"trained:{type(model).__name__}"  # its name in score tables, the same at every step

    @property
    def revision(self) -> str:
        """`step-<N>-<hash>`: the hash covers every weight, the prompt, the token cap and the tokenizer's vocabulary."""
        import torch

        h = hashlib.sha256()
        settings = (type(self.model).__name__, self.prompt, self.max_new_tokens, type(self.tokenizer).__name__)
        h.update(repr((*settings, sorted(self.tokenizer.get_vocab().items()))).encode())
        for name, tensor in sorted(self.model.state_dict().items()):
            h.update(f"{name}:{tensor.dtype}:{tuple(tensor.shape)}".encode())
            h.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
        return f"step-{self.step}-{h.hexdigest()[:16]}"

    def __call__(self, item: CompressorInput) -> str:
        return self.batch([item])[0]

    def batch(self, items: Sequence[CompressorInput]) -> list[str]:
        """The memories of `items`, generated `batch_size` at a time: items sorted by their token cap, so
        a batch's rows stop near the same length; each row's new tokens cut to its own cap, as its own
        generation would stop there (greedy decoding: a row's tokens do not depend on the other rows)."""
        import torch

        caps = [
            i.token_budget if self.max_new_tokens is None else min(i.token_budget, self.max_new_tokens) for i in items
        ]
        order = sorted(range(len(items)), key=lambda n: caps[n])
        out: list[str] = [""] * len(items)
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.no_grad():
                for start in range(0, len(order), self.batch_size):
                    part = order[start : start + self.batch_size]
                    texts = [self.prompt.format(context=items[n].context, goal=items[n].goal,
                                                budget=items[n].token_budget) for n in part]  # fmt: skip
                    for n, text in zip(part, self._generate(texts, [caps[n] for n in part]), strict=True):
                        out[n] = text
        finally:
            self.model.train(was_training)
        return out

    def _generate(self, texts: list[str], caps: list[int]) -> list[str]:
        """Greedy generation for a batch of prompts, padded by hand (the tokenizer is the caller's, left as
        it is): on the left for a causal model, whose new tokens follow the prompt, on the right for a
        seq2seq model's encoder."""
        import torch

        rows = [self.tokenizer(t, truncation=True)["input_ids"] for t in texts]
        seq2seq = bool(self.model.config.is_encoder_decoder)
        pad = next((t for t in (self.tokenizer.pad_token_id, self.tokenizer.eos_token_id) if t is not None), 0)
        width = max(len(r) for r in rows)
        ids, mask = [], []
        for r in rows:
            fill = [pad] * (width - len(r))
            ids.append(r + fill if seq2seq else fill + r)
            mask.append([1] * len(r) + [0] * len(fill) if seq2seq else [0] * len(fill) + [1] * len(r))
        device = self.model.device
        generated = self.model.generate(
            input_ids=torch.tensor(ids, device=device), attention_mask=torch.tensor(mask, device=device),
            max_new_tokens=max(caps), do_sample=False, pad_token_id=pad,
        )  # fmt: skip
        start = 1 if seq2seq else width  # a seq2seq output starts with the decoder's start token
        return [
            self.tokenizer.decode(row[start : start + cap], skip_special_tokens=True).strip()
            for row, cap in zip(generated, caps, strict=True)
        ]


def compressor_from_model(
    model: Any,
    tokenizer: Any,
    prompt: str = DEFAULT_PROMPT,
    *,
    max_new_tokens: int | None = None,
    step: int = 0,
    batch_size: int = 8,
) -> ModelCompressor:
    """Wrap a 🤗 causal or seq2seq model being trained as a compressor.

    `prompt` is formatted with `{context}`, `{goal}` (the goal as shown: empty under `none`) and `{budget}`
    (L); generation is greedy and capped at L new tokens (or `max_new_tokens`, when lower), `batch_size`
    prompts per `generate` call (the memories do not depend on it). A model without
    `generate` (an encoder-only model, a bare backbone) is refused here, before any evaluation.
    """
    if not callable(getattr(model, "generate", None)) or not getattr(model, "can_generate", lambda: True)():
        raise ValueError(
            f"compressor_from_model: {type(model).__name__} cannot generate text; give a causal LM "
            "(AutoModelForCausalLM) or a seq2seq model (AutoModelForSeq2SeqLM)"
        )
    for field in ("{context}", "{goal}"):
        if field not in prompt:
            raise ValueError(f"compressor_from_model: the prompt has no {field} field; the compressor would not see it")
    if batch_size < 1:
        raise ValueError(f"compressor_from_model: batch_size must be >= 1, got {batch_size}")
    return ModelCompressor(model, tokenizer, prompt, max_new_tokens, step, batch_size)
