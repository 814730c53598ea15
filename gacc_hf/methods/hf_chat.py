"""Compressor, reader and judge that wrap a `transformers` text-generation pipeline of a chat model.

The model is the embedded SmolLM2-135M-Instruct (`smollm2`), a local folder or a Hub id (`hf:<spec>`),
with options after `?` (`gacc_hf.methods.weights.ModelOptions`: device, dtype, threads, max_new_tokens,
batch_size). Decoding is greedy; prompts are chat messages rendered by the model's own chat template, batched with
left padding. All prompt templates live in `PROMPTS`, by role and language; each method's revision hashes its
templates, its generation settings and the model's identity, so changing any of them never reuses stale cache entries.

Batches are sorted by prompt length before they are cut into pipeline batches, so little compute goes
to padding. An output is the model's greedy continuation cut to at most `limit` model tokens; items
with the same prompt are generated once at the largest limit asked for and cut for the others (greedy
decoding makes the shorter continuation a prefix of the longer one), so a compressor asked for two
budgets of one (source, goal) pays for one generation. The reader reads differently: its prompt puts
the memory before the question, and it prefills each memory once and decodes that memory's questions
from the caches in shared batches (`PipelineReader`, `prefix_decoding`), because on a CPU the prompt, not
the short answer, is most of the work, and a decoding step costs about the same for one row as for many.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from typing import Any

from gacc_hf.data.language import detect_language, primary
from gacc_hf.methods.prefix_decoding import RowDecoder, eos_ids, plain_greedy, prefix_decodable
from gacc_hf.methods.weights import SMOLLM2, CausalLM, ModelLoadError, load_causal_lm, split_spec, torch_device
from gacc_hf.progress import report
from gacc_hf.protocol import CompressorInput, JudgeInput, ReaderInput
from gacc_hf.tokenizer import get_codec

# Seconds of SmolLM2's CPU time per prompt token by the language it reads, whole sources on 2 cores
# (`benchmarks/cpu_reading.py`, 2026-12-04, load 4.3-5.6): a dry run multiplies a call's prompt tokens by it to
# warn of a long reading. A Chinese token costs several English ones, and a Chinese character is several tokens.
CPU_SECONDS_PER_PROMPT_TOKEN = {"en": 0.0021, "zh": 0.011}

# Templates by role, then by language (the primary subtag of the text's language, `gacc_hf.data.language`), so
# a Chinese question is asked in Chinese. The judge's verdict words stay CORRECT / INCORRECT in every language:
# `parse_verdict` reads only those. A revision hashes its role's whole table, every language.
PROMPTS: dict[str, dict[str, dict[str, str | None]]] = {
    # No system prompt: the model's template supplies its own default, which this task works best with.
    "compressor": {
        "en": {
            "system": None,
            "goal": "{context}\n\nList the key facts above (names, numbers, dates) that matter for this goal: {goal}",
            "no_goal": "{context}\n\nList the key facts above (names, numbers, dates).",
        },
        "zh": {
            "system": None,
            "goal": "{context}\n\n列出上文中与这个目标有关的关键事实（名称、数字、日期）：{goal}",
            "no_goal": "{context}\n\n列出上文中的关键事实（名称、数字、日期）。",
        },
    },
    "reader": {
        "en": {"system": "Answer in a few words.", "user": "{memory}\n\nQuestion: {question}"},
        "zh": {"system": "用几个词回答。", "user": "{memory}\n\n问题：{question}"},
    },
    "judge": {
        "en": {
            "system": "You grade answers. Reply with one word: CORRECT or INCORRECT.",
            "user": "Question: {question}\nReference answers: {references}\nCandidate answer: {answer}\n\n"
            "Does the candidate answer match a reference answer?",
        },
        "zh": {
            "system": "你负责评判答案。只回复一个词：CORRECT 或 INCORRECT。",
            "user": "问题：{question}\n参考答案：{references}\n待评答案：{answer}\n\n待评答案与某个参考答案一致吗？",
        },
    },
}
PROMPT_LANGUAGE = "en"  # the templates of a language without its own

READER_MAX_NEW_TOKENS = 24
JUDGE_MAX_NEW_TOKENS = 3  # the verdict is its first word
READER_STOP = ("\n",)  # answers are one line: stop there instead of running to max_new_tokens
PREFIX_CACHE_MIN_TOKENS = 0  # memories with shorter prompt prefixes are read on the plain path (PipelineReader)
# Rows per batch when the spec names no batch_size. On a CPU: 8 for the compressor, 16 for the judge and
# 32 prefix-decoded reader rows within READER_BATCH_TOKENS tokens of key/value cache (about 370 MB for
# SmolLM2), measured in docs/performance.md. On a CUDA device every role takes CUDA_BATCH_SIZE rows and the
# reader CUDA_READER_BATCH_TOKENS: a step of a small model costs far less per row there. Starting points,
# not measured optima: `?batch_size=` overrides the rows.
READER_BATCH_SIZE = 32
READER_BATCH_TOKENS = 8_192  # rows x (prompt + answer) tokens of key/value cache per prefix-decoding batch
READER_CHUNK_SIZE = 256
CUDA_BATCH_SIZE = 32
CUDA_READER_BATCH_TOKENS = 65_536
_PROBE = "?"  # a second question, to find where the prompts of one memory start to differ

_VERDICT = re.compile(r"^\W*(correct|incorrect)\b", re.IGNORECASE)


def parse_verdict(reply: str) -> bool:
    """True only for a reply whose first word is CORRECT; anything else, INCORRECT included, is False.

    >>> parse_verdict("CORRECT."), parse_verdict("**Correct**"), parse_verdict("INCORRECT"), parse_verdict("Not sure")
    (True, True, False, False)
    """
    match = _VERDICT.match(reply)
    return bool(match) and match.group(1).lower() == "correct"


def chat_messages(role: str, **fields: Any) -> list[dict[str, str]]:
    """The chat messages of one prompt, in the language of its question (the compressor's: its context); the
    compressor's template depends on whether a goal is shown."""
    language = primary(detect_language(fields["question"] if "question" in fields else fields["context"]))
    by_language = PROMPTS[role]
    prompts = by_language.get(language, by_language[PROMPT_LANGUAGE])
    template = prompts["user"] if "user" in prompts else prompts["goal" if fields["goal"].strip() else "no_goal"]
    system = [{"role": "system", "content": prompts["system"]}] if prompts["system"] else []
    return [*system, {"role": "user", "content": str(template).format(**fields)}]


class _ChatMethod:
    """Shared plumbing: revision, greedy batched generation with per-item token limits."""

    role: str

    def __init__(
        self, lm: CausalLM, name: str, batch_size: int, settings: dict[str, Any], dtype: str = "float32"
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        limit = settings.get("max_new_tokens")
        if isinstance(limit, int) and limit < 1:  # an answer of no tokens is always empty: a mistake, not a setting
            raise ValueError(f"max_new_tokens must be >= 1, got {limit}")
        self.lm = lm
        self.name = name
        self.batch_size = batch_size  # execution only: not part of the revision
        generation = {"do_sample": False, "dtype": dtype, **settings}
        blob = json.dumps(
            {"model": lm.identity, "prompts": PROMPTS[self.role], "generation": generation}, sort_keys=True
        )
        self.revision = f"{self.role}-pipeline-v1@{hashlib.sha256(blob.encode()).hexdigest()[:16]}"

    def chat_of(self, item: Any) -> list[dict[str, str]]:
        """The chat messages of one call on `item`."""
        raise NotImplementedError

    @property
    def token_counter(self) -> str:
        """Prompts and outputs are counted with this model's own tokenizer (and chat template)."""
        return f"{self.name} tokenizer"

    def cpu_seconds_per_prompt_token(self, item: Any) -> float | None:
        """The measured CPU rate of a call on `item`, by the language of its texts (English or Chinese), when
        this is SmolLM2 on the CPU; None elsewhere (another model or device: not measured)."""
        if self.name != SMOLLM2 or self.lm.device != "cpu":
            return None
        texts = [text for field in ("context", "memory", "question") if (text := getattr(item, field, ""))]
        return CPU_SECONDS_PER_PROMPT_TOKEN[detect_language(*texts)]

    def prompt_tokens(self, item: Any) -> int:
        """The prompt tokens one call on `item` feeds the model: its chat template, tokenized (no call)."""
        return len(self._prompt_ids(self.chat_of(item)))

    def count_tokens(self, text: str) -> int:
        return len(self.lm.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _prompt_ids(self, chat: list[dict[str, str]]) -> list[int]:
        """The token ids the pipeline feeds the model for one chat (template with the generation prompt)."""
        return self.lm.tokenizer.apply_chat_template(chat, add_generation_prompt=True, return_dict=True)["input_ids"]

    def _generate(
        self, chats: Sequence[list[dict[str, str]]], limits: Sequence[int], stop: Sequence[str] = ()
    ) -> list[str]:
        """Greedy continuations, one per chat, each cut to its first `limits[i]` generated tokens.

        The pipeline returns token ids; a row of a left-padded batch holds the prompt padded to the
        batch's longest prompt, then the new tokens, so those are cut exactly and decoded here. With
        `stop`, a row ends at the first token that completes a stop string.
        """
        tokenizer = self.lm.tokenizer
        prompts: dict[str, tuple[list[dict[str, str]], int]] = {}
        for chat, limit in zip(chats, limits, strict=True):
            key = json.dumps(chat)
            prompts[key] = (chat, max(limit, prompts.get(key, (chat, 0))[1]))
        ids = {k: self._prompt_ids(chat) for k, (chat, _) in prompts.items()}
        lengths = {k: len(v) for k, v in ids.items()}
        order = sorted(prompts, key=lengths.__getitem__)
        new_ids: dict[str, list[int]] = {}
        for start in range(0, len(order), self.batch_size):
            keys = order[start : start + self.batch_size]
            outs = self.lm.pipeline(
                [prompts[k][0] for k in keys],
                batch_size=len(keys),
                max_new_tokens=max(prompts[k][1] for k in keys),
                do_sample=False,
                return_tensors=True,
                pad_token_id=tokenizer.pad_token_id,
                **({"stop_sequence": list(stop)} if stop else {}),
            )
            padded = max(lengths[k] for k in keys)
            for k, out in zip(keys, outs, strict=True):
                row = list(out[0]["generated_token_ids"])
                if row[padded - lengths[k] : padded] != ids[k]:
                    raise RuntimeError(f"{self.name}: the pipeline's batch layout differs from the prompt's tokens")
                new_ids[k] = row[padded:]
            report(len(keys))  # the progress bar moves per sub-batch, not per executor chunk
        return [
            tokenizer.decode(new_ids[json.dumps(chat)][:limit], skip_special_tokens=True).strip()
            for chat, limit in zip(chats, limits, strict=True)
        ]


class PipelineCompressor(_ChatMethod):
    """Writes goal-conditioned notes from the source; `max_new_tokens` follows from the budget.

    The budget L counts cl100k tokens; the model's limit is L scaled by this source's ratio of model
    tokens to cl100k tokens, so the notes can fill L but no generation runs far past it. The budget is
    not stated in the prompt, which keeps one prompt per (source, goal) for every budget.
    """

    role = "compressor"

    def __init__(self, lm: CausalLM, name: str, batch_size: int = 8, dtype: str = "float32") -> None:
        super().__init__(lm, name, batch_size, {"max_new_tokens": "ceil(L * model_tokens / cl100k_tokens)"}, dtype)

    def max_new_tokens(self, item: CompressorInput) -> int:
        """The model-token limit for one input: its cl100k budget in this model's tokens."""
        cl100k = len(get_codec().encode(item.context)) or 1
        model = len(self.lm.tokenizer(item.context, add_special_tokens=False)["input_ids"])
        return max(1, math.ceil(item.token_budget * model / cl100k))

    def __call__(self, item: CompressorInput) -> str:
        return self.batch([item])[0]

    def chat_of(self, item: CompressorInput) -> list[dict[str, str]]:
        return chat_messages("compressor", context=item.context, goal=item.goal)

    def batch(self, items: Sequence[CompressorInput]) -> list[str]:
        chats = [self.chat_of(i) for i in items]
        return self._generate(chats, [self.max_new_tokens(i) for i in items])


def common_prefix(rows: Sequence[Sequence[int]]) -> int:
    """The length of the longest token-id prefix shared by every row.

    >>> common_prefix([[1, 2, 3, 4], [1, 2, 5], [1, 2, 3]])
    2
    """
    n = min(len(r) for r in rows)
    for i in range(n):
        if any(r[i] != rows[0][i] for r in rows):
            return i
    return n


class PipelineReader(_ChatMethod):
    """Answers one question from one memory; the answer ends at the first newline or end of turn.

    With `prefix_cache` (the default) each distinct memory's prompt prefix (system prompt, turn header and
    memory: everything before the question) is prefilled once into a transformers `DynamicCache`, and the
    questions are decoded greedily from those caches in shared batches (`prefix_decoding.RowDecoder`): a
    batch holds the questions of one or several memories, up to `batch_size` rows and `batch_tokens`
    tokens of key/value cache, so a memory is encoded once and each decoding step (which on a CPU costs
    about one read of the weights, whatever the rows) serves as many questions as fit. The last prefix is
    kept across calls, so a memory split over two runner chunks is encoded once too. Memories whose prefix
    has fewer than `cache_min_tokens` tokens go through the plain path (one pipeline call per `batch_size`
    prompts). Every path gives the same answers (tested); `prefix_cache=False` reads every memory on the
    plain path, as does a model whose generation settings change greedy decoding
    (`prefix_decoding.plain_greedy`) or whose cache has special layers (`prefix_decoding.prefix_decodable`).

    A prompt that cannot fit the model's context window (`max_position_embeddings`) with
    `max_new_tokens` after it is not cut: its items get a ValueError in place of an answer, which the
    runner reports with the question and goal it belongs to.
    """

    role = "reader"
    # Items per runner call: questions of many memories fill the decoding batches (one call per 64 items read
    # 1.33x slower than all items at once, docs/performance.md); a crash loses at most this many answers.
    chunk_size = READER_CHUNK_SIZE

    def __init__(
        self,
        lm: CausalLM,
        name: str,
        max_new_tokens: int = READER_MAX_NEW_TOKENS,
        batch_size: int = READER_BATCH_SIZE,
        dtype: str = "float32",
        prefix_cache: bool = True,
        cache_min_tokens: int = PREFIX_CACHE_MIN_TOKENS,
        batch_tokens: int = READER_BATCH_TOKENS,
    ) -> None:
        settings = {"max_new_tokens": max_new_tokens, "stop": list(READER_STOP), "answer": "first line, stripped"}
        super().__init__(lm, name, batch_size, settings, dtype)
        self.max_new_tokens = max_new_tokens
        # execution only: same answers, so not in the revision
        self.prefix_cache = prefix_cache and plain_greedy(lm.model.generation_config) and prefix_decodable(lm.model)
        self.cache_min_tokens = cache_min_tokens
        self.batch_tokens = batch_tokens
        self.window: int | None = getattr(lm.model.config, "max_position_embeddings", None)
        self._rows: RowDecoder | None = None
        self._stop: tuple[tuple[str, ...], Any] | None = None

    def __call__(self, item: ReaderInput) -> str:
        answer = self.batch([item])[0]
        if isinstance(answer, Exception):
            raise answer
        return answer

    def chat_of(self, item: ReaderInput) -> list[dict[str, str]]:
        return chat_messages("reader", memory=item.memory, question=item.question)

    def batch(self, items: Sequence[ReaderInput]) -> list[str | Exception]:
        """One answer per item, or a ValueError for an item whose prompt overflows the context window."""
        by_memory: dict[str, dict[str, str | Exception]] = {}
        for item in items:
            by_memory.setdefault(item.memory, {})[item.question] = ""
        plain: list[tuple[str, str]] = []
        rows: list[tuple[str, str, tuple[int, ...], list[int]]] = []  # memory, question, prefix, tail
        for memory, answers in by_memory.items():
            ids, shared = self.memory_prompts(memory, list(answers))
            longest = max(len(r) for r in ids)
            if self.window is not None and longest + self.max_new_tokens > self.window:
                error = ValueError(
                    f"reader {self.name!r}: the prompt of this memory ({_excerpt(memory)}) is {longest} tokens; with "
                    f"max_new_tokens={self.max_new_tokens} it exceeds the model's context window of {self.window} "
                    "tokens (max_position_embeddings); use a lower ratio or a model with a longer window"
                )
                answers.update(dict.fromkeys(answers, error))
                continue
            if self.prefix_cache and shared >= max(1, self.cache_min_tokens):
                prefix = tuple(ids[0][:shared])
                rows += [(memory, q, prefix, r[shared:]) for q, r in zip(answers, ids, strict=True)]
            else:
                plain += [(memory, q) for q in answers]
        decoded = self._decoder().decode([(prefix, tail) for _, _, prefix, tail in rows], report)
        for (memory, question, _, _), new in zip(rows, decoded, strict=True):
            by_memory[memory][question] = first_line(self.lm.tokenizer.decode(new, skip_special_tokens=True))
        chats = [chat_messages("reader", memory=m, question=q) for m, q in plain]
        for (memory, question), answer in zip(
            plain, self._generate(chats, [self.max_new_tokens] * len(chats), READER_STOP), strict=True
        ):
            by_memory[memory][question] = first_line(answer)
        return [by_memory[i.memory][i.question] for i in items]

    def memory_prompts(self, memory: str, questions: Sequence[str]) -> tuple[list[list[int]], int]:
        """The prompt ids of a memory's questions, and how many leading tokens they share: everything
        before the question (a probe question shows where prompts of this memory start to differ), and
        at least one token of each prompt left after it."""
        ids = [self._prompt_ids(chat_messages("reader", memory=memory, question=q)) for q in questions]
        probe = self._prompt_ids(chat_messages("reader", memory=memory, question=_PROBE))
        return ids, min(common_prefix([*ids, probe]), min(len(r) for r in ids) - 1)

    def _decoder(self) -> RowDecoder:
        """The prefix decoder, built once (its stop-string check scans the vocabulary) and kept with its last prefix."""
        if self._rows is None or self._rows.stop is not self._stop_criteria():
            model = self.lm.model
            self._rows = RowDecoder(
                model,
                self.max_new_tokens,
                eos_ids(model.generation_config),
                self._stop_criteria(),
                self.lm.tokenizer.pad_token_id,
                self.batch_size,
                self.batch_tokens,
            )
        return self._rows

    def _stop_criteria(self) -> Any:
        """transformers' stop-string check for READER_STOP, built once per stop tuple (it scans the vocabulary)."""
        from transformers import StopStringCriteria

        if self._stop is None or self._stop[0] != READER_STOP:
            self._stop = (READER_STOP, StopStringCriteria(self.lm.tokenizer, list(READER_STOP)))
        return self._stop[1]


def _excerpt(text: str, width: int = 60) -> str:
    """The start of a text, quoted, for an error message: `'The ledger stayed…'`."""
    return repr(text[:width] + ("…" if len(text) > width else ""))


def first_line(text: str) -> str:
    """The answer proper: the generated text up to its first line break, stripped.

    >>> first_line("  47 minutes.\\nQuestion: next")
    '47 minutes.'
    """
    return text.strip().split("\n", 1)[0].strip()


class PipelineJudge(_ChatMethod):
    """Asks the model whether the answer matches a reference; the verdict is parsed strictly.

    The source is not put in the prompt: the references settle correctness, and a 1k-token source
    would multiply the judge's cost.
    """

    role = "judge"

    def __init__(
        self,
        lm: CausalLM,
        name: str,
        max_new_tokens: int = JUDGE_MAX_NEW_TOKENS,
        batch_size: int = 16,
        dtype: str = "float32",
    ) -> None:
        super().__init__(lm, name, batch_size, {"max_new_tokens": max_new_tokens}, dtype)
        self.max_new_tokens = max_new_tokens

    def __call__(self, item: JudgeInput) -> bool:
        return self.batch([item])[0]

    def chat_of(self, item: JudgeInput) -> list[dict[str, str]]:
        return chat_messages(
            "judge", question=item.question, references=" | ".join(item.references), answer=item.answer
        )

    def batch(self, items: Sequence[JudgeInput]) -> list[bool]:
        chats = [self.chat_of(i) for i in items]
        return [parse_verdict(reply) for reply in self._generate(chats, [self.max_new_tokens] * len(items))]


_CLASSES: dict[str, type[_ChatMethod]] = {
    "compressor": PipelineCompressor,
    "reader": PipelineReader,
    "judge": PipelineJudge,
}


def build(role: str, spec: str = SMOLLM2, **kwargs: Any) -> _ChatMethod:
    """The pipeline method for `role` on model `spec` (`smollm2`, a folder or a Hub id, with `?options`).

    Options (`gacc_hf.methods.weights.ModelOptions`) are checked before the model is loaded. The method's name
    is the model's name plus the options that change outputs (`smollm2?dtype=bfloat16`), never the
    execution options, so cache keys stay the same on any device, thread count or batch size. On a CUDA
    device the batch size defaults to CUDA_BATCH_SIZE (and the reader's key/value budget to
    CUDA_READER_BATCH_TOKENS).
    """
    model, options = split_spec(spec)
    if options.max_new_tokens is not None:
        if role == "compressor":
            raise ModelLoadError(
                f"model {spec!r}: option max_new_tokens does not apply to the compressor (its limit follows the budget)"
            )
        kwargs.setdefault("max_new_tokens", options.max_new_tokens)
    if options.batch_size is not None:
        kwargs.setdefault("batch_size", options.batch_size)
    if torch_device(options.device, spec).startswith("cuda"):
        kwargs.setdefault("batch_size", CUDA_BATCH_SIZE)
        if role == "reader":
            kwargs.setdefault("batch_tokens", CUDA_READER_BATCH_TOKENS)
    name = (SMOLLM2 if model == SMOLLM2 else f"hf:{model}") + options.name_suffix()
    return _CLASSES[role](load_causal_lm(model, options), name, dtype=options.dtype, **kwargs)
