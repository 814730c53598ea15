import math

import pytest

from gacc_hf import CompressorInput, JudgeInput, ReaderInput, get_codec, load_sample
from gacc_hf.data.synthetic import synthetic
from gacc_hf.methods import hf_chat as pipeline
from gacc_hf.methods import prefix_decoding
from gacc_hf.methods.hf_chat import PROMPTS, build, parse_verdict
from gacc_hf.methods.registry import resolve
from gacc_hf.run.benchmark import run_benchmark

MEMORIES = [
    "",
    "The primary node ledger-pg-02 stopped accepting writes.",
    "Failover promoted ledger-pg-03 within a minute, but PgBouncer still pointed at the old primary, so the "
    "ledger stayed read-only for 47 minutes while refunds and payouts queued.",
]
QUESTIONS = ["Which node stopped accepting writes?", "How long was the ledger read-only?"]


def reader_items():
    return [ReaderInput(m, q) for m in MEMORIES for q in QUESTIONS]


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("CORRECT", True),
        ("correct.", True),
        (" **Correct** - it matches", True),
        ("INCORRECT", False),
        ("Incorrect.", False),
        ("incorrectly correct", False),
        ("Not correct", False),
        ("CORRECTLY", False),
        ("", False),
        ("The answer is correct", False),
    ],
)
def test_verdicts_are_parsed_strictly(reply, verdict):
    assert parse_verdict(reply) is verdict


def test_registry_names_and_the_shared_model(tiny):
    spec = f"hf:{tiny}"
    comp, read, judge = (resolve(role, spec) for role in ("compressor", "reader", "judge"))
    assert comp.name == read.name == judge.name == spec
    assert comp.lm is read.lm is judge.lm  # one loaded model serves every role
    assert read.lm.tokenizer.padding_side == "left"
    assert len({comp.revision, read.revision, judge.revision}) == 3


def test_revision_binds_model_prompts_and_generation_settings(tiny, tiny_other_seed, monkeypatch):
    base = build("reader", str(tiny))
    assert build("reader", str(tiny)).revision == base.revision
    assert build("reader", str(tiny), batch_size=3).revision == base.revision  # execution settings only
    assert build("reader", str(tiny), prefix_cache=False).revision == base.revision
    assert build("reader", str(tiny), cache_min_tokens=0).revision == base.revision
    assert build("reader", f"{tiny}?threads=2&device=cpu&batch_size=4").revision == base.revision
    assert build("reader", f"{tiny}?dtype=bfloat16").revision != base.revision
    assert build("reader", str(tiny_other_seed)).revision != base.revision
    assert build("reader", str(tiny), max_new_tokens=5).revision != base.revision
    assert build("reader", f"{tiny}?max_new_tokens=5").revision == build("reader", str(tiny), max_new_tokens=5).revision
    monkeypatch.setitem(PROMPTS, "reader", {**PROMPTS["reader"], "zh": {"system": "回答。", "user": "{question}"}})
    assert build("reader", str(tiny)).revision != base.revision  # any language's template
    monkeypatch.setitem(PROMPTS, "reader", {**PROMPTS["reader"], "en": {"system": "Answer in one word.", "user": "?"}})
    assert build("reader", str(tiny)).revision != base.revision


def test_batched_reading_equals_one_at_a_time(tiny):
    items = reader_items()
    reader = build("reader", str(tiny), max_new_tokens=6, batch_size=4, prefix_cache=False)  # unequal lengths
    single = [reader(item) for item in items]
    assert reader.batch(items) == single
    assert build("reader", str(tiny), max_new_tokens=6, batch_size=1, prefix_cache=False).batch(items) == single
    assert all(isinstance(a, str) for a in single) and any(single)


