"""Batched greedy decoding from one shared prefix (`gacc_hf.methods.prefix_decoding`) and the reader's bad input."""

import pytest

from gacc_hf import ReaderInput, load_sample
from gacc_hf.data.synthetic import synthetic
from gacc_hf.methods import hf_chat as pipeline
from gacc_hf.methods import prefix_decoding
from gacc_hf.methods.hf_chat import build
from gacc_hf.methods.prefix_decoding import (
    Prefilled,
    RowDecoder,
    decode_rows,
    eos_ids,
    plain_greedy,
    prefill,
    prefix_decodable,
)
from gacc_hf.methods.registry import resolve
from gacc_hf.run.benchmark import run_benchmark

MEMORY = (
    "Failover promoted ledger-pg-03 within a minute, but PgBouncer still pointed at the old primary, so the ledger "
    "stayed read-only for 47 minutes while refunds and payouts queued. "
) * 3
QUESTIONS = [
    "Why?",
    "Which node stopped accepting writes after the volume filled up, what did the on-call engineer do next to "
    "restore the service, and who approved the change to the PgBouncer configuration during the incident review?",
    "How long was the ledger read-only?",
    "Who?",
    "What queued?",
]
LONG = QUESTIONS[1]


def items():
    return [ReaderInput(MEMORY, q) for q in QUESTIONS]


def test_question_lengths_differ_widely():
    lengths = sorted(len(q.split()) for q in QUESTIONS)
    assert lengths[0] == 1 and lengths[-1] >= 30  # hand count: "Why?" against a 35-word question


def test_batched_decoding_equals_the_plain_path_with_a_row_that_stops_at_the_first_step(tiny, monkeypatch):
    # the long question's first answer token, read on the plain path with a 1-token limit ...
    first = build("reader", str(tiny), max_new_tokens=1, prefix_cache=False)(ReaderInput(MEMORY, LONG))
    monkeypatch.setattr(pipeline, "READER_STOP", (first,))  # ... is a stop string: that row ends at step 1
    plain = build("reader", str(tiny), max_new_tokens=8, prefix_cache=False, batch_size=1).batch(items())
    rows = []
    original = prefix_decoding._rows_cache
    monkeypatch.setattr(
        prefix_decoding, "_rows_cache", lambda prefixes, *a: rows.append(len(prefixes)) or original(prefixes, *a)
    )
    cached = build("reader", str(tiny), max_new_tokens=8, cache_min_tokens=0)
    assert cached.batch(items()) == plain
    assert rows == [len(QUESTIONS)]  # every question of the memory in one batch
    assert plain[1] == first  # stopped at the first step
    assert max(len(a) for a in plain) > len(first)  # while other rows went on
    two = build("reader", str(tiny), max_new_tokens=8, cache_min_tokens=0, batch_size=2)
    rows.clear()
    assert two.batch(items()) == plain
    assert rows == [2, 2, 1]


def test_questions_of_several_memories_share_a_batch_and_keep_the_plain_answers(tiny, monkeypatch):
    memories = [MEMORY, "The ledger stayed read-only.", MEMORY[:120]]  # prefixes of three lengths
    batch = [ReaderInput(m, q) for q in QUESTIONS[:3] for m in memories]
    plain = build("reader", str(tiny), max_new_tokens=6, prefix_cache=False).batch(batch)
    prefixes = []
    original = prefix_decoding._rows_cache
    monkeypatch.setattr(
        prefix_decoding,
        "_rows_cache",
        lambda rows, *a: prefixes.append(len({id(p) for p in rows})) or original(rows, *a),
    )
    assert build("reader", str(tiny), max_new_tokens=6).batch(batch) == plain
    assert prefixes == [3]  # one batch, three memories' caches in it
    assert len(set(plain)) > 2  # the memories' answers differ: no row read another row's memory


def test_only_the_last_prefix_cache_outlives_the_batch_it_was_copied_into(tiny, monkeypatch):
    import gc
    import weakref

    reader = build("reader", str(tiny), max_new_tokens=4)
    made = []
    original = prefix_decoding.prefill
    monkeypatch.setattr(
        prefix_decoding, "prefill", lambda model, ids: made.append(weakref.ref(p := original(model, ids))) or p
    )
    seen = []
    monkeypatch.setattr(prefix_decoding, "_greedy", lambda *a: seen.append(sum(r() is not None for r in made)) or [[]])
    rows = [((1, 2, 3), [4]), ((1, 2, 3, 5), [4]), ((1, 2, 3, 5, 6), [4])]
    decoder = RowDecoder(reader.lm.model, 4, frozenset(), None, 0, rows_per_batch=1, batch_tokens=100)
    decoder.decode(rows)
    gc.collect()
    assert len(made) == 3 and seen == [1, 1, 1]  # while each batch decodes, only the last prefix is held
    assert [r() is not None for r in made] == [False, False, True]  # kept for the next call


