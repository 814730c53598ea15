"""Folders written by `Dataset.save_to_disk` / `DatasetDict.save_to_disk`: recognised, read, and a damaged one named.

A copy cut short (a full disk, an interrupted transfer) leaves an Arrow file that `datasets` fails on with
pyarrow's own words, which name neither the file nor what to do; the message here names both.
"""

from __future__ import annotations

from pathlib import Path

import datasets

from gacc_hf.data.schema import DataSourceError


def is_saved_dataset(folder: str | Path) -> bool:
    """Whether `folder` was written by `save_to_disk` (a Dataset or a DatasetDict)."""
    folder = Path(folder)
    return (folder / "dataset_dict.json").is_file() or (folder / "state.json").is_file()


def unreadable_arrow(folder: Path) -> Path | None:
    """The first Arrow file below `folder` that cannot be read to its end (None when all can)."""
    import pyarrow as pa

    for path in sorted(folder.rglob("*.arrow")):
        try:
            with pa.memory_map(str(path)) as source:
                pa.ipc.open_stream(source).read_all()
        except (OSError, pa.ArrowException):
            return path
    return None


def load_saved(folder: str | Path) -> datasets.DatasetDict:
    """The splits of a save_to_disk folder (a Dataset's rows form the `test` split).

    Raises DataSourceError naming the damaged file and the remedy when the folder cannot be read.
    """
    import pyarrow as pa

    try:
        loaded = datasets.load_from_disk(str(folder))
    except (OSError, ValueError, KeyError, pa.ArrowException) as exc:
        bad = unreadable_arrow(Path(folder))
        what = f"{bad}: a truncated or damaged Arrow file" if bad else f"{folder}: an unreadable save_to_disk folder"
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise DataSourceError(
            f"{what} ({reason}); write the folder again with save_to_disk, or restore it from a good copy"
        ) from exc
    return loaded if isinstance(loaded, datasets.DatasetDict) else datasets.DatasetDict({"test": loaded})
