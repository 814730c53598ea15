"""What a run of several judges or settings says about its judging: agreement, survival, human labels.

A run (or a rescored folder, `gacc_hf.run.rescore`) whose answers were judged by two or more judges gets, per
reader, the judges' agreement over those same answers (`gacc_hf.scoring.agreement`); a run of two or more
(reader, judge) settings gets the survival of its ranking across them (`gacc_hf.scoring.survival`); and a
folder rescored with a labels file gets each judge against a person's verdicts, with the scores under the
human verdicts as a reference (`gacc_hf.scoring.labels`: a reference row, never a method's score). Each is
a section of `results.json` and `report.md`; a figure that cannot be worked out says why instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gacc_hf.scoring.agreement import format_agreement, judge_agreement, verdict_table
from gacc_hf.scoring.labels import Label, LabelsError, human_scores, judge_accuracy, labelled_answers
from gacc_hf.scoring.settings import Setting, setting_label, setting_parts
from gacc_hf.scoring.survival import SurvivalError, format_survival, survival

__all__ = [
    "accuracy_rows",
    "format_judging",
    "judging_figures",
    "label_figures",
    "matched_labels",
    "reference_rows",
]

SHOWN_UNMATCHED = 3  # label keys named when labels match no answer


def _by_setting(answers: Sequence[Mapping[str, Any]]) -> dict[Setting, list[Mapping[str, Any]]]:
    return {setting: rows for setting, rows in setting_parts(answers).items() if setting is not None}


def _agreement(parts: dict[Setting, list[Mapping[str, Any]]], n_boot: int, seed: int) -> list[dict[str, Any]]:
    """Per reader with two or more judges, those judges' agreement over its answers (`judge_agreement`, with
    `reader` and `n_left_out`: answers left out because a call failed); `undefined` says why none exists."""
    readers: dict[str, dict[str, list[Mapping[str, Any]]]] = {}
    for (reader, judge), rows in parts.items():
        readers.setdefault(reader, {})[judge] = rows
    out = []
    for reader, judged in readers.items():
        if len(judged) < 2:
            continue
        table, left_out = verdict_table(judged)
        if not table["goal_ids"]:
            failed = {"undefined": "every answer failed in one judge or another", "n_left_out": left_out}
            out.append({"reader": reader, "judges": list(judged), **failed})
            continue
        measured = judge_agreement(table["goal_ids"], table["verdicts"], table["languages"], n_boot, seed)
        out.append({"reader": reader, **measured, "n_left_out": left_out})
    return out


def _survival(parts: dict[Setting, list[Mapping[str, Any]]], n_boot: int, seed: int) -> dict[str, Any]:
    """The survival of the ranking across two or more (reader, judge) settings: `settings` (their names) and
    `sections` (`survival`), or `undefined` saying why there is none."""
    named = {setting_label(s): rows for s, rows in parts.items()}
    try:
        return {"settings": list(named), "sections": survival(named, n_boot, seed)}
    except SurvivalError as exc:
        return {"settings": list(named), "undefined": str(exc)}


def judging_figures(answers: Sequence[Mapping[str, Any]], n_boot: int, seed: int) -> dict[str, Any]:
    """`agreement` and `survival` of a run's answer rows, each only where the run has what it needs."""
    parts = _by_setting(answers)
    if len(parts) < 2:  # one setting: one judge a reader, one ranking
        return {}
    agreement = _agreement(parts, n_boot, seed)
    return {**({"agreement": agreement} if agreement else {}), "survival": _survival(parts, n_boot, seed)}


def matched_labels(
    labels: Mapping[str, Label], answers: Sequence[Mapping[str, Any]], file: str
) -> list[dict[str, Any]]:
    """The answer rows the labels match (`labelled_answers`); LabelsError, naming the first few keys, when a
    label matches no answer of the run (a labels file of another run, or answers edited since)."""
    rows, unmatched = labelled_answers(answers, labels)
    if unmatched:
        shown = ", ".join(unmatched[:SHOWN_UNMATCHED]) + (", …" if len(unmatched) > SHOWN_UNMATCHED else "")
        raise LabelsError(f"{file}: {len(unmatched)} label(s) match no answer of the run: {shown}")
    return rows


