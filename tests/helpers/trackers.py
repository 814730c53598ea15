"""Read back what a run logged to each tracker, by the tracker's own reader: Trackio's local store (in a child:
Trackio reads its folder when imported), TensorBoard's `EventAccumulator`, and a W&B offline run folder (its
`run-*.wandb` file is a LevelDB-style log of protobuf records, parsed here with W&B's own message classes)."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

from tests.helpers.child import run_child

_TRACKIO = """
import json, sys
from trackio.sqlite_storage import SQLiteStorage
project, run = sys.argv[1:3]
logs = SQLiteStorage.get_logs(project, run)
print(json.dumps({"runs": SQLiteStorage.get_runs(project), "logs": logs,
                  "config": SQLiteStorage.get_run_config(project, run),
                  "traces": SQLiteStorage.get_traces(project, run)}, default=str))
"""


def trackio_run(store: Path, run: str, project: str = "gacc-hf") -> dict[str, Any]:
    """The runs of `project`, and `run`'s logs, config and traces, read from the store at `store`."""
    env = {**os.environ, "TRACKIO_DIR": str(store)}
    return run_child(_TRACKIO, store.parent, env, project, run)


def tensorboard_run(folder: Path) -> tuple[dict[str, float], dict[str, str]]:
    """(scalars at step 0 by tag, texts by tag) of the event files in `folder`."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(folder), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    scalars = {tag: acc.Scalars(tag)[-1].value for tag in acc.Tags()["scalars"]}
    texts = {
        tag.removesuffix("/text_summary"): acc.Tensors(tag)[-1].tensor_proto.string_val[0].decode()
        for tag in acc.Tags()["tensors"]
    }
    return scalars, texts


def _wandb_chunks(path: Path) -> list[bytes]:
    """The records of a `.wandb` file: a 7-byte header (`:W&B`, magic, version), then 32 KiB blocks of
    records each with a 7-byte header (crc32, length, type: 1 full, 2 first, 3 middle, 4 last)."""
    data, block = path.read_bytes(), 32768
    assert data[:4] == b":W&B", path
    pos, parts, out = 7, b"", []
    while pos + 7 <= len(data):
        left = block - pos % block
        if left < 7:
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        if length == 0 and kind == 0:
            pos += left
            continue
        parts += data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):
            out.append(parts)
            parts = b""
    return out


def wandb_run(run_folder: Path) -> dict[str, Any]:
    """The run's name, project, config (JSON values), history at each step and its table files by key."""
    from wandb.proto import wandb_internal_pb2 as pb

    out: dict[str, Any] = {"config": {}, "history": {}}
    (path,) = run_folder.glob("run-*.wandb")
    for data in _wandb_chunks(path):
        record = pb.Record()
        record.ParseFromString(data)
        kind = record.WhichOneof("record_type")
        if kind == "run":
            out["name"], out["project"] = record.run.display_name, record.run.project
            out["config"].update({i.key: json.loads(i.value_json) for i in record.run.config.update})
        elif kind == "history":
            for item in record.history.item:
                out["history"]["/".join(item.nested_key) or item.key] = json.loads(item.value_json)
    out["tables"] = {}
    for key, value in out["history"].items():
        if key.endswith("/path") and isinstance(value, str) and value.endswith(".table.json"):
            out["tables"][key.removesuffix("/path")] = json.loads((run_folder / "files" / value).read_text())
    return out
