"""The local reader's speed and accuracy, and the harness overhead of the main job.

1. Reader throughput (default): the SmolLM2 reader answers the same sample questions, several per
   memory (the whole source, or `oracle` memories), on the plain path (one prompt at a time), on the
   prefix-cached path, and with `--batched` also the plain path in batches of 8 and the reader's default
   (prefix-cached from `cache_min_tokens`, else batched); questions/s side by side, the ratio, and whether
   the answers are identical (greedy decoding must not depend on the path). `--threads 1,2` then times the
   prefix-cached path at each torch thread count.
2. Reader accuracy (`--accuracy`): `contains` accuracy on the whole bundled sample (155 questions) when
   the reader reads (a) the whole source and (b) the oracle memory: the source sentences that hold a
   gold reference of the group's questions, in source order, cut to L = floor(0.1 N) by the protocol.
   `--variant` swaps in one of the prompt variants below (the current prompt is `current`).
3. Main job (`--main-job`): `gacc run` with its defaults, through `gacc_hf.cli.main`, on an empty cache,
   every method wrapped in a timer (same name and revision); prints wall / time inside model calls.

    HF_HUB_OFFLINE=1 python benchmarks/models.py [--questions 24] [--memory full|oracle] [--batched] [--threads 1,2]
    HF_HUB_OFFLINE=1 python benchmarks/models.py --accuracy [--variant current] [--groups N]
    HF_HUB_OFFLINE=1 python benchmarks/models.py --main-job [--cache-dir DIR --output-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from gacc_hf import ReaderInput, get_codec, token_budget
from gacc_hf.data.jsonl import load_sample
from gacc_hf.data.schema import Question
from gacc_hf.methods.judges import contains_match
from gacc_hf.methods.registry import resolve
from gacc_hf.protocol import call_many, method_name, revision_of
from gacc_hf.scoring.evidence import oracle_memory

SECONDS: dict[str, float] = defaultdict(float)  # time inside model calls, by role
LOADING: dict[str, float] = defaultdict(float)  # time building (loading) methods, by role

# Reader prompt variants tried for the accuracy part; each keeps the memory before the question.
VARIANTS: dict[str, dict[str, str | None]] = {
    "terse": {
        "system": "Answer the question using the text. Reply with the answer only: a name, number, time or short "
        "phrase, not a sentence.",
        "user": "{memory}\n\nQuestion: {question}",
    },
    "example": {
        "system": "Answer the question using the text. Reply with the answer only, in a few words.\n\n"
        "Example. Text: The backup job failed twice before it finished at 04:10 on Sunday.\n"
        "Question: When did the backup job finish?\nAnswer: 04:10 on Sunday",
        "user": "{memory}\n\nQuestion: {question}",
    },
}


class Timed:
    """A method with the same name and revision whose calls add their wall time to `SECONDS[role]`."""

    def __init__(self, role: str, fn: Any) -> None:
        self.role, self.fn = role, fn
        self.name, self.revision = method_name(fn), revision_of(fn)

    def _timed(self, call: Callable[[Any], Any], arg: Any) -> Any:
        start = time.perf_counter()
        try:
            return call(arg)
        finally:
            SECONDS[self.role] += time.perf_counter() - start

    def __call__(self, item: Any) -> Any:
        return self._timed(self.fn, item)

    def batch(self, items: Sequence[Any]) -> list[Any]:
        return self._timed(lambda xs: call_many(self.fn, xs), items)


def oracle(row: dict[str, Any], ratio: float = 0.1) -> str:
    """The run's `oracle` memory of one group: its gold-holding source sentences, in order, cut to L."""
    gold = {g["question_id"]: tuple(g["references"]) for g in row["gold"]}
    questions = [Question(q["question_id"], q["question"], gold[q["question_id"]]) for q in row["questions"]]
    budget = token_budget(len(get_codec().encode(row["context"])), ratio)
    return oracle_memory(row["context"], questions, budget).text


