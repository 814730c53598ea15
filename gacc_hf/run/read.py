"""Answers and verdicts: every question read from its group's memory, every answer judged.

The reader gets `ReaderInput(memory, question)`, one question at a time (docs/protocol.md §5); the items of one
memory are planned next to each other so that a prefix-caching reader can reuse the memory's prefill.
The judge gets `JudgeInput(question, answer, references, source)`: gold and the source enter only here
(docs/protocol.md §6). Answer keys bind the memory, question and reader; verdict keys bind question, answer,
references, source and judge, so equal work is done once across conditions, ratios and runs. When the
reader and the judge both have windows (served methods, `gacc_hf.run.rolling`), a question's verdict request
starts as soon as its answer is in; rows and cache end the same as when judging follows all reading.

The work is planned over keys alone (one answer key and, once its answer is in, one verdict key per
question row); each row is built once, at the end, with its answer, verdict and error in place.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from gacc_hf.data.schema import Group, Question
from gacc_hf.keys import text_hash
from gacc_hf.protocol import JudgeInput, ReaderInput
from gacc_hf.run.cache.key_template import KeyTemplate
from gacc_hf.run.calls import Executor, check_answer, check_bool
from gacc_hf.run.tasks import Follow, Method, Planned, Stage, Task
from gacc_hf.scoring.outcomes import outcome as answer_outcome
from gacc_hf.scoring.settings import Setting


@functools.lru_cache(maxsize=1 << 16)
def _references_hash(references: tuple[str, ...]) -> str:
    return text_hash(json.dumps(list(references), ensure_ascii=False))


# A question, its group, and the content hashes of the question, its references and the group's source,
# which enter its keys.
Asked = tuple[Question, Group, str, str, str]


def asked_of(group: Group) -> list[Asked]:
    """The group's questions, each with the hashes its answer and verdict keys bind."""
    source_hash = text_hash(group.context)
    return [(q, group, text_hash(q.question), _references_hash(q.references), source_hash) for q in group.questions]


Outcome = tuple[list[str | None], list[str | None], dict[str, Any], dict[str, Any]]


def read_and_judge(
    groups: list[Group],
    ledger: list[dict[str, Any]],
    memories: dict[str, dict[str, Any]],
    readers: Sequence[Method],
    judges: Sequence[Method],
    ex: Executor,
    kept: dict[Setting, dict[str, Any]] | None = None,
) -> dict[Setting, Outcome]:
    """Per (reader, judge) setting, every answer and verdict the ledger's questions need: per question row
    (ledger order, then question order) its answer key (None: its memory failed) and verdict key (None: its
    answer failed), and the answer and verdict values by key (`answer_rows` makes the rows of them).

    Each reader reads once, whatever the number of judges: its answers are judged by the first judge as they
    come in (`Executor.run_chain`), then by each further judge; a verdict is asked once per (answer, judge).
    `kept`, when given, receives per setting each row's answer and verdict keys and the values by key (what
    the cost of a cell is attributed from, `gacc_hf.cost.cells`)."""
    questions = {g.goal_id: asked_of(g) for g in groups}
    done: dict[Setting, Outcome] = {}
    for read in readers:
        keys, asked, read_tasks = answer_keys(ledger, memories, questions, read)
        answer_stage = Stage(read, "answer", lambda _item, out: {"answer": check_answer(out)})
        answers: dict[str, Any] | None = None
        for judged in judges:
            verdict_keys = list(keys)  # per row: its answer key, then its verdict key (None: nothing to ask)
            follow = verdict_tasks(verdict_keys, asked, judged, read.name if len(readers) > 1 else None)
            verdict_stage = Stage(judged, "verdict", lambda _item, out: {"correct": check_bool(out)})
            if answers is None:
                answers, verdicts = ex.run_chain(answer_stage, verdict_stage, read_tasks, follow)
            else:
                verdicts = ex.run(judged, "verdict", follow(answers), verdict_stage.finish)
            done[(read.name, judged.name)] = (keys, verdict_keys, answers, verdicts)
            if kept is not None:
                kept[(read.name, judged.name)] = {
                    "answer_keys": keys,
                    "verdict_keys": verdict_keys,
                    "answers": answers,
                    "verdicts": verdicts,
                }
    return done


