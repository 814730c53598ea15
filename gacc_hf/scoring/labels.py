"""Human labels: a person's right/wrong per answer, read from a file, and each judge measured against them.

The labels file is JSON lines, one answer a line: `key` (the answer's key, `gacc_hf.keys.answer_key` of its
question id and text, so a label follows the same answer across cells, readers and runs, and no longer matches
an answer edited afterwards), `label` (`right` or `wrong`), and optionally `question_id` (for the person reading
the file) and `note` (why). A fault is refused in one line naming the file, the line and the field.

Against the labels, a judge's accuracy is the share of labelled answers it judged as the person did; its
false-right rate the share of the answers labelled wrong that it called right (it let a wrong answer through),
its false-wrong rate the share of those labelled right that it called wrong. Each has a goal-bootstrap CI as
the scores do. The scores under the human verdicts are a reference row: what the labelled answers score when a
person judges them, never a method's score.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gacc_hf.keys import answer_key
from gacc_hf.scoring.agreement import figure
from gacc_hf.scoring.scores import DEFAULT_BOOTSTRAP, resampled_ratios, score_answers
from gacc_hf.scoring.shares import per_goal

FIELDS = ("key", "question_id", "label", "note")
VERDICTS = {"right": True, "wrong": False}
_KEY = re.compile(r"[0-9a-f]{16}")


class LabelsError(ValueError):
    """A labels file that cannot be read: the message names the file, the line and the field."""


@dataclass(frozen=True)
class Label:
    """One person's verdict on one answer."""

    key: str
    right: bool
    question_id: str | None = None
    note: str | None = None


def read_labels(path: str | Path) -> dict[str, Label]:
    """The labels of a JSON-lines file by answer key; blank lines are skipped.

    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "labels.jsonl")
    >>> _ = open(f, "w").write('{"key": "01439fb8a7d0694b", "label": "wrong", "note": "12 days, not 14"}\\n')
    >>> read_labels(f)["01439fb8a7d0694b"].right
    False
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LabelsError(f"{path}: no such labels file") from None
    except UnicodeDecodeError as exc:
        raise LabelsError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    labels: dict[str, Label] = {}
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        label = _parse(line, f"{path}:{number}")
        if label.key in labels:
            raise LabelsError(
                f"{path}:{number}: field 'key': {label.key} is labelled already on line {lines[label.key]}"
            )
        labels[label.key], lines[label.key] = label, number
    return labels


def _parse(line: str, where: str) -> Label:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise LabelsError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(row, dict):
        raise LabelsError(f"{where}: a label is a JSON object, got {type(row).__name__}")
    for name in row:
        if name not in FIELDS:
            raise LabelsError(f"{where}: unknown field {name!r} (a label has {', '.join(FIELDS)})")
    for name in ("key", "label"):
        if name not in row:
            raise LabelsError(f"{where}: field {name!r} missing")
    for name in FIELDS:
        if name in row and not isinstance(row[name], str):
            raise LabelsError(f"{where}: field {name!r}: {json.dumps(row[name])} is not a string")
    if not _KEY.fullmatch(row["key"]):
        raise LabelsError(f"{where}: field 'key': {row['key']!r} is not an answer key (16 lowercase hex digits)")
    if row["label"] not in VERDICTS:
        raise LabelsError(f"{where}: field 'label': {row['label']!r} is not right or wrong")
    return Label(row["key"], VERDICTS[row["label"]], row.get("question_id"), row.get("note"))


def labelled_answers(
    answers: Sequence[Mapping[str, Any]], labels: Mapping[str, Label]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The answer rows a label matches, each with its `label` (True: right), and the keys no answer matches
    (labels of another run, or of answers edited since). Rows without an answer (failed calls) match none. A label
    whose `question_id` is not its answer's is refused (its key and its question no longer go together)."""
    matched, seen = [], set()
    for row in answers:
        if row.get("answer") is None:
            continue
        key = answer_key(str(row["question_id"]), str(row["answer"]))
        if key in labels:
            named = labels[key].question_id
            if named is not None and named != row["question_id"]:
                raise LabelsError(
                    f"label {key} names question {named!r}, but the answer with that key answers "
                    f"{row['question_id']!r}: the label's question_id was edited"
                )
            matched.append({**row, "key": key, "label": labels[key].right})
            seen.add(key)
    return matched, [k for k in labels if k not in seen]


def judge_accuracy(
    goal_ids: Sequence[str],
    human: Sequence[bool],
    verdicts: Mapping[str, Sequence[bool]],
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Each judge's accuracy, false-right and false-wrong rate against the human verdicts, with 95% CIs.

    One entry per labelled answer (aligned lists); a rate with no answer to count over (no answer labelled
    wrong, say) is None with the reason.

    >>> rows = judge_accuracy(["g", "g", "h", "h"], [True, False, False, False], {"j": [True, True, False, False]}, 0)
    >>> rows[0]["accuracy"], rows[0]["false_right"], rows[0]["false_wrong"]
    (0.75, 0.3333333333333333, 0.0)
    """
    truth = np.asarray(human, dtype=bool)
    out = []
    for judge, said in verdicts.items():
        called = np.asarray(said, dtype=bool)
        if len(called) != len(truth):
            raise ValueError(f"judge {judge!r} has {len(called)} verdicts for {len(truth)} labelled answers")
        n, (hit, false_right, wrongs, false_wrong, rights) = per_goal(
            goal_ids, [called == truth, called & ~truth, ~truth, ~called & truth, truth]
        )
        draws: list[Any] = [None, None, None]
        if n_boot > 0:
            with np.errstate(divide="ignore", invalid="ignore"):
                acc, fr, w, fw, r = resampled_ratios(
                    [(c, n.astype(float)) for c in (hit, false_right, wrongs, false_wrong, rights)], n_boot, seed
                )
                draws = [acc, fr / w, fw / r]
        row: dict[str, Any] = {"judge": judge, "n_labelled": len(truth), "n_right": int(truth.sum())}
        row.update(figure(float(hit.sum() / n.sum()), draws[0], None, "").as_dict("accuracy"))
        for name, count, base, what, d in (
            ("false_right", false_right, wrongs, "wrong", draws[1]),
            ("false_wrong", false_wrong, rights, "right", draws[2]),
        ):
            value = float(count.sum() / base.sum()) if base.sum() else None
            why = f"no answer is labelled {what}"
            row.update(figure(value, d, why, f"drew no answer labelled {what}").as_dict(name))
        out.append(row)
    return out


def human_scores(labelled: Sequence[Mapping[str, Any]], n_boot: int, seed: int) -> list[dict[str, Any]]:
    """Micro and Macro of each cell's labelled answers under the human verdicts, beside the run judge's Micro of
    the same answers: a reference, never a method's score (Macro over the labelled questions of each goal)."""
    human = score_answers([{**r, "correct": r["label"], "error": None} for r in labelled], n_boot, seed)
    judged = score_answers([dict(r) for r in labelled], 0, seed)
    out = []
    for h, j in zip(human, judged, strict=True):
        keep = ("micro", "macro", "micro_ci_low", "micro_ci_high", "macro_ci_low", "macro_ci_high")
        row = {k: h[k] for k in ("compressor", "condition", "ratio", "n_questions", "n_goals")}
        out.append({**row, **{f"human_{k}": h[k] for k in keep}, "judge_micro": j["micro"]})
    return out
