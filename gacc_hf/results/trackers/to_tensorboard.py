"""A run to TensorBoard: event files in `<log dir>/tensorboard/<run name>/`, written with PyTorch's writer.

Each scalar at step 0 under its `values` name; the config as JSON text (`config`); each table as a
Markdown table (`tables/<name>`); the per-sample traces as Markdown too, one text per cell of the run
(`traces/<compressor>/<condition>/<ratio>`), so a page stays readable.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gacc_hf.results.trackers.values import Logged, row_name

PACKAGE = "tensorboard"


def run_folder(log_dir: Path, name: str) -> Path:
    return log_dir / "tensorboard" / name


def taken(log_dir: Path, name: str) -> bool:
    return run_folder(log_dir, name).exists()


def _md(value: Any) -> str:
    text = "" if value is None else str(value)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "<br>")


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(_md(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_md(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def log(logged: Logged, log_dir: Path, name: str, step: int = 0) -> Path:
    """Write the run's events; returns the run's folder."""
    from torch.utils.tensorboard import SummaryWriter

    folder = run_folder(log_dir, name)
    writer = SummaryWriter(log_dir=str(folder))
    try:
        for tag, value in logged.scalars.items():
            writer.add_scalar(tag, value, step)
        writer.add_text("config", "```json\n" + json.dumps(logged.config, indent=1, ensure_ascii=False) + "\n```", step)
        for table_name, (columns, rows) in logged.tables.items():
            writer.add_text(f"tables/{table_name}", markdown_table(columns, rows), step)
        by_cell: dict[str, list[list[Any]]] = {}
        for trace in logged.traces:
            meta, messages = trace["metadata"], trace["messages"]
            by_cell.setdefault(row_name(meta), []).append(
                [meta.get("question_id"), messages[1]["content"], messages[2]["content"], meta.get("outcome")]
            )
        for cell_name, rows in by_cell.items():
            writer.add_text(
                f"traces/{cell_name}", markdown_table(["question_id", "question", "answer", "outcome"], rows), step
            )
    finally:
        writer.close()
    return folder
