"""Greedy decoding of several prompts that share one prefilled prefix, as one batch.

The reader's prompts of one memory differ only after the memory (the question and the turn header).
The prefix is prefilled once (batch 1); `decode_shared_prefix` copies its cache along the batch and
feeds the rows' tails, left-padded to the longest one, in one forward pass:

    row i:  [prefix (cached) | pad ... pad | tail_i]      attention mask 1 | 0 ... 0 | 1
    position ids of tail_i:  p, p+1, ..., p+len(tail_i)-1   (p = prefix length)

The mask hides the pads from every query and the explicit position ids give each real token the
position it has in its own unpadded prompt, so each row computes the attention of `prefix + tail_i`
exactly (up to float rounding of the batched matrix products). Every prefix token is visible to the
pads' own queries, so no attention row is empty and no NaN can reach a real row through a pad's keys
or values; hence the prefix must not be empty. Each decoding step then feeds one token per unfinished
row at its own next position; a row finishes at end of turn, at a token that completes a stop string
(transformers' `StopStringCriteria` on the row's whole sequence, as `generate` applies it) or at
`max_new_tokens`, and finished rows leave the batch (their cache rows are dropped), so a short answer
costs no further step.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

# generation_config fields that change greedy decoding beyond argmax, eos and stop strings; a model
# that sets any of them is decoded by `generate` itself (one row at a time), never by this loop.
_GREEDY_CHANGERS = {
    "repetition_penalty": 1.0,
    "no_repeat_ngram_size": 0,
    "encoder_no_repeat_ngram_size": 0,
    "bad_words_ids": None,
    "min_length": 0,
    "min_new_tokens": None,
    "suppress_tokens": None,
    "begin_suppress_tokens": None,
    "forced_bos_token_id": None,
    "forced_eos_token_id": None,
    "sequence_bias": None,
    "exponential_decay_length_penalty": None,
}


def plain_greedy(generation_config: Any) -> bool:
    """True when the model's generation settings leave greedy decoding to argmax, end of turn and stop strings.

    Only then is `decode_shared_prefix` the same decoding as `model.generate(do_sample=False)`.
    """
    return all(
        getattr(generation_config, name, default) in (default, None) or _empty(getattr(generation_config, name))
        for name, default in _GREEDY_CHANGERS.items()
    )


def _empty(value: Any) -> bool:
    return isinstance(value, list | tuple | dict) and not value


def eos_ids(generation_config: Any) -> frozenset[int]:
    """The end-of-turn token ids `generate` stops at (an int, a list or None in the config)."""
    eos = generation_config.eos_token_id
    return frozenset([] if eos is None else [eos] if isinstance(eos, int) else eos)


def decode_shared_prefix(
    model: Any,
    prefix: Sequence[int],
    cache: Any,
    tails: Sequence[Sequence[int]],
    max_new_tokens: int,
    eos: frozenset[int],
    stop: Any = None,
    pad_token_id: int = 0,
) -> list[list[int]]:
    """The greedy continuation token ids of every `prefix + tail` prompt, decoded as one batch.

    `cache` holds `prefix` (batch 1) and is left unchanged; `stop` is a `StopStringCriteria` or None.
    A continuation ends with its end-of-turn or stop-completing token, or after `max_new_tokens` tokens.
    """
    import torch

    if not prefix:
        raise ValueError("decode_shared_prefix needs a non-empty prefix (the pads' queries attend to it)")
    if max_new_tokens < 1 or not tails:
        return [[] for _ in tails]
    if any(not tail for tail in tails):
        raise ValueError("every prompt needs at least one token after the shared prefix")
    device = model.device
    rows, width, start = len(tails), max(len(t) for t in tails), len(prefix)
    ids = torch.full((rows, width), pad_token_id, dtype=torch.long)
    mask = torch.zeros((rows, start + width), dtype=torch.long)
    mask[:, :start] = 1
    positions = torch.ones((rows, width), dtype=torch.long)  # a pad's position is never seen by a real token
    for i, tail in enumerate(tails):
        ids[i, width - len(tail) :] = torch.tensor(tail)
        mask[i, start + width - len(tail) :] = 1
        positions[i, width - len(tail) :] = torch.arange(start, start + len(tail))
    batch_cache = copy.deepcopy(cache)
    batch_cache.batch_repeat_interleave(rows)
    sequences = [[*prefix, *tail] for tail in tails]  # for the stop-string check, as generate sees them
    new: list[list[int]] = [[] for _ in tails]
    active = list(range(rows))  # original row index of each row still in the batch
    next_pos = torch.tensor([start + len(t) for t in tails])
    with torch.inference_mode():
        while active:
            out = model(
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                position_ids=positions.to(device),
                cache=batch_cache,
                use_cache=True,
                logits_to_keep=1,
            )
            tokens = out.logits[:, -1].argmax(-1).tolist()
            keep = []
            for j, (row, token) in enumerate(zip(active, tokens, strict=True)):
                new[row].append(token)
                sequences[row].append(token)
                if not _finished(token, sequences[row], len(new[row]), max_new_tokens, eos, stop):
                    keep.append(j)
            if not keep:
                break
            if len(keep) < len(active):
                index = torch.tensor(keep)
                batch_cache.batch_select_indices(index.to(device))
                mask, next_pos = mask[index], next_pos[index]
                tokens = [tokens[j] for j in keep]
                active = [active[j] for j in keep]
            ids = torch.tensor(tokens).unsqueeze(1)
            mask = torch.cat([mask, torch.ones((len(active), 1), dtype=torch.long)], dim=1)
            positions = next_pos.unsqueeze(1)
            next_pos = next_pos + 1
    return new


def _finished(token: int, sequence: list[int], produced: int, limit: int, eos: frozenset[int], stop: Any) -> bool:
    """Whether a row ends with `token`: end of turn, the length limit, or a completed stop string."""
    if token in eos or produced >= limit:
        return True
    if stop is None:
        return False
    import torch

    return bool(stop(torch.tensor([sequence]), None)[0])