def reading(memory: str, groups: int | None = None) -> tuple[list[ReaderInput], list[tuple[str, ...]]]:
    """The reader items of the sample (memory `full` or `oracle`) and each item's gold references."""
    rows = list(load_sample("judge"))[:groups]
    items, gold = [], []
    for row in rows:
        text = row["context"] if memory == "full" else oracle(row)
        refs = {g["question_id"]: tuple(g["references"]) for g in row["gold"]}
        for q in row["questions"]:
            items.append(ReaderInput(text, q["question"]))
            gold.append(refs[q["question_id"]])
    return items, gold


def reader_throughput(n_questions: int, memory: str, batched: bool) -> None:
    items = reading(memory)[0][:n_questions]
    reader = resolve("reader", "smollm2")
    default = (reader.prefix_cache, reader.batch_size, reader.cache_min_tokens)
    paths = [("plain, batch 1", False, 1, 0), ("prefix-cached", True, 1, 0)]
    if batched:
        paths[1:1] = [("plain, batch 8", False, 8, 0)]
        paths.append((f"default ({default[2]}+)", *default))  # cached from cache_min_tokens, else batched
    answers, rates = {}, {}
    for label, cached, size, least in paths:  # execution settings: same revision, same model
        reader.prefix_cache, reader.batch_size, reader.cache_min_tokens = cached, size, least
        reader._rows = None  # no prefix cache carried over from the previous path
        start = time.perf_counter()
        answers[label] = reader.batch(items)
        rates[label] = len(items) / (time.perf_counter() - start)
    memories = len({i.memory for i in items})
    print(f"reader {reader.name} (max_new_tokens {reader.max_new_tokens}), {len(items)} sample questions over")
    print(f"{memories} memories (memory = {memory}); load average {os.getloadavg()[0]:.2f}")
    print(f"{'path':<18} {'questions/s':>12} {'x plain':>8} {'answers = plain':>16}")
    base = paths[0][0]
    for label, rate in rates.items():
        same = answers[label] == answers[base]
        print(f"{label:<18} {rate:>12.3f} {rate / rates[base]:>8.2f} {same!s:>16}")


def thread_counts(n_questions: int, memory: str, counts: Sequence[int]) -> None:
    """The prefix-cached reader's questions/s at each torch thread count, on the same questions."""
    items = reading(memory)[0][:n_questions]
    print(f"\nprefix-cached reader, {len(items)} questions (memory = {memory}), by torch threads")
    print(f"{'threads':>7} {'questions/s':>12} {'load average':>13}")
    for count in counts:
        reader = resolve("reader", f"smollm2?threads={count}")
        reader.cache_min_tokens = 0
        start = time.perf_counter()
        reader.batch(items)
        rate = len(items) / (time.perf_counter() - start)
        print(f"{count:>7} {rate:>12.3f} {os.getloadavg()[0]:>13.2f}", flush=True)


def accuracy(variant: str, groups: int | None, max_new_tokens: int | None, cuts: Sequence[int]) -> None:
    from gacc_hf.methods import hf_chat as pipeline

    if variant != "current":
        pipeline.PROMPTS["reader"] = {**pipeline.PROMPTS["reader"], "en": VARIANTS[variant]}
    spec = "smollm2" if max_new_tokens is None else f"smollm2?max_new_tokens={max_new_tokens}"
    reader = resolve("reader", spec)
    print(f"reader {reader.name} {reader.revision}, variant {variant}, load average {os.getloadavg()[0]:.2f}")
    for memory in ("full", "oracle"):
        items, gold = reading(memory, groups)
        start = time.perf_counter()
        answers = call_many(reader, items)
        seconds = time.perf_counter() - start
        marks = [contains_match(a, refs) for a, refs in zip(answers, gold, strict=True)]
        correct = sum(marks)
        print(
            f"{memory:<7} {correct:>4} / {len(items)} = {correct / len(items):.3f} contains"
            f"   ({seconds:.0f} s, load average {os.getloadavg()[0]:.2f})",
            flush=True,
        )
        for item, answer, refs in list(zip(items, answers, gold, strict=True))[:6]:
            print(f"    {item.question!r} -> {answer!r}  (gold {refs[0]!r})")
        print("    correct per question: " + "".join(str(int(m)) for m in marks))
        tokenizer = reader.lm.tokenizer
        for cut in cuts:  # what a lower limit would have scored: greedy answers at n tokens are prefixes
            short = [tokenizer.decode(tokenizer(a, add_special_tokens=False)["input_ids"][:cut]) for a in answers]
            hits = sum(contains_match(a, refs) for a, refs in zip(short, gold, strict=True))
            print(f"    answers re-cut to {cut} tokens: {hits} / {len(items)} = {hits / len(items):.3f}")


