"""A tiny randomly initialised chat model for fast tests of the pipeline methods (plumbing, not quality)."""

from __future__ import annotations

from pathlib import Path

from gacc_hf.methods.weights import smollm2_folder


def save_tiny_chat_model(folder: Path, seed: int = 0, chat_template: bool = True) -> Path:
    """A randomly initialised 2-layer Llama with the real SmolLM2 tokenizer: fast, deterministic noise."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(smollm2_folder())
    if not chat_template:
        tokenizer.chat_template = None
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        initializer_range=0.5,  # peaked logits: greedy choices are not near-ties
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    if not chat_template:
        (folder / "chat_template.jinja").unlink(missing_ok=True)
    return folder