def answer_rows(
    groups: list[Group],
    ledger: list[dict[str, Any]],
    memories: dict[str, dict[str, Any]],
    evidence: Sequence[Sequence[bool]],
    outcomes: Mapping[Setting, Outcome],
) -> list[dict[str, Any]]:
    """One row per (setting, ledger row, question), settings in run order: the reader and judge, answer,
    verdict, evidence and the texts they came from. `evidence` holds each ledger row's per-question evidence
    flags (`gacc_hf.run.cache.matches`)."""
    by_goal = {g.goal_id: g for g in groups}
    return [row for s, o in outcomes.items() for row in _rows(ledger, memories, evidence, by_goal, o, s)]


def answer_keys(
    ledger: list[dict[str, Any]],
    memories: dict[str, dict[str, Any]],
    questions: dict[str, list[Asked]],
    read: Method,
) -> tuple[list[str | None], list[Asked], Planned]:
    """Per question row (ledger order, then question order): its answer key (None: its memory failed) and
    what it asks; and the reader tasks, one per distinct answer key in row order, each built from its
    first row when the cache does not hold it."""
    answer_key = KeyTemplate(("memory", "question"), reader=read.name, revision=read.revision)
    tails: dict[str, bytes] = {}  # question hash -> the rest of its answer keys' record
    keys: list[str | None] = []
    asked: list[Asked] = []
    entries: list[dict[str, Any]] = []  # per row: its ledger row
    for entry in ledger:
        of_goal = questions[entry["goal_id"]]
        asked += of_goal
        entries += [entry] * len(of_goal)
        if "error" in memories[entry["memory_key"]]:
            keys += [None] * len(of_goal)
            continue
        key_of = answer_key.given(entry["memory_sha256"])
        keys += [
            key_of(tails.get(a[2]) or tails.setdefault(a[2], answer_key.tail(a[2])))  # a[2]: the question hash
            for a in of_goal
        ]
    first: dict[str, int] = {}  # answer key -> its first row, indexed when a task is first built

    def task(key: str) -> Task:
        if not first:
            for i, k in enumerate(keys):
                if k is not None:
                    first.setdefault(k, i)
        i = first[key]
        q, group, entry = asked[i][0], asked[i][1], entries[i]
        label = (
            f"question_id={q.question_id!r} (goal_id={group.goal_id!r}, condition={entry['condition']}, "
            f"ratio={entry['ratio']:g})"
        )
        return Task(key, ReaderInput(memories[entry["memory_key"]]["memory"], q.question), label)

    return keys, asked, Planned(list(dict.fromkeys(filter(None, keys))), task)


def _rows_of(answers: dict[str, Any], keys: list[str | None], by_answer: dict[str, list[int]]) -> list[int]:
    """The rows, in order, whose answer keys (`keys`) are among `answers`: every row with one when all the
    answers come at once (no windows: the usual case), else those indexed by `by_answer` (built on first use)."""
    if not by_answer and len(answers) == len(set(keys) - {None}):
        return [i for i, key in enumerate(keys) if key is not None]
    if not by_answer:
        for i, key in enumerate(keys):
            if key is not None:
                by_answer.setdefault(key, []).append(i)
    return sorted(i for key in answers for i in by_answer[key])


