"""Greedy decoding of prompts that extend prefilled prefixes, many rows in one batch.

The reader's prompts of one memory differ only after the memory (the question and the turn header).
Each prefix is prefilled once (batch 1, `prefill`); `decode_rows` copies the prefix cache of every row
into one buffer per layer, prefixes padded to the longest (length P), and feeds the rows' tails,
left-padded to the longest tail, in one forward pass:

    row i:  [prefix_i (cached) | pad ... pad | tail_i]     attention mask 1 | 0 ... 0 | 1
    position ids of tail_i:  p_i, p_i+1, ..., p_i+len(tail_i)-1   (p_i = len(prefix_i))

The mask hides the pads from every query and the explicit position ids give each real token the
position it has in its own unpadded prompt, so each row computes the attention of `prefix_i + tail_i`
exactly (up to float rounding of the batched matrix products). Every row's own prefix tokens are
visible to its pads' queries, so no attention row is empty and no NaN can reach a real row through a
pad's keys or values; hence a prefix must not be empty. Each decoding step then feeds one token per
unfinished row at its own next position and writes its keys and values into the buffers in place; a
row finishes at end of turn, at a token that completes a stop string (transformers'
`StopStringCriteria` on the row's whole sequence, as `generate` applies it) or at `max_new_tokens`,
and finished rows leave the batch (their buffer rows are dropped), so a short answer costs no further
step. `RowDecoder` cuts many (prefix, tail) rows into such batches and prefills each prefix once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
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

    Only then is `decode_rows` the same decoding as `model.generate(do_sample=False)`.
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


def prefix_decodable(model: Any) -> bool:
    """Whether the model's cache is all plain, growing `DynamicLayer`s, which `decode_rows` batches in place.

    Sliding-window and other special layers keep their keys differently; such a model is read on the plain path.
    """
    from transformers import DynamicCache
    from transformers.cache_utils import DynamicLayer

    return all(type(layer) is DynamicLayer for layer in DynamicCache(config=model.config).layers)


def prefill(model: Any, ids: tuple[int, ...]) -> Prefilled:
    """The key/value cache of one prompt prefix (batch 1), computed once for every row that extends it."""
    import torch
    from transformers import DynamicCache

    prefilled = Prefilled(ids, DynamicCache(config=model.config))  # refuses an empty prefix before any work
    with torch.inference_mode():
        # only the cache is kept: no vocabulary logits for the prefix's positions (a 1,500-token prefix of
        # SmolLM2 would spend about 300 MB on them), which leaves the cache as it is
        model(input_ids=torch.tensor([ids], device=model.device), cache=prefilled.cache, logits_to_keep=1)
    return prefilled


class RowDecoder:
    """Greedy continuations of (prefix, tail) prompts: each prefix prefilled once, rows decoded in shared batches.

    Rows are batched in order of prefix length, then prefix, then tail length, so a batch pads little and
    the rows of one prefix are contiguous: a prefix's cache lives only while its batches are built (the
    last one is kept for the next call, which often continues the same memory). A batch holds at most
    `rows_per_batch` rows and `batch_tokens` tokens of key/value cache (rows x padded prompt + answer).
    """

    def __init__(
        self,
        model: Any,
        max_new_tokens: int,
        eos: frozenset[int],
        stop: Any,
        pad_token_id: int,
        rows_per_batch: int,
        batch_tokens: int,
    ) -> None:
        self.model, self.max_new_tokens, self.eos, self.stop = model, max_new_tokens, eos, stop
        self.pad_token_id, self.rows_per_batch, self.batch_tokens = pad_token_id, rows_per_batch, batch_tokens
        self._last: Prefilled | None = None

    def decode(
        self, rows: Sequence[tuple[tuple[int, ...], Sequence[int]]], done: Callable[[int], None] | None = None
    ) -> list[list[int]]:
        """The continuation token ids of every row, in order; `done(n)` after each batch of n rows."""
        out: list[list[int]] = [[] for _ in rows]
        if self.max_new_tokens < 1:
            return out
        for batch in self.batches(rows):
            ids = _greedy(self.model, self._laid_out(batch, rows), self.max_new_tokens, self.eos, self.stop)
            for i, new in zip(batch, ids, strict=True):
                out[i] = new
            if done is not None:
                done(len(batch))
        return out

    def batches(self, rows: Sequence[tuple[tuple[int, ...], Sequence[int]]]) -> list[list[int]]:
        """Row indices in decoding order, cut into batches within `rows_per_batch` and `batch_tokens`.

        A batch's cache is rows x (longest prefix + longest tail + max_new_tokens); a row too long for the
        budget on its own is a batch of one.
        """
        order = sorted(range(len(rows)), key=lambda i: (len(rows[i][0]), rows[i][0], len(rows[i][1])))
        batches: list[list[int]] = []
        batch: list[int] = []
        longest_prefix = longest_tail = 0
        for i in order:
            prefix, tail = max(longest_prefix, len(rows[i][0])), max(longest_tail, len(rows[i][1]))
            tokens = (len(batch) + 1) * (prefix + tail + self.max_new_tokens)
            if batch and (len(batch) == self.rows_per_batch or tokens > self.batch_tokens):
                batches.append(batch)
                batch, prefix, tail = [], len(rows[i][0]), len(rows[i][1])
            batch.append(i)
            longest_prefix, longest_tail = prefix, tail
        return [*batches, batch] if batch else batches

    def _laid_out(self, batch: list[int], rows: Sequence[tuple[tuple[int, ...], Sequence[int]]]) -> _Batch:
        """The batch's inputs and buffers; the prefix caches it was copied from (but the last) are freed on return."""
        prefixes = {p: self._prefilled(p) for p in dict.fromkeys(rows[i][0] for i in batch)}
        return _Batch([(prefixes[rows[i][0]], rows[i][1]) for i in batch], self.max_new_tokens, self.pad_token_id)

    def _prefilled(self, prefix: tuple[int, ...]) -> Prefilled:
        if self._last is None or self._last.ids != prefix:
            self._last = None  # free the old cache before building the new one
            self._last = prefill(self.model, prefix)
        return self._last