def test_batches_keep_within_the_row_and_key_value_budgets():
    a, b, c = (1,) * 10, (2,) * 12, (3,) * 30
    rows = [(c, [7, 7]), (a, [7, 7, 7]), (b, [7]), (a, [7, 7]), (b, [8])]
    decoder = RowDecoder(None, 4, frozenset(), None, 0, rows_per_batch=3, batch_tokens=60)
    # hand count, in order of prefix length then tail length: rows 3, 1 (prefix 10) then 2, 4 (prefix 12), 0.
    # [3, 1, 2]: 3 rows x (12 + 3 + 4) = 57 <= 60, and the row cap is reached; [4, 0] would be 2 x (30 + 2 + 4)
    # = 72 > 60, so row 0 starts a batch of its own
    assert decoder.batches(rows) == [[3, 1, 2], [4], [0]]
    assert RowDecoder(None, 4, frozenset(), None, 0, rows_per_batch=8, batch_tokens=10).batches(rows) == [
        [3], [1], [2], [4], [0]  # every row alone is over 10 tokens: one row per batch, none dropped
    ]  # fmt: skip


def test_only_models_whose_cache_is_plain_layers_are_prefix_decoded():
    from types import SimpleNamespace

    from transformers import LlamaConfig, MistralConfig

    assert prefix_decodable(SimpleNamespace(config=LlamaConfig(num_hidden_layers=2)))
    assert prefix_decodable(SimpleNamespace(config=MistralConfig(num_hidden_layers=2, sliding_window=None)))
    assert not prefix_decodable(SimpleNamespace(config=MistralConfig(num_hidden_layers=2, sliding_window=8)))


def test_finished_rows_leave_the_batch(tiny):
    reader = build("reader", str(tiny), max_new_tokens=5, cache_min_tokens=0)
    model = reader.lm.model
    ids = [reader._prompt_ids(pipeline.chat_messages("reader", memory=MEMORY, question=q)) for q in QUESTIONS[:3]]
    shared = pipeline.common_prefix(ids)
    prefix, tails = ids[0][:shared], [r[shared:] for r in ids]
    prefilled = prefill(model, tuple(prefix))
    cache = prefilled.cache
    free = decode_rows(model, [(prefilled, t) for t in tails], 5, frozenset())
    assert [len(r) for r in free] == [5, 5, 5]
    widths = []
    hook = model.register_forward_hook(
        lambda m, args, kwargs, out: widths.append(len(kwargs["input_ids"])), with_kwargs=True
    )
    try:
        ended = decode_rows(model, [(prefilled, t) for t in tails], 5, frozenset([free[0][0]]))
    finally:
        hook.remove()
    assert ended[0] == free[0][:1]  # row 0 ends at its first token, now an end of turn
    assert all(e == f[: len(e)] for e, f in zip(ended, free, strict=True))
    assert widths[0] == 3 and widths[-1] < 3  # it left the batch (unless every row produced that token at once)
    assert cache.get_seq_length() == len(prefix)  # the shared cache itself is untouched


def test_prefix_decoding_refuses_what_it_cannot_decode_exactly(tiny):
    reader = build("reader", str(tiny), cache_min_tokens=0)
    ids = reader._prompt_ids(pipeline.chat_messages("reader", memory=MEMORY, question="Q?"))
    prefilled = prefill(reader.lm.model, tuple(ids[:-3]))
    with pytest.raises(ValueError, match="non-empty prefix"):
        Prefilled((), prefilled.cache)
    with pytest.raises(ValueError, match="non-empty prefix"):
        prefill(reader.lm.model, ())
    with pytest.raises(ValueError, match="at least one token after the shared prefix"):
        decode_rows(reader.lm.model, [(prefilled, ids[-3:]), (prefilled, [])], 4, frozenset())
    assert decode_rows(reader.lm.model, [(prefilled, ids[-3:])], 0, frozenset()) == [[]]


def test_generation_settings_that_change_greedy_decoding_turn_batched_decoding_off(tiny):
    from transformers import GenerationConfig

    assert plain_greedy(GenerationConfig())
    assert plain_greedy(GenerationConfig(repetition_penalty=1.0, eos_token_id=[1, 2], suppress_tokens=[]))
    assert not plain_greedy(GenerationConfig(repetition_penalty=1.2))
    assert not plain_greedy(GenerationConfig(no_repeat_ngram_size=3))
    assert eos_ids(GenerationConfig(eos_token_id=2)) == {2}
    assert eos_ids(GenerationConfig(eos_token_id=[2, 7])) == {2, 7}
    assert eos_ids(GenerationConfig()) == set()
    reader = build("reader", str(tiny))
    assert reader.prefix_cache
    config = reader.lm.model.generation_config
    config.repetition_penalty = 1.3
    try:
        assert not build("reader", str(tiny)).prefix_cache
    finally:
        config.repetition_penalty = 1.0


