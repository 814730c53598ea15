"""A model being trained, wrapped as a gacc compressor: what a training loop evaluates at each checkpoint.

The compressor sees only the frozen `CompressorInput` (source, goal as shown, budget L) and writes its memory
by greedy generation from one prompt; the harness then applies the protocol's prefix cut to L, as for any
compressor. Its `revision` is the training step plus a hash of the weights and settings, read afresh at every
access: an evaluation at unchanged weights hits the cache, and a changed checkpoint never does.
"""

from __future__ import annotations

import hashlib
from typing import Any

from gacc_hf.protocol import CompressorInput

DEFAULT_PROMPT = "Goal: {goal}\nSource:\n{context}\nNotes for the goal:"


class ModelCompressor:
    """A causal or seq2seq 🤗 model and its tokenizer as a compressor; `step` is set by the training loop."""

    def __init__(self, model: Any, tokenizer: Any, prompt: str, max_new_tokens: int | None, step: int) -> None:
        self.model, self.tokenizer, self.prompt = model, tokenizer, prompt
        self.max_new_tokens, self.step = max_new_tokens, step
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
        import torch

        text = self.prompt.format(context=item.context, goal=item.goal, budget=item.token_budget)
        inputs = self.tokenizer(text, return_tensors="pt", truncation=True).to(self.model.device)
        cap = item.token_budget if self.max_new_tokens is None else min(item.token_budget, self.max_new_tokens)
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.no_grad():
                out = self.model.generate(**inputs, max_new_tokens=cap, do_sample=False)
        finally:
            self.model.train(was_training)
        new = out[0] if self.model.config.is_encoder_decoder else out[0, inputs["input_ids"].shape[1] :]
        return self.tokenizer.decode(new, skip_special_tokens=True).strip()


def compressor_from_model(
    model: Any, tokenizer: Any, prompt: str = DEFAULT_PROMPT, *, max_new_tokens: int | None = None, step: int = 0
) -> ModelCompressor:
    """Wrap a 🤗 causal or seq2seq model being trained as a compressor.

    `prompt` is formatted with `{context}`, `{goal}` (the goal as shown: empty under `none`) and `{budget}`
    (L); generation is greedy and capped at L new tokens (or `max_new_tokens`, when lower). A model without
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
    return ModelCompressor(model, tokenizer, prompt, max_new_tokens, step)