def verdict_tasks(keys: list[str | None], asked: list[Asked], judged: Method, reader: str | None = None) -> Follow:
    """The `follow` of the answer stage: given answers as they come in, turn their rows' answer keys in
    `keys` into verdict keys (None where the answer failed) and return the verdict tasks not asked for
    before, in row order (as judging after all reading would order them), each built from its first row
    when the cache does not hold it. `reader`, in a run of several readers, names whose answers a task
    judges in its label (and so in a failure's message)."""
    by_answer: dict[str, list[int]] = {}  # rows by answer key, indexed only when answers come in parts
    first: dict[str, tuple[int, str]] = {}  # verdict key -> its first row and answer
    known: dict[tuple[str, ...], str] = {}  # the same question answered alike in many rows: one key
    verdict_key = KeyTemplate(
        ("question", "answer", "references", "source"), judge=judged.name, revision=judged.revision
    )

    def task(key: str) -> Task:
        i, answer = first[key]
        q, group = asked[i][0], asked[i][1]
        item = JudgeInput(q.question, answer, q.references, group.context)
        whose = "" if reader is None else f", answer of reader {reader!r}"
        return Task(key, item, f"question_id={q.question_id!r} (goal_id={group.goal_id!r}{whose})")

    def follow(answers: dict[str, Any]) -> Planned:
        new: list[str] = []
        for i in _rows_of(answers, keys, by_answer):
            value = answers[keys[i]]  # type: ignore[index]
            if "error" in value:
                keys[i] = None
                continue
            _, _, question_hash, references_hash, source_hash = asked[i]
            answer = value["answer"]
            # the answer text itself finds a key derived before; it is hashed only for a new key
            seen = (question_hash, answer, references_hash, source_hash)
            key = known.get(seen)
            if key is None:
                key = known[seen] = verdict_key(question_hash, text_hash(answer), references_hash, source_hash)
            keys[i] = key
            if key not in first:
                first[key] = (i, answer)
                new.append(key)
        return Planned(new, task)

    return follow


def _rows(
    ledger: list[dict[str, Any]],
    memories: dict[str, dict[str, Any]],
    evidence: Sequence[Sequence[bool]],
    by_goal: dict[str, Group],
    outcome: Outcome,
    setting: Setting,
) -> list[dict[str, Any]]:
    """The answer rows, each built once with every field in its final place (column order as written).

    `outcome` holds each row's answer key (None: its memory failed) and verdict key (None: its answer
    failed), and the answer and verdict values by key."""
    answer_keys, verdict_keys, answers, verdicts = outcome
    rows: list[dict[str, Any]] = []
    i = 0
    for entry, flags in zip(ledger, evidence, strict=True):
        group = by_goal[entry["goal_id"]]
        memory_error = memories[entry["memory_key"]].get("error")
        comp, cond, ratio, ceiling = entry["compressor"], entry["condition"], entry["ratio"], entry["ceiling"]
        context_id, goal_id, shown = entry["context_id"], entry["goal_id"], entry["shown_goal_id"]
        language, memory_sha256 = group.language_tag, entry["memory_sha256"]
        for q, found in zip(group.questions, flags, strict=True):
            answer, correct, error = None, False, memory_error
            if answer_keys[i] is not None:
                answered, verdict_key = answers[answer_keys[i]], verdict_keys[i]
                if verdict_key is None:
                    error = answered["error"]
                else:
                    answer, verdict = answered["answer"], verdicts[verdict_key]
                    error = verdict.get("error")
                    correct = error is None and verdict["correct"]
            i += 1
            rows.append(
                {
                    "reader": setting[0],
                    "judge": setting[1],
                    "compressor": comp,
                    "condition": cond,
                    "ratio": ratio,
                    "ceiling": ceiling,
                    "context_id": context_id,
                    "goal_id": goal_id,
                    "shown_goal_id": shown,
                    "language": language,
                    "question_id": q.question_id,
                    "question": q.question,
                    "references": list(q.references),
                    "memory_sha256": memory_sha256,
                    "evidence": found,
                    "answer": answer,
                    "correct": correct,
                    "outcome": answer_outcome(correct if error is None else None, found),
                    "error": error,
                }
            )
    return rows