def test_prefix_cached_reading_equals_the_plain_path(tiny):
    items = reader_items()
    items = items[::2] + items[1::2] + items[:2]  # memories not adjacent, and repeated items
    plain = build("reader", str(tiny), max_new_tokens=8, prefix_cache=False).batch(items)
    cached = build("reader", str(tiny), max_new_tokens=8, cache_min_tokens=0)
    assert cached.prefix_cache and cached.batch(items) == plain
    assert [cached(item) for item in items] == plain
    assert len(set(plain)) > 2  # the answers differ between memories: the cache is not shared by mistake
    assert build("reader", str(tiny), max_new_tokens=8, cache_min_tokens=30).batch(items) == plain  # mixed


def test_only_memories_of_cache_min_tokens_are_prefix_cached(tiny, monkeypatch):
    reader = build("reader", str(tiny), max_new_tokens=4)
    lengths = [len(reader._prompt_ids(pipeline.chat_messages("reader", memory=m, question="?"))) for m in MEMORIES[1:]]
    reader.cache_min_tokens = (lengths[0] + lengths[1]) // 2  # the short memory below it, the long one above
    prefills, prompts = [], []
    original_prefill, original_pipe = prefix_decoding.prefill, reader.lm.pipeline
    monkeypatch.setattr(
        prefix_decoding, "prefill", lambda model, prefix: prefills.append(prefix) or original_prefill(model, prefix)
    )
    monkeypatch.setattr(reader.lm, "pipeline", lambda chats, **kw: prompts.extend(chats) or original_pipe(chats, **kw))
    reader.batch([ReaderInput(m, q) for m in MEMORIES[1:] for q in QUESTIONS])
    assert len(prefills) == 1 and MEMORIES[2] in reader.lm.tokenizer.decode(prefills[0])
    assert [c[-1]["content"] for c in prompts] == [f"{MEMORIES[1]}\n\nQuestion: {q}" for q in QUESTIONS]


def test_each_distinct_memory_is_prefilled_once(tiny, monkeypatch):
    reader = build("reader", str(tiny), max_new_tokens=4, cache_min_tokens=0)
    prefills = []
    original = prefix_decoding.prefill
    monkeypatch.setattr(
        prefix_decoding, "prefill", lambda model, prefix: prefills.append(prefix) or original(model, prefix)
    )
    items = [ReaderInput(m, q) for q in QUESTIONS for m in MEMORIES[1:]]  # memories interleaved: 1 2 1 2
    reader.batch(items)
    assert len(prefills) == 2
    texts = [reader.lm.tokenizer.decode(p) for p in prefills]
    for text, memory in zip(texts, MEMORIES[1:], strict=True):  # everything before the question is shared
        prompt = reader.lm.tokenizer.decode(
            reader._prompt_ids(pipeline.chat_messages("reader", memory=memory, question="Q?"))
        )
        assert memory in text and prompt.startswith(text) and prompt[len(text) :].strip().startswith("Q?")
    reader.batch(items[-1:])  # the same memory in the next runner chunk: its prefix is still cached
    assert len(prefills) == 2
    reader.batch(items[:1])  # another memory: prefilled again
    assert len(prefills) == 3


def test_the_answer_ends_at_the_stop_string(tiny, monkeypatch):
    item = ReaderInput(MEMORIES[2], QUESTIONS[1])
    monkeypatch.setattr(pipeline, "READER_STOP", ("\x00never\x00",))
    full = build("reader", str(tiny), max_new_tokens=12)(item)
    words = full.split()
    assert len(words) >= 3, full
    stop = words[1]
    monkeypatch.setattr(pipeline, "READER_STOP", (stop,))
    for cached in (True, False):
        answer = build("reader", str(tiny), max_new_tokens=12, prefix_cache=cached, cache_min_tokens=0)(item)
        assert full.startswith(answer) and stop in answer and len(answer) < len(full)


def test_only_the_first_line_is_the_answer():
    assert pipeline.first_line("\n 47 minutes. \nQuestion: who?") == "47 minutes."
    assert pipeline.first_line("Paris") == "Paris"


