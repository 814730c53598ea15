"""The results page's "Judges and conclusions" part: the `agreement`, `survival` and `labels` sections of
`results.json` as tables, in the words and figures of `report.md` (the same row builders of `gacc_hf.scoring`).

Each block is {"title", "intro", "head", "rows", "after"}: a heading, a line before the table, the table (none
where a section says why it has no figures) and a line after it. Every figure is text: an undefined one shows
its reason, never NaN; the page sets it all as escaped text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gacc_hf.scoring.agreement import pair_rows as agreement_rows
from gacc_hf.scoring.agreement import shown
from gacc_hf.scoring.judging import accuracy_rows, reference_rows
from gacc_hf.scoring.survival import pair_rows, pairs_head, ranking_rows, tau_rows

Block = dict[str, Any]


def _block(title: str, intro: str = "", head: list[str] | None = None, rows: Any = (), after: str = "") -> Block:
    return {"title": title, "intro": intro, "head": head or [], "rows": list(rows), "after": after}


def judging_blocks(payload: Mapping[str, Any]) -> list[Block]:
    """The part's blocks, agreement then survival then labels; [] for a run without these sections."""
    return _agreement(payload.get("agreement") or []) + _survival(payload.get("survival")) + _labels(payload)


def _agreement(parts: list[Mapping[str, Any]]) -> list[Block]:
    blocks = []
    for part in parts:
        title = f"Judge agreement, reader {part['reader']}"
        if part.get("undefined"):
            blocks.append(_block(title, f"none: {part['undefined']}"))
            continue
        intro = f"{part['n_answers']} answers judged by every judge"
        if part.get("n_left_out"):
            intro += f" ({part['n_left_out']} left out: a call failed)"
        for i, sub in enumerate([part, *part["by_language"]]):
            suffix = "" if i == 0 else f" ({sub['language']})"
            head = ["judge A", "judge B", f"agreement{suffix} [95% CI]", "Cohen's κ [95% CI]"]
            after = f"Krippendorff's α over all judges{suffix}: {shown(sub['all'], 'alpha')}"
            blocks.append(_block(title + suffix, intro if i == 0 else "", head, agreement_rows(sub), after))
    return blocks


def _survival(survived: Mapping[str, Any] | None) -> list[Block]:
    if survived is None:
        return []
    title = "Do conclusions survive?"
    if survived.get("undefined"):
        return [_block(title, f"no survival section: {survived['undefined']}")]
    blocks = []
    for sec in survived["sections"]:
        about = f"{sec['condition']}, ratio {sec['ratio']:g} ({sec['n_questions']} questions, {sec['n_goals']} goals)"
        blocks += [
            _block(f"{title} {about}", "Rankings by Micro (best first):", ["setting", "ranking"], ranking_rows(sec)),
            _block(
                f"Kendall's τ-b between rankings, {about}",
                "",
                ["setting A", "setting B", "τ-b [95% CI]"],
                tau_rows(sec),
            ),
            _block(f"B − A > 0 in k of m settings, {about}", "", pairs_head(sec), pair_rows(sec)),
        ]
    return blocks


def _labels(payload: Mapping[str, Any]) -> list[Block]:
    section = payload.get("labels")
    if not section:
        return []
    intro = (
        f"{section['n_labels']} labelled answers ({section['n_right']} right) from {section['file']}; "
        "95% CIs, goal bootstrap."
    )
    head = ["reader", "judge", "accuracy", "false-right", "false-wrong"]
    reference = ["reader", "judge", "compressor", "condition", "ratio", "labelled", "human Micro", "judge Micro"]
    return [
        _block("Judges against human labels", intro, head, accuracy_rows(section)),
        _block(
            "Under the human verdicts",
            "A reference on the labelled answers only, not a method: never published.",
            reference,
            reference_rows(section),
        ),
    ]