class Prefilled:
    """A prompt prefix and its prefilled key/value cache (batch 1), shared by the rows that extend it."""

    __slots__ = ("__weakref__", "cache", "ids")

    def __init__(self, ids: tuple[int, ...], cache: Any) -> None:
        if not ids:
            raise ValueError("prefix decoding needs a non-empty prefix (the pads' queries attend to it)")
        self.ids, self.cache = ids, cache


def decode_rows(
    model: Any,
    rows: Sequence[tuple[Prefilled, Sequence[int]]],
    max_new_tokens: int,
    eos: frozenset[int],
    stop: Any = None,
    pad_token_id: int = 0,
) -> list[list[int]]:
    """The greedy continuation token ids of every `prefix + tail` row, decoded as one batch.

    Rows may extend different prefixes. Each prefix's cache is copied once per row into one preallocated
    buffer per layer, which every decoding step then writes in place (no growing copies); the caches
    themselves are left unchanged. See the module docstring for the layout.
    """
    if max_new_tokens < 1 or not rows:
        return [[] for _ in rows]
    return _greedy(model, _Batch(rows, max_new_tokens, pad_token_id), max_new_tokens, eos, stop)


class _Batch:
    """The first forward pass's inputs for `rows` and their key/value buffers; holds no prefix cache itself."""

    def __init__(self, rows: Sequence[tuple[Prefilled, Sequence[int]]], max_new_tokens: int, pad_token_id: int) -> None:
        import torch

        if any(not tail for _, tail in rows):
            raise ValueError("every prompt needs at least one token after the shared prefix")
        count, width = len(rows), max(len(t) for _, t in rows)
        start = max(len(p.ids) for p, _ in rows)
        self.ids = torch.full((count, width), pad_token_id, dtype=torch.long)
        self.mask = torch.zeros((count, start + width), dtype=torch.long)
        self.positions = torch.ones((count, width), dtype=torch.long)  # a pad's position is never seen
        for i, (prefilled, tail) in enumerate(rows):
            own = len(prefilled.ids)
            self.ids[i, width - len(tail) :] = torch.tensor(tail)
            self.mask[i, :own] = 1
            self.mask[i, start + width - len(tail) :] = 1
            self.positions[i, width - len(tail) :] = torch.arange(own, own + len(tail))
        self.cache = _rows_cache([p for p, _ in rows], start + width + max_new_tokens)
        self.sequences = [[*p.ids, *tail] for p, tail in rows]  # for the stop-string check, as generate sees them
        self.next_pos = torch.tensor([len(p.ids) + len(t) for p, t in rows])


