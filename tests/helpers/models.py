"""Tiny randomly initialised models for fast tests of model methods and the training loop (plumbing, not quality)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def tiny_t5(texts: list[str], seed: int = 0) -> tuple[Any, Any]:
    """A randomly initialised 1-layer T5 and a word-level tokenizer over the words of `texts`."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    words = sorted({w for t in texts for w in t.split()})
    vocab = {"<pad>": 0, "</s>": 1, "<unk>": 2, **{w: i + 3 for i, w in enumerate(words)}}
    word_level = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    word_level.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=word_level, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    torch.manual_seed(seed)
    config = T5Config(
        vocab_size=len(vocab), d_model=16, d_kv=8, d_ff=32, num_layers=1, num_heads=2,
        pad_token_id=0, eos_token_id=1, decoder_start_token_id=0,
    )  # fmt: skip
    return T5ForConditionalGeneration(config), tokenizer
