"""Answers and verdicts: every question read from its group's memory, every answer judged.

The reader gets `ReaderInput(memory, question)`, one question at a time (docs/protocol.md §5); the items of one
memory are planned next to each other so that a prefix-caching reader can reuse the memory's prefill.
The judge gets `JudgeInput(question, answer, references, source)`: gold and the source enter only here
(docs/protocol.md §6). Answer keys bind the memory, question and reader; verdict keys bind question, answer,
references, source and judge, so equal work is done once across conditions, ratios and runs. When the
reader and the judge both have windows (served methods, `gacc_hf.run.rolling`), a question's verdict request
starts as soon as its answer is in; rows and cache end the same as when judging follows all reading.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import Any

from gacc_hf.data.schema import Group, Question
from gacc_hf.protocol import JudgeInput, ReaderInput
from gacc_hf.run.cache import text_hash
from gacc_hf.run.calls import Executor, Method, Stage, Task, check_answer, check_bool
from gacc_hf.run.key_template import KeyTemplate

_ANSWER_ID_COLUMNS = ("compressor", "condition", "ratio", "ceiling", "context_id", "goal_id", "shown_goal_id")


@functools.lru_cache(maxsize=1 << 16)
def _references_hash(references: tuple[str, ...]) -> str:
    return text_hash(json.dumps(list(references), ensure_ascii=False))


# A question, its group, and the content hashes of the question and its references, which enter its keys.
_Asked = tuple[Question, Group, str, str]


def _questions(group: Group) -> list[tuple[Question, str, str]]:
    return [(q, text_hash(q.question), _references_hash(q.references)) for q in group.questions]


def read_and_judge(
    groups: list[Group],
    ledger: list[dict[str, Any]],
    memories: dict[str, dict[str, Any]],
    evidence: Sequence[Sequence[bool]],
    read: Method,
    judged: Method,
    ex: Executor,
) -> list[dict[str, Any]]:
    """One row per (ledger row, question): answer, verdict, evidence and the texts they came from.

    `evidence` holds each ledger row's per-question evidence flags (`fill_ledger`'s)."""
    by_goal = {g.goal_id: g for g in groups}
    rows: list[dict[str, Any]] = []
    keys: list[str | None] = []  # per row: its answer key, then its verdict key (None: nothing to ask)
    asked: list[_Asked] = []  # per row: what its verdict request is built from
    questions = {g.goal_id: _questions(g) for g in groups}
    read_tasks: dict[str, Task] = {}
    answer_key = KeyTemplate(("memory", "question"), reader=read.name, revision=read.revision)
    for entry, flags in zip(ledger, evidence, strict=True):
        group = by_goal[entry["goal_id"]]
        mem = memories[entry["memory_key"]]
        base = {k: entry[k] for k in _ANSWER_ID_COLUMNS}
        language, memory_sha256, error = group.language_tag, entry["memory_sha256"], mem.get("error")
        for (q, question_hash, references_hash), found in zip(questions[group.goal_id], flags, strict=True):
            rows.append(
                {
                    **base,
                    "language": language,
                    "question_id": q.question_id,
                    "question": q.question,
                    "references": list(q.references),
                    "memory_sha256": memory_sha256,
                    "evidence": found,
                    "answer": None,
                    "correct": False,
                    "error": error,
                }
            )
            asked.append((q, group, question_hash, references_hash))
            if "error" in mem:
                keys.append(None)
                continue
            key = answer_key(memory_sha256, question_hash)
            keys.append(key)
            if key not in read_tasks:
                label = (
                    f"question_id={q.question_id!r} (goal_id={group.goal_id!r}, condition={entry['condition']}, "
                    f"ratio={entry['ratio']:g})"
                )
                read_tasks[key] = Task(key, ReaderInput(mem["memory"], q.question), label)
    follow = _verdict_tasks(rows, keys, asked, judged)
    answer_stage = Stage(read, "answer", lambda _item, out: {"answer": check_answer(out)})
    verdict_stage = Stage(judged, "verdict", lambda _item, out: {"correct": check_bool(out)})
    _, verdicts = ex.run_chain(answer_stage, verdict_stage, list(read_tasks.values()), follow)
    for row, key in zip(rows, keys, strict=True):
        if key is None:
            continue
        value = verdicts[key]
        if "error" in value:
            row["error"] = value["error"]
        else:
            row["correct"] = value["correct"]
    return rows


def _verdict_tasks(
    rows: list[dict[str, Any]], keys: list[str | None], asked: list[_Asked], judged: Method
) -> Callable[[dict[str, Any]], list[Task]]:
    """The `follow` of the answer stage: given answers as they come in, fill their rows, turn their answer
    keys into verdict keys and return the verdict tasks not asked for before, in row order (as judging
    after all reading would order them)."""
    by_answer: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        if key is not None:
            by_answer.setdefault(key, []).append(i)
    judge_tasks: dict[str, Task] = {}
    known: dict[tuple[str, ...], str] = {}  # the same question answered alike in many rows: one key
    verdict_key = KeyTemplate(
        ("question", "answer", "references", "source"), judge=judged.name, revision=judged.revision
    )

    def follow(answers: dict[str, Any]) -> list[Task]:
        new: list[Task] = []
        for i in sorted(i for key in answers for i in by_answer[key]):
            row = rows[i]
            value = answers[keys[i]]  # type: ignore[index]
            if "error" in value:
                row["error"], keys[i] = value["error"], None
                continue
            q, group, question_hash, references_hash = asked[i]
            answer = row["answer"] = value["answer"]
            parts = (question_hash, text_hash(answer), references_hash, text_hash(group.context))
            key = keys[i] = known.get(parts) or known.setdefault(parts, verdict_key(*parts))
            if key not in judge_tasks:
                item = JudgeInput(q.question, answer, q.references, group.context)
                judge_tasks[key] = Task(key, item, f"question_id={q.question_id!r} (goal_id={group.goal_id!r})")
                new.append(judge_tasks[key])
        return new

    return follow