def _greedy(model: Any, batch: _Batch, max_new_tokens: int, eos: frozenset[int], stop: Any) -> list[list[int]]:
    """Decode a laid-out batch step by step; a row leaves the batch at the token that ends it."""
    import torch

    device, cache, sequences = model.device, batch.cache, batch.sequences
    ids, mask, positions, next_pos = batch.ids, batch.mask, batch.positions, batch.next_pos
    new: list[list[int]] = [[] for _ in sequences]
    active = list(range(len(sequences)))  # original row index of each row still in the batch
    with torch.inference_mode():
        while active:
            out = model(
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                position_ids=positions.to(device),
                cache=cache,
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
                cache.batch_select_indices(index.to(device))
                mask, next_pos = mask[index], next_pos[index]
                tokens = [tokens[j] for j in keep]
                active = [active[j] for j in keep]
            ids = torch.tensor(tokens).unsqueeze(1)
            mask = torch.cat([mask, torch.ones((len(active), 1), dtype=torch.long)], dim=1)
            positions = next_pos.unsqueeze(1)
            next_pos = next_pos + 1
    return new


def _rows_cache(prefixes: Sequence[Prefilled], capacity: int) -> Any:
    """A cache of one row per prefix: row i holds prefix i's keys and values, then zeros up to the longest."""
    from transformers.cache_utils import Cache

    start = max(len(p.ids) for p in prefixes)
    layers = []
    for index in range(len(prefixes[0].cache.layers)):
        pairs = [(p.cache.layers[index].keys, p.cache.layers[index].values) for p in prefixes]
        layers.append(_buffer_layer()(pairs, start, capacity))
    return Cache(layers=layers)


@functools.cache
def _buffer_layer() -> type:
    from transformers.cache_utils import DynamicLayer

    class BufferLayer(DynamicLayer):
        """A `DynamicLayer` whose keys and values live in a buffer of fixed capacity, written in place.

        `keys`/`values` are views of the filled part, as a `DynamicLayer` would hold them after its
        concatenations, so the model sees the same tensors without a copy of the whole cache per step.
        """

        def __init__(self, pairs: Sequence[tuple[Any, Any]], start: int, capacity: int) -> None:
            import torch

            super().__init__()
            first = pairs[0][0]
            shape = (len(pairs), first.shape[1], capacity, first.shape[3])
            self._k = torch.empty(shape, dtype=first.dtype, device=first.device)
            self._v = torch.empty(shape, dtype=first.dtype, device=first.device)
            for row, (keys, values) in enumerate(pairs):
                own = keys.shape[-2]
                self._k[row, :, :own], self._v[row, :, :own] = keys[0], values[0]
                self._k[row, :, own:start], self._v[row, :, own:start] = 0, 0  # masked, but must be finite
            self.device, self.is_initialized, self._length = first.device, True, start
            self._views()

        def _views(self) -> None:
            self.keys, self.values = self._k[:, :, : self._length], self._v[:, :, : self._length]

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
            end = self._length + key_states.shape[-2]
            self._k[:, :, self._length : end], self._v[:, :, self._length : end] = key_states, value_states
            self._length = end
            self._views()
            return self.keys, self.values

        def get_seq_length(self) -> int:
            return self._length

        def batch_select_indices(self, indices: Any) -> None:
            self._k, self._v = self._k[indices], self._v[indices]
            self._views()

    return BufferLayer


def _finished(token: int, sequence: list[int], produced: int, limit: int, eos: frozenset[int], stop: Any) -> bool:
    """Whether a row ends with `token`: end of turn, the length limit, or a completed stop string."""
    if token in eos or produced >= limit:
        return True
    if stop is None:
        return False
    import torch

    return bool(stop(torch.tensor([sequence]), None)[0])
