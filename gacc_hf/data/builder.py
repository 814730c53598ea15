"""The GACC-Bench `datasets` builder, used directly (datasets 5 runs no loading scripts).

`GaccBench` turns JSONL, Parquet, CSV or TSV files in the schema into a cached Arrow `DatasetDict` in one of
two configs: `public` (no `gold` column) and `judge` (all columns), with the splits the files define. Its
cache fingerprint is a hash of the files' bytes and of this code, so an edited file is never served
stale from the cache (datasets keys its cache on the version alone unless `hash=` is given). Each file is
read once (`gacc_hf.data.jsonl.read_file`): the check, the fingerprint and the rows built all come from
that one read.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import datasets
from datasets.data_files import DataFilesDict, sanitize_patterns

from gacc_hf.data.card import CONFIGS, data_path, render_card
from gacc_hf.data.jsonl import FileRows, find_file_problems, read_file
from gacc_hf.data.language import row_language
from gacc_hf.data.schema import Config, DataValidationError, declares_language, features
from gacc_hf.data.stats import data_stats
from gacc_hf.keys import make_key

DATASET_NAME = "gacc_bench"
_CODE = tuple(Path(__file__).with_name(name) for name in ("builder.py", "schema.py", "jsonl.py", "table.py"))

DataFiles = Mapping[str, Sequence[str | Path]]
ReadFiles = Mapping[str, Sequence[FileRows]]


def _file_sha256(path: str | Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def read_files(data_files: DataFiles) -> dict[str, list[FileRows]]:
    """Every file of every split, read once."""
    return {split: [read_file(p) for p in paths] for split, paths in data_files.items()}


def _read(data_files: DataFiles | ReadFiles) -> ReadFiles:
    values = [f for files in data_files.values() for f in files]
    return data_files if all(isinstance(f, FileRows) for f in values) else read_files(data_files)  # type: ignore[return-value, arg-type]


def data_hash(data_files: DataFiles | ReadFiles) -> str:
    """Fingerprint of the data alone: every file's bytes, by split and order."""
    read = _read(data_files)
    return make_key(files={split: [f.sha256 for f in files] for split, files in sorted(read.items())})


def content_hash(data_files: DataFiles | ReadFiles) -> str:
    """The cache fingerprint: the data and the code that reads it (an edit to either rebuilds)."""
    code = [_file_sha256(p) for p in _CODE]
    return make_key(data=data_hash(data_files), code=code, version=str(GaccBench.VERSION))[:32]


def check_data_files(data_files: DataFiles | ReadFiles, config: Config) -> None:
    """Raise DataValidationError naming every file, row and field at fault (all splits as one dataset)."""
    read = _read(data_files)
    problems = find_file_problems([f for files in read.values() for f in files], require_gold=config == "judge")
    if problems:
        raise DataValidationError(problems)