def main_job(cache_dir: str, output_dir: str) -> None:
    from gacc_hf.cli import main
    from gacc_hf.methods.registry import register
    from gacc_hf.run.presets import DEFAULTS

    names = [("compressor", c) for c in DEFAULTS.compressors] + [("reader", DEFAULTS.reader), ("judge", DEFAULTS.judge)]
    for role, name in names:  # load every model first, so loading is timed apart from the run
        start = time.perf_counter()
        method = Timed(role, resolve(role, name))  # type: ignore[arg-type]
        LOADING[role] += time.perf_counter() - start
        register(role, name, lambda method=method: method)  # type: ignore[arg-type,misc]
    argv = ["run", "--cache-dir", cache_dir, "--output-dir", output_dir]
    start = time.perf_counter()
    code = main(argv)
    wall = time.perf_counter() - start
    inside, loading = sum(SECONDS.values()), sum(LOADING.values())
    print(f"\nmain job: gacc {' '.join(argv)} (exit {code})")
    print(f"wall {wall:.1f} s after {loading:.1f} s of model loading; inside model calls {inside:.1f} s")
    for role in ("compressor", "reader", "judge"):
        print(f"  {role:<10} {SECONDS[role]:8.1f} s in calls, {LOADING[role]:6.1f} s loading")
    print(f"overhead (wall / time inside model calls): {wall / max(inside, 1e-9):.3f}")
    print(f"with model loading counted as overhead: {(wall + loading) / max(inside, 1e-9):.3f}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=24, help="questions for the throughput part (default 24)")
    parser.add_argument("--memory", choices=("full", "oracle"), default="full", help="what the reader reads")
    parser.add_argument("--batched", action="store_true", help="also time the plain path at batch size 8")
    parser.add_argument("--threads", help="also time the cached reader at these torch thread counts, e.g. 1,2")
    parser.add_argument("--accuracy", action="store_true", help="full-context and oracle accuracy instead")
    parser.add_argument("--variant", choices=("current", *VARIANTS), default="current", help="reader prompt")
    parser.add_argument("--max-new-tokens", type=int, help="reader limit for --accuracy (default: the reader's)")
    parser.add_argument("--cuts", default="12,16,24", help="also score the answers cut to these token counts")
    parser.add_argument("--groups", type=int, help="first N goal groups only for --accuracy (default: all 35)")
    parser.add_argument("--main-job", action="store_true", help="also run and time `gacc run` on an empty cache")
    parser.add_argument("--cache-dir", help="cache for the main job (default: a new temporary folder)")
    parser.add_argument("--output-dir", help="results folder of the main job (default: a new temporary folder)")
    args = parser.parse_args(argv)
    if args.accuracy:
        accuracy(args.variant, args.groups, args.max_new_tokens, [int(c) for c in args.cuts.split(",") if c])
        return 0
    if args.main_job:  # first, so that its model loading is measured
        tmp = tempfile.mkdtemp(prefix="gacc-models-bench-")
        main_job(args.cache_dir or os.path.join(tmp, "cache"), args.output_dir or os.path.join(tmp, "run"))
    reader_throughput(args.questions, args.memory, args.batched)
    if args.threads:
        thread_counts(args.questions, args.memory, [int(t) for t in args.threads.split(",")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