def test_every_pipeline_batch_is_padded_left_and_limited_to_max_new_tokens(tiny, monkeypatch):
    reader = build("reader", str(tiny), max_new_tokens=4, batch_size=4, prefix_cache=False)
    seen = []
    original = reader.lm.pipeline
    monkeypatch.setattr(
        reader.lm, "pipeline", lambda chats, **kw: seen.append((len(chats), kw)) or original(chats, **kw)
    )
    reader.batch(reader_items())
    assert [n for n, _ in seen] == [4, 2]
    assert all(kw["max_new_tokens"] == 4 and kw["do_sample"] is False and kw["batch_size"] == n for n, kw in seen)
    assert reader.lm.tokenizer.padding_side == "left"


def test_compressor_limit_follows_the_budget(tiny):
    comp = build("compressor", str(tiny))
    context = " ".join(MEMORIES[1:]) * 3
    model_tokens = len(comp.lm.tokenizer(context, add_special_tokens=False)["input_ids"])
    cl100k = len(get_codec().encode(context))
    for budget in (1, 10, 37):
        expected = math.ceil(budget * model_tokens / cl100k)
        item = CompressorInput(context, "why writes failed", budget)
        assert comp.max_new_tokens(item) == expected


def test_one_generation_serves_every_budget_of_a_prompt(tiny, monkeypatch):
    comp = build("compressor", str(tiny))
    context = " ".join(MEMORIES[1:])
    items = [CompressorInput(context, "g", 8), CompressorInput(context, "g", 20), CompressorInput(context, "", 8)]
    alone = [comp(item) for item in items]
    calls = []
    original = comp.lm.pipeline
    monkeypatch.setattr(comp.lm, "pipeline", lambda chats, **kw: calls.append(len(chats)) or original(chats, **kw))
    assert comp.batch(items) == alone
    assert calls == [2]  # two distinct prompts (goal, no goal) in one batch
    assert alone[1].startswith(alone[0]) and len(alone[1]) > len(alone[0])  # greedy: the shorter is a prefix


def test_goal_and_no_goal_use_their_own_prompt_template():
    goal = pipeline.chat_messages("compressor", context="C", goal="G")
    none = pipeline.chat_messages("compressor", context="C", goal=" ")
    assert goal[-1]["content"] == PROMPTS["compressor"]["en"]["goal"].format(context="C", goal="G")
    assert none[-1]["content"] == PROMPTS["compressor"]["en"]["no_goal"].format(context="C")


def test_a_chinese_question_is_asked_in_chinese_and_an_english_one_in_english():
    zh = pipeline.chat_messages("reader", memory="账本数据库在 3 月 14 日停写。", question="主库停写了多久？")
    en = pipeline.chat_messages(
        "reader", memory="账本数据库在 3 月 14 日停写。", question="How long was the ledger down?"
    )
    assert zh == [{"role": "system", "content": "用几个词回答。"}, {"role": "user", "content": zh[-1]["content"]}]
    assert zh[-1]["content"].endswith("问题：主库停写了多久？")
    assert en[0]["content"] == "Answer in a few words." and en[-1]["content"].endswith(
        "Question: How long was the ledger down?"
    )
    judge = pipeline.chat_messages("judge", question="主库停写了多久？", references="47 分钟", answer="47分钟")
    assert judge[-1]["content"].startswith("问题：主库停写了多久？\n参考答案：47 分钟")
    assert "CORRECT 或 INCORRECT" in judge[0]["content"]  # the verdict words parse_verdict reads
    context = pipeline.chat_messages("compressor", context="事故复盘：缓存雪崩", goal="找出原因")
    assert context[-1]["content"].endswith("列出上文中与这个目标有关的关键事实（名称、数字、日期）：找出原因")


def test_a_random_model_judge_never_says_correct(tiny):
    judge = build("judge", str(tiny))
    items = [JudgeInput("Which node?", "ledger-pg-02", ("ledger-pg-02",), "source")] * 2
    assert judge.batch(items) == [False, False]  # noise is unparseable, and unparseable is wrong