def label_figures(
    labels: Mapping[str, Label], answers: Sequence[Mapping[str, Any]], file: str, n_boot: int, seed: int
) -> dict[str, Any]:
    """Each judge against the labels per reader (`judge_accuracy` rows with `reader`: each labelled answer
    once, those a judge's call failed on left out), and each setting's cells under the human verdicts
    (`human_scores` rows with `reader` and `judge`: a reference, never a method)."""
    rows = matched_labels(labels, answers, file)
    accuracy, reference = [], []
    by_reader: dict[str, dict[str, dict[str, Mapping[str, Any]]]] = {}
    for (reader, judge), part in _by_setting(rows).items():
        by_reader.setdefault(reader, {})[judge] = {r["key"]: r for r in part}
        reference += [{"reader": reader, "judge": judge, **r} for r in human_scores(part, n_boot, seed)]
    for reader, judged in by_reader.items():
        keys = [k for k in next(iter(judged.values())) if not any(j[k].get("error") for j in judged.values())]
        if not keys:
            continue
        first = next(iter(judged.values()))
        goals, human = [str(first[k]["goal_id"]) for k in keys], [bool(first[k]["label"]) for k in keys]
        verdicts = {judge: [bool(j[k]["correct"]) for k in keys] for judge, j in judged.items()}
        accuracy += [{"reader": reader, **r} for r in judge_accuracy(goals, human, verdicts, n_boot, seed)]
    n_right = sum(bool(r["label"]) for r in {r["key"]: r for r in rows}.values())
    n_keys = len({r["key"] for r in rows})
    return {"file": file, "n_labels": n_keys, "n_right": n_right, "accuracy": accuracy, "human_reference": reference}


def _ci(row: Mapping[str, Any], name: str) -> str:
    value = row.get(name)
    if value is None:
        return f"— ({row.get(f'{name}_undefined') or 'undefined'})"
    low, high = row.get(f"{name}_ci_low"), row.get(f"{name}_ci_high")
    return f"{value:.3f}" + ("" if low is None else f" [{low:.3f}, {high:.3f}]")


def format_labels(section: Mapping[str, Any]) -> str:
    """The labels section as Markdown: each judge against the labels, then the human reference rows."""
    lines = [
        "## Judges against human labels",
        "",
        f"{section['n_labels']} labelled answers ({section['n_right']} right) from `{section['file']}`; "
        "95% CIs, goal bootstrap.",
        "",
        "| reader | judge | accuracy | false-right | false-wrong |",
        "|---|---|---|---|---|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in accuracy_rows(section)]
    lines += [
        "",
        "Under the human verdicts (a reference on the labelled answers only, not a method: never published):",
        "",
        "| reader | judge | compressor | condition | ratio | labelled | human Micro | judge Micro |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in reference_rows(section)]
    return "\n".join(lines) + "\n"


def accuracy_rows(section: Mapping[str, Any]) -> list[list[str]]:
    """Each judge against the labels as [reader, judge, accuracy, false-right, false-wrong], CIs included."""
    return [
        [r["reader"], r["judge"], *(_ci(r, k) for k in ("accuracy", "false_right", "false_wrong"))]
        for r in section["accuracy"]
    ]


def reference_rows(section: Mapping[str, Any]) -> list[list[str]]:
    """The human reference rows as [reader, judge, compressor, condition, ratio, labelled, human Micro, judge Micro]."""
    rows = []
    for r in section["human_reference"]:
        human = _ci({"micro": r["human_micro"], "micro_ci_low": r["human_micro_ci_low"],
                     "micro_ci_high": r["human_micro_ci_high"]}, "micro")  # fmt: skip
        rows.append([r["reader"], r["judge"], r["compressor"], r["condition"], f"{r['ratio']:g}",
                     str(r["n_questions"]), human, f"{r['judge_micro']:.3f}"])  # fmt: skip
    return rows


def format_judging(payload: Mapping[str, Any], plot: str | None = None) -> str:
    """The judging sections of a results document as Markdown ("" when it has none); `plot`, the file name
    of the agreement plot, is shown after the agreement tables."""
    parts = []
    for part in payload.get("agreement") or []:
        if part.get("undefined"):
            parts.append(f"## Judge agreement, reader {part['reader']}\n\nnone: {part['undefined']}\n")
            continue
        text = format_agreement(part, part.get("n_left_out", 0))
        parts.append(text.replace("## Judge agreement", f"## Judge agreement, reader {part['reader']}", 1))
    if plot is not None and parts:
        parts.append(f"![agreement]({plot})\n")
    survived = payload.get("survival")
    if survived is not None:
        if survived.get("undefined"):
            parts.append(f"## Do conclusions survive?\n\nno survival section: {survived['undefined']}\n")
        else:
            parts.append(format_survival(survived["sections"]))
    if payload.get("labels"):
        parts.append(format_labels(payload["labels"]))
    return "\n".join(parts)