class GaccBench(datasets.GeneratorBasedBuilder):
    """GACC-Bench groups from local JSONL, Parquet, CSV or TSV files: `GaccBench(config_name=..., data_files=...)`.

    `data_files` maps split names to files (or takes one file or a list, as the `test` split). Without an
    explicit `hash=`, the content hash of the files is used, so edited data is rebuilt, not reused. The files
    are read once, here (`read=` passes files already read: `build` does); the rows built are those bytes'.
    """

    VERSION = datasets.Version("1.0.0")
    BUILDER_CONFIGS = [  # noqa: RUF012 (datasets reads this class attribute)
        datasets.BuilderConfig(name="public", version=VERSION, description="All columns but the judge-only gold."),
        datasets.BuilderConfig(name="judge", version=VERSION, description="All columns, gold included."),
    ]
    DEFAULT_CONFIG_NAME = "public"

    def __init__(self, *args: Any, read: ReadFiles | None = None, **kwargs: Any) -> None:
        files = kwargs.get("data_files")
        self._files: ReadFiles = {}
        if files is not None:
            patterns = {"test": files} if isinstance(files, str | os.PathLike | list) else files
            resolved = DataFilesDict.from_patterns(
                sanitize_patterns({k: [str(p) for p in _as_list(v)] for k, v in patterns.items()}),
                base_path=kwargs.get("base_path") or os.getcwd(),
            )
            kwargs["data_files"] = resolved
            self._files = read if read is not None else read_files(resolved)
            kwargs.setdefault("hash", content_hash(self._files))
        kwargs.setdefault("dataset_name", DATASET_NAME)
        super().__init__(*args, **kwargs)

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(
            description="GACC-Bench: goal-conditioned context compression with the follow-up questions held out.",
            features=features(self.config.name, self._declares_language()),
            license="apache-2.0",
        )

    def _declares_language(self) -> bool:
        """Whether a row of the files declares its language."""
        return any(declares_language(f.rows) for files in self._files.values() for f in files)

    def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
        if not self.config.data_files:
            raise ValueError("GaccBench needs data_files: {split: [data files in the GACC schema]}")
        check_data_files(self._files, self.config.name)  # direct use fails clearly, not in a cast
        return [
            datasets.SplitGenerator(name=split, gen_kwargs={"files": list(files)})
            for split, files in self._files.items()
        ]

    def _generate_examples(self, files: list[FileRows]) -> Iterator[tuple[str, dict[str, Any]]]:
        columns = list(self.info.features)
        for f, read in enumerate(files):
            for i, row in enumerate(read.rows):
                yield f"{f}-{i}", {c: row.get(c) for c in columns}  # an optional column may be absent


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def build(
    data_files: DataFiles | ReadFiles, config: Config = "judge", cache_dir: str | Path | None = None
) -> datasets.DatasetDict:
    """Validate the files (paths, or files already read), then build (or reuse, if the content is unchanged)
    their cached DatasetDict, from the one read that was validated.

    Validation comes first so that bad data writes nothing, not even a cache folder.
    """
    if config not in ("public", "judge"):
        raise ValueError(f"config must be 'public' or 'judge', got {config!r}")
    read = _read(data_files)
    check_data_files(read, config)
    builder = GaccBench(
        config_name=config,
        data_files={split: [f.path for f in files] for split, files in read.items()},
        cache_dir=None if cache_dir is None else str(cache_dir),
        read=read,
    )
    builder.download_and_prepare()
    return builder.as_dataset()  # type: ignore[return-value]


def file_languages(data_files: DataFiles | ReadFiles) -> list[str]:
    """The languages of the files' rows (declared, else detected), in first-seen order."""
    rows = (row for files in _read(data_files).values() for f in files for row in f.rows)
    return list(dict.fromkeys(row_language(row)[0] for row in rows))


def write_hub_folder(
    data_files: DataFiles | ReadFiles, out: str | Path, *, repo_id: str | None = None, **card: str
) -> list[Path]:
    """Write both configs as Parquet plus the generated card into `out`: a folder to push to the Hub as is.

    `card` takes the `render_card` texts (pretty_name, license, description). Bad data writes nothing.
    Parquet shards of an earlier build that this one does not produce are removed. Returns the files.
    """
    read = _read(data_files)
    check_data_files(read, "judge")
    out = Path(out)
    written: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp:  # the builder's cache: the folder is the product, not the cache
        built = {c: build(read, c, cache_dir=tmp) for c in CONFIGS}
        for config, dataset_dict in built.items():
            for split, ds in dataset_dict.items():
                path = out / data_path(config, split)
                path.parent.mkdir(parents=True, exist_ok=True)
                ds.to_parquet(path)
                written.append(path)
        splits = {c: next(iter(d.values())).info.splits for c, d in built.items()}
        stats = data_stats([row for ds in built["judge"].values() for row in ds.to_list()])
    for config in CONFIGS:
        for stale in set((out / config).glob("*.parquet")) - set(written):
            stale.unlink()
    readme = out / "README.md"
    readme.write_text(
        render_card(splits, stats, content_hash=data_hash(read), repo_id=repo_id, **card), encoding="utf-8"
    )
    return [*written, readme]
