"""What the stand-in server (`gacc serve-test`, `gacc_hf.methods.stand_in`) says: its role read from the shape
of the `openai:` methods' prompts, then an answer made without a model, deterministic in the request.

- `echo`: the compressor keeps the document's first words, the reader repeats the question with a digest of
  its memory (answers from different memories differ), the judge says yes, anything else gets its last
  message back.
- `fixed`: the same text for every request (`yes` by default).
- `content`: what a small model might say: the compressor keeps the goal's `field: value` lines and other
  lines drawn at random within about the stated budget, the reader answers the asked field from its memory
  ("unknown" / "不知道" where the memory lacks it), the judge says yes when the answer holds a reference.
  Made for the `field: value` lines of `synthetic` data, in English and Chinese.
"""

from __future__ import annotations

import hashlib
import random
import re
from typing import Any

REPLIES = ("echo", "fixed", "content")

_FIELD = re.compile(r"^([^:：\n]{1,80}?)\s*[:：]\s*(.+?)\s*$", re.MULTILINE)
_QUESTION = re.compile(r"What is the (.+)\?|(.+)是什么？")
_ANSWERS = {"en": ("{v}", "{v}.", "The {k} is {v}.", "It is {v}."), "zh": ("{v}", "{v}。", "{k}是{v}。", "是{v}。")}


def role_of(user: str) -> str:
    """`compressor`, `reader` or `judge` from the shape of the user message the `openai:` methods send; else
    `other` (a request of one's own)."""
    if user.startswith("Goal: ") and "\n\nDocument:\n" in user:
        return "compressor"
    if user.startswith("Memory:\n") and "\n\nQuestion: " in user:
        return "reader"
    if user.startswith("Source:\n") and "\nAnswer: " in user:
        return "judge"
    return "other"


def _seeded(text: str) -> random.Random:
    return random.Random(hashlib.sha256(text.encode()).digest())


def echo_reply(role: str, user: str, compressor_words: int) -> str:
    """The `echo` answer (see the module docstring)."""
    if role == "compressor":
        return " ".join(user.split("\n\nDocument:\n", 1)[1].split()[:compressor_words])
    if role == "reader":
        memory, question = user.removeprefix("Memory:\n").rsplit("\n\nQuestion: ", 1)
        return f"{question} #{hashlib.sha256(memory.encode()).hexdigest()[:6]}"
    return "yes" if role == "judge" else user


def compress_reply(user: str, model: str) -> str:
    """The goal's field lines, then other lines drawn at random (each model its own), in source order, within
    about L tokens."""
    head, _, document = user.partition("\n\nDocument:\n")
    goal = head.partition("\n")[0].removeprefix("Goal: ").lower()
    stated = re.search(r"at most (\d+) tokens", head)
    chars = int(stated.group(1) if stated else 0) * (4 if document[:200].isascii() else 1)  # about a token's
    lines = document.split("\n")
    wanted = [i for i, ln in enumerate(lines) if (m := _FIELD.match(ln)) and m.group(1).lower() in goal]
    chosen = set(wanted)
    rest = [i for i in range(len(lines)) if i not in chosen]
    kept, used = set(), 0
    for i in wanted + _seeded(model + user).sample(rest, len(rest)):
        if used >= chars:
            break
        kept.add(i)
        used += len(lines[i]) + 1
    return "\n".join(lines[i] for i in sorted(kept))


def read_reply(user: str) -> str:
    """The value of the asked field's line in the memory, phrased one of a few ways; else "unknown"."""
    memory, _, question = user.removeprefix("Memory:\n").rpartition("\n\nQuestion: ")
    asked = _QUESTION.fullmatch(question.strip())
    key = (asked.group(1) or asked.group(2)) if asked else ""
    language = "en" if asked and asked.group(1) else "zh"
    for k, v in _FIELD.findall(memory):
        if k.strip().lower() == key.lower():
            return _seeded(user).choice(_ANSWERS[language]).format(k=key, v=v)
    return "unknown" if language == "en" else "不知道"


def judge_reply(user: str) -> str:
    """yes when the answer holds one of the references (case-folded), else no."""
    references = re.search(r"\nReferences: (.*)\nAnswer: ", user)
    answer = user.rpartition("\nAnswer: ")[2].rpartition("\n\nIs the answer correct?")[0].casefold()
    found = references.group(1).split(" | ") if references else []
    return "yes" if any(r.casefold() in answer for r in found if r) else "no"


def reply(body: dict[str, Any], replies: str, answer: str, compressor_words: int) -> tuple[str, str]:
    """The role of a chat request and the stand-in's answer to it."""
    user = body["messages"][-1]["content"]
    role = role_of(user)
    if replies == "fixed":
        return role, answer
    if replies == "echo" or role == "other":
        return role, echo_reply(role, user, compressor_words)
    if role == "compressor":
        return role, compress_reply(user, str(body.get("model", "")))
    return role, read_reply(user) if role == "reader" else judge_reply(user)