def test_runner_caches_every_model_call(tiny, tmp_path):
    data = synthetic(seed=0, contexts=2, goals_per_context=2, questions_per_goal=2)
    spec = f"hf:{tiny}"
    kw = dict(compressor=[spec, "truncate"], reader=spec, judge=spec, ratios=(0.1,), cache_dir=str(tmp_path))
    first = run_benchmark(data, progress=False, n_bootstrap=0, **kw)
    second = run_benchmark(data, progress=False, n_bootstrap=0, **kw)
    assert first.calls["compressor"] > 0 and first.calls["reader"] > 0 and first.calls["judge"] > 0
    assert second.calls == {"compressor": 0, "reader": 0, "judge": 0}
    assert second.answers == first.answers
    assert first.integrity == {"budget_violations": 0, "count_errors": 0, "exposures": 0}


@pytest.mark.slow
def test_real_smollm2_reads_answers_and_batches_like_single_calls():
    reader = resolve("reader", "smollm2")
    memory = "Mei Lin noticed the full disk. The ledger stayed read-only for 47 minutes."
    items = [
        ReaderInput(memory, "How long did the ledger stay read-only?"),
        ReaderInput("The capital of France is Paris.", "What is the capital of France?"),
        ReaderInput(memory, "Who noticed the full disk?"),  # a 135M model often misses this one: not asserted
    ]
    answers = reader.batch(items)
    assert answers == [reader(item) for item in items]
    assert "47 minutes" in answers[0] and "Paris" in answers[1]
    assert all("\n" not in a for a in answers)
    comp = resolve("compressor", "smollm2")
    item = CompressorInput(" ".join(i.memory for i in items), "who noticed the outage", 12)
    assert 12 <= comp.max_new_tokens(item) < 20  # English costs SmolLM2 about as many tokens as cl100k
    assert comp(item).strip()


@pytest.mark.slow
def test_real_smollm2_prefix_cached_answers_equal_the_plain_path_on_whole_sources():
    rows = list(load_sample("judge"))
    items = [ReaderInput(row["context"], q["question"]) for row in (rows[0], rows[5]) for q in row["questions"][:2]]
    cached = resolve("reader", "smollm2")
    plain = resolve("reader", "smollm2?batch_size=1")
    plain.prefix_cache = False
    assert cached.revision == plain.revision
    assert cached.batch(items) == plain.batch(items)


@pytest.mark.parametrize(
    ("memory", "question"), [("The code is 47.", "What is the code?"), ("代码是四十七。", "代码是多少？")]
)
def test_prompt_tokens_are_the_chat_templates_tokens_counted_without_a_call(tiny, memory, question):
    from transformers import AutoTokenizer

    reader = build("reader", str(tiny))
    item = ReaderInput(memory, question)
    tokenizer = AutoTokenizer.from_pretrained(tiny)
    chat = tokenizer.apply_chat_template(reader.chat_of(item), add_generation_prompt=True, tokenize=True)
    ids = chat["input_ids"] if isinstance(chat, dict) or hasattr(chat, "keys") else chat
    assert reader.prompt_tokens(item) == len(ids)
    assert reader.count_tokens(memory) == len(tokenizer(memory, add_special_tokens=False)["input_ids"])
    assert reader.token_counter == f"{reader.name} tokenizer"


def test_the_cpu_rate_is_stated_for_smollm2_on_the_cpu_only(tiny):
    import dataclasses

    from gacc_hf.methods.weights import tokenizer_only

    rates = pipeline.CPU_SECONDS_PER_PROMPT_TOKEN
    english, chinese = ReaderInput(MEMORIES[1], QUESTIONS[0]), ReaderInput("主节点停止写入。", "哪个节点停止写入？")
    with tokenizer_only():
        smollm2 = build("reader", "smollm2?device=cpu")
    assert smollm2.cpu_seconds_per_prompt_token(english) == rates["en"] < rates["zh"]
    assert smollm2.cpu_seconds_per_prompt_token(chinese) == rates["zh"]
    smollm2.lm = dataclasses.replace(smollm2.lm, device="cuda:0")
    assert smollm2.cpu_seconds_per_prompt_token(english) is None  # not on the CPU: the rate does not apply
    assert build("reader", str(tiny)).cpu_seconds_per_prompt_token(english) is None  # a model not measured