def test_batch_size_zero_is_refused(tiny):
    for role in ("reader", "judge", "compressor"):
        with pytest.raises(ValueError, match="batch_size must be >= 1, got 0"):
            build(role, str(tiny), batch_size=0)
    assert build("reader", str(tiny), batch_size=1).batch_size == 1


def test_max_new_tokens_zero_is_refused(tiny):
    for role in ("reader", "judge"):
        with pytest.raises(ValueError, match="max_new_tokens must be >= 1, got 0"):
            build(role, str(tiny), max_new_tokens=0)
    assert build("reader", str(tiny), max_new_tokens=1)(items()[0]) is not None


def test_a_prompt_over_the_context_window_is_an_error_for_its_items_only(tiny, tmp_path):
    reader = build("reader", str(tiny), max_new_tokens=4, cache_min_tokens=0)
    short = ReaderInput("The ledger stayed read-only.", "How long?")
    length = len(reader._prompt_ids(pipeline.chat_messages("reader", memory=MEMORY, question="Why?")))
    reader.window = length + 4  # "Why?" fits exactly with its 4 new tokens; longer questions do not
    out = reader.batch([ReaderInput(MEMORY, "Why?"), short])
    assert all(isinstance(a, str) for a in out)
    out = reader.batch([ReaderInput(MEMORY, "Who is it?"), short, ReaderInput(MEMORY, "Why?")])
    assert isinstance(out[1], str) and out[1] == reader(short)
    for error in (out[0], out[2]):
        assert isinstance(error, ValueError)
        assert "context window of" in str(error) and repr(MEMORY[:60] + "…") in str(error)
    with pytest.raises(ValueError, match="max_position_embeddings"):
        reader(ReaderInput(MEMORY, "Who is it?"))


def test_the_runner_names_the_question_whose_memory_overflows(tiny, tmp_path):
    data = synthetic(seed=0, contexts=1, goals_per_context=1, questions_per_goal=1)
    reader = resolve("reader", f"hf:{tiny}?max_new_tokens=4")
    reader.window = 8  # smaller than any prompt
    try:
        with pytest.raises(Exception, match=r"question_id=.*context window of 8 tokens"):
            run_benchmark(
                data,
                compressor=["truncate"],
                reader=reader,
                judge="exact",
                ratios=(0.5,),
                cache_dir=str(tmp_path),
                progress=False,
                n_bootstrap=0,
            )
    finally:
        reader.window = reader.lm.model.config.max_position_embeddings


@pytest.mark.slow
def test_real_smollm2_batched_prefix_decoding_equals_the_plain_path():
    rows = list(load_sample("judge"))
    items = [ReaderInput(row["context"], q["question"]) for row in rows[:3] for q in row["questions"]]
    items += [ReaderInput(rows[0]["context"], "Who?")]  # a one-word question beside the long ones
    cached = resolve("reader", "smollm2")
    plain = resolve("reader", "smollm2?batch_size=1")
    plain.prefix_cache = False
    assert cached.batch(items) == plain.batch(items)


def test_a_cuda_device_gets_larger_batches_unless_the_spec_names_one(tiny, monkeypatch):
    assert build("reader", str(tiny)).batch_size == 32  # the CPU defaults
    assert build("reader", str(tiny)).batch_tokens == pipeline.READER_BATCH_TOKENS
    assert build("judge", str(tiny)).batch_size == 16
    monkeypatch.setattr(pipeline, "torch_device", lambda device, spec="": "cuda:0")  # plumbing only: loads on CPU
    for role in ("compressor", "reader", "judge"):
        assert build(role, str(tiny)).batch_size == pipeline.CUDA_BATCH_SIZE
    assert build("reader", str(tiny)).batch_tokens == pipeline.CUDA_READER_BATCH_TOKENS
    assert build("reader", f"{tiny}?batch_size=4").batch_size == 4
    assert build("reader", str(tiny), batch_size=2).batch_size == 2


def test_prefill_keeps_the_cache_of_a_full_forward_without_the_prefix_logits(tiny):
    """The cache is what a forward with every position's logits gives; the logits are asked for the last
    position only (a long prefix's vocabulary logits were the reader's largest transient allocation)."""
    import torch
    from transformers import DynamicCache

    reader = build("reader", str(tiny), cache_min_tokens=0)
    model = reader.lm.model
    ids = tuple(reader._prompt_ids(pipeline.chat_messages("reader", memory=MEMORY, question="Q?")))
    shapes = []
    hook = model.register_forward_hook(lambda m, args, out: shapes.append(tuple(out.logits.shape)))
    try:
        prefilled = prefill(model, ids)
    finally:
        hook.remove()
    assert shapes == [(1, 1, model.config.vocab_size)]
    full = DynamicCache(config=model.config)
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([ids]), cache=full).logits
    assert logits.shape[1] == len(ids)  # a forward without the limit computes every position's logits
    for mine, theirs in zip(prefilled.cache.layers, full.layers, strict=True):
        assert torch.equal(mine.keys, theirs.keys) and torch.equal(mine.values, theirs.values)
