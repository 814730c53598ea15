"""One entry point for user data: `load_any(spec)` turns whatever names a dataset into validated rows.

A spec is one of:

- `"sample"`: the bundled sample benchmark, its English groups; `"sample:zh"` its Chinese groups and
  `"sample:all"` both (`load_sample`); `"synthetic"`: the deterministic generator, with its
  arguments in the spec (`"synthetic:contexts=50,seed=1"`; see `gacc_hf.data.synthetic` for the defaults), so
  the data never depends on a run's seed;
- a `.jsonl`, `.parquet`, `.csv` or `.tsv` file, or a folder of them (CSV and TSV: `gacc_hf.data.table`).
  A folder whose README.md card has `configs:` (what `gacc data build` writes) uses the files of the asked
  config; otherwise the split
  naming conventions of `datasets` apply (`train.jsonl`, `data/test-*.parquet`, ...), and files without
  a split in their name form the `test` split;
- a folder written by `Dataset.save_to_disk` / `DatasetDict.save_to_disk`;
- a Hub repo id `owner/name` (online only: with HF_HUB_OFFLINE set it fails at once, saying so).

Data in another layout (other column names, one row per question) is read through a column mapping
(`columns=`, `gacc_hf.data.columns`), from files and in-memory datasets alike. Files in gacc-hf's own layout
go through the `GaccBench` builder, whose cache is keyed on the files' content, so an edited file is never
served stale. Every source is validated before anything is built or cached, and each file is read once: the
rows checked are the rows built. `load_any` and `find_spec_problems` (what `gacc run` and `gacc data
validate` call) read a spec through the same steps (`_prepared`), so they accept the same inputs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import datasets
from datasets.data_files import DEFAULT_PATTERNS_ALL, DataFilesDict, get_data_patterns, sanitize_patterns

from gacc_hf.data.builder import build, read_files
from gacc_hf.data.card import CONFIGS
from gacc_hf.data.columns import mapped_splits, needs_mapping
from gacc_hf.data.jsonl import SAMPLE_LANGUAGES, FileRows, find_file_problems, load_sample
from gacc_hf.data.saved import is_saved_dataset, load_saved
from gacc_hf.data.schema import (
    DATA_SUFFIXES,
    SAMPLE_FILES,
    Config,
    DataSourceError,
    DataValidationError,
    Problem,
    as_rows,
    find_problems,
    is_public_view,
    public_view,
)
from gacc_hf.data.special import not_data
from gacc_hf.data.suggest import LayoutError
from gacc_hf.online import require_online
from gacc_hf.safe_yaml import check_front_matter

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
# generated data and the (integer) arguments its spec may carry
GENERATED: dict[str, tuple[str, ...]] = {
    "sample": (),
    "synthetic": ("contexts", "goals_per_context", "questions_per_goal", "seed"),
}
DEFAULT_SPLIT = "test"
SUFFIXES = f"{', '.join(DATA_SUFFIXES[:-1])} or {DATA_SUFFIXES[-1]}"
Files = dict[str, list[Path]]


def _check_config(config: str) -> None:
    if config not in CONFIGS:
        raise ValueError(f"config must be 'public' or 'judge', got {config!r}")


def _shown(path: str | Path) -> Path:
    """A path relative to the working directory when it lies below it (shorter error messages)."""
    path = Path(path)
    try:
        return path.resolve().relative_to(Path.cwd())
    except ValueError:
        return path


def card_configs(folder: str | Path) -> dict[str, dict[str, Any]]:
    """The `configs:` of the folder's README.md card, by config name (empty without a card or configs)."""
    readme = Path(folder) / "README.md"
    if not readme.is_file():
        return {}
    import yaml
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard

    check_front_matter(readme.read_text(encoding="utf-8"), str(_shown(readme)), "dataset", DataSourceError)
    try:
        return dict(MetadataConfigs.from_dataset_card_data(DatasetCard.load(readme).data))
    except (ValueError, yaml.YAMLError) as exc:
        reason = " ".join(str(exc).split())  # YAML errors span several lines
        raise DataSourceError(
            f"{_shown(readme)}: malformed dataset card header (the YAML between the --- lines): {reason}"
        ) from exc


def data_files(path: str | Path, config: Config = "judge") -> tuple[Files, Config]:
    """The files of a local file or folder in the schema, by split, and the view they hold.

    The view is "judge" for files with gold (the public view is derived from them by dropping it) and
    "public" for the public files of a built folder, which cannot give the judge view.
    """
    _check_config(config)
    path = Path(path)
    if path.is_file():
        return {DEFAULT_SPLIT: [_shown(path)]}, "judge"
    if not path.is_dir():
        raise DataSourceError(f"{path}: {not_data(path)}")
    configs = card_configs(path)
    held: Config = "judge"
    if configs:
        name = config if config in configs else next(iter(configs)) if len(configs) == 1 else None
        if name is None:
            raise DataSourceError(f"{path}/README.md defines the configs {sorted(configs)}, not {config!r}")
        if name == "public" and config == "judge":
            raise DataSourceError(f"{path} holds only the public view; the judge view (with gold) is needed")
        held = "public" if name == "public" else "judge"
        patterns = sanitize_patterns(configs[name].get("data_files", "**"))
    else:
        try:
            patterns = get_data_patterns(str(path))
        except FileNotFoundError as exc:
            raise DataSourceError(f"{path}: no data files ({SUFFIXES})") from exc
        if patterns == DEFAULT_PATTERNS_ALL:  # no split in any file name: a benchmark's data is its test split
            patterns = {DEFAULT_SPLIT: DEFAULT_PATTERNS_ALL[datasets.Split.TRAIN]}
    try:
        resolved = DataFilesDict.from_patterns(patterns, base_path=str(path), allowed_extensions=list(DATA_SUFFIXES))
    except FileNotFoundError as exc:
        raise DataSourceError(f"{path}: no {SUFFIXES} files for the {config} view ({exc})") from exc
    found = {str(split): [_shown(p) for p in files] for split, files in resolved.items() if files}
    if not found:
        raise DataSourceError(f"{path}: no data files ({SUFFIXES})")
    return found, held


def _pick(dataset: datasets.DatasetDict, split: str | None, where: str) -> datasets.Dataset:
    if split is not None:
        if split not in dataset:
            raise DataSourceError(f"{where} has no split {split!r}; its splits are {sorted(dataset)}")
        return dataset[split]
    if len(dataset) == 1:
        return next(iter(dataset.values()))
    raise DataSourceError(f"{where} has the splits {sorted(dataset)}; choose one (split=..., --split)")


def _row_problems(read: Mapping[str, Sequence[FileRows]], config: Config, held: Config, where: str) -> list[Problem]:
    """Problems of all splits of an in-memory dataset taken together (IDs unique over the dataset)."""
    rows = _rows(read)
    if not rows:
        return [Problem(0, "*", "the dataset has no rows", file=where)]
    origins = [origin for files in read.values() for f in files for origin in f.origins]
    return find_problems(rows, config == "judge", forbid_gold=held == "public", origins=origins)


def _as_dict(loaded: datasets.Dataset | datasets.DatasetDict) -> datasets.DatasetDict:
    return loaded if isinstance(loaded, datasets.DatasetDict) else datasets.DatasetDict({DEFAULT_SPLIT: loaded})


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """A generated-data spec split into its name and arguments; any other spec is returned as is.

    >>> parse_spec("synthetic:contexts=50,seed=1"), parse_spec("sample:zh")
    (('synthetic', {'contexts': 50, 'seed': 1}), ('sample', {'language': 'zh'}))
    >>> parse_spec("data/train.jsonl")
    ('data/train.jsonl', {})
    """
    name, sep, rest = spec.partition(":")
    if name not in GENERATED:
        return spec, {}
    if name == "sample":
        language = rest.strip() if sep else "en"
        if language not in SAMPLE_LANGUAGES:
            raise DataSourceError(f"data spec {spec!r}: the sample's languages are {', '.join(SAMPLE_LANGUAGES)}")
        return name, {"language": language}
    known = GENERATED[name]
    args: dict[str, Any] = {}
    for part in rest.split(",") if sep else []:
        key, _, value = (x.strip() for x in part.partition("="))
        if key not in known:
            takes = f"its arguments are {', '.join(known)}" if known else "it takes no arguments"
            raise DataSourceError(f"data spec {spec!r}: {name} has no argument {key!r}; {takes}")
        if key in args:
            raise DataSourceError(f"data spec {spec!r}: {key} is given twice")
        try:
            args[key] = int(value)
        except ValueError:
            raise DataSourceError(f"data spec {spec!r}: {key} needs an integer value ({key}=N)") from None
    return name, args


def hub_revision(repo_id: str) -> str:
    """The commit a Hub dataset's main branch is at now: a run loads that revision and records it, so its
    results name the exact data (`dataset.revision` in Eval Results). Online only."""
    from huggingface_hub import HfApi

    require_online(f"load the Hub dataset {repo_id!r}")
    try:
        sha = HfApi().dataset_info(repo_id).sha
    except (OSError, ValueError) as exc:
        raise DataSourceError(f"cannot load {repo_id!r} from the Hub: {exc}") from exc
    if not sha:
        raise DataSourceError(f"the Hub gave no revision for the dataset {repo_id!r}")
    return sha


def _load_in_memory(
    name: str, config: Config, cache_dir: str | Path | None, revision: str | None = None
) -> datasets.DatasetDict:
    """Sources that are not files in the schema: synthetic, a save_to_disk folder, a Hub repo (at `revision`)."""
    base, args = parse_spec(name)
    if base == "synthetic":
        from gacc_hf.data.synthetic import synthetic

        try:
            return datasets.DatasetDict({DEFAULT_SPLIT: synthetic(**args)})
        except ValueError as exc:
            raise DataSourceError(f"data spec {name!r}: {exc}") from exc
    if Path(name).is_dir():
        return load_saved(name)
    require_online(f"load the Hub dataset {name!r}")
    try:
        where = None if cache_dir is None else str(cache_dir)
        return _as_dict(datasets.load_dataset(name, config, cache_dir=where, revision=revision))
    except (OSError, ValueError) as exc:
        raise DataSourceError(f"cannot load {name!r} from the Hub: {exc}") from exc


def spec_kind(name: str) -> str:
    """'sample', 'synthetic', 'files', 'saved' or 'hub'; DataSourceError when the spec names nothing."""
    base, _args = parse_spec(name)
    if base in GENERATED:
        return base
    path = Path(name)
    if path.exists():
        return "saved" if path.is_dir() and is_saved_dataset(path) else "files"
    if HUB_ID.match(name) and path.suffix not in DATA_SUFFIXES:
        return "hub"
    raise DataSourceError(
        f"no such file or folder: {name!r} (a spec is 'sample', 'synthetic', a .jsonl/.parquet/.csv/.tsv file or "
        "folder, a save_to_disk folder or a Hub repo id owner/name)"
    )


def in_memory(dataset: datasets.DatasetDict, where: str) -> dict[str, list[FileRows]]:
    """The splits of an in-memory dataset as rows to check, each split's rows named `where [split] row N`."""
    return {
        split: [FileRows(f"{where} [{split}]", "", ds.to_list(), list(range(len(ds))), None, [])]
        for split, ds in dataset.items()
    }


def _rows(read: Mapping[str, Sequence[FileRows]]) -> list[Any]:
    return [row for files in read.values() for f in files for row in f.rows]


def _mapped(read: Mapping[str, Sequence[FileRows]], columns: Mapping[str, str] | None) -> datasets.DatasetDict:
    """Data in another layout put in gacc-hf's own; its unreadable lines and empty files come first."""
    files = [f for fs in read.values() for f in fs]
    unread = [p for f in files for p in f.problems]
    unread += [Problem(0, "*", "the file has no rows", file=f.path) for f in files if not f.rows and not f.problems]
    if unread:
        raise DataValidationError(unread)
    return mapped_splits(read, columns)


def _prepared(
    name: str,
    kind: str,
    view: Config,
    columns: Mapping[str, str] | None,
    cache_dir: str | Path | None,
    *,
    check: bool,
    revision: str | None = None,
) -> datasets.DatasetDict | None:
    """The data a non-sample spec names, checked: DataValidationError lists every problem. Files in gacc-hf's
    layout are built in `view` (the other sources give judge rows), unless `check` asks only for the check
    (then None, and nothing is written); the check of `check` also refuses gold in a public view."""
    if kind == "files":
        files, held = data_files(name, view)
        read = read_files(files)
        if columns or needs_mapping(_rows(read)):
            return _mapped(read, columns)
        if not check:
            return build(read, view, cache_dir=cache_dir)
        flat = [f for fs in read.values() for f in fs]
        problems = find_file_problems(flat, view == "judge", forbid_gold=held == "public")
    else:
        loaded = _load_in_memory(name, view, cache_dir, revision)
        read = in_memory(loaded, name)
        if columns or needs_mapping(_rows(read)):
            return _mapped(read, columns)
        problems = _row_problems(read, view, view if check else "judge", name)  # a public view drops gold
        if not problems and not check:
            return loaded
    if problems:
        raise DataValidationError(problems)
    return None


def load_any(
    spec: str | os.PathLike[str],
    config: Config = "judge",
    *,
    split: str | None = None,
    cache_dir: str | Path | None = None,
    columns: Mapping[str, str] | None = None,
    revision: str | None = None,
) -> datasets.Dataset:
    """The validated dataset a spec names, in the asked view (see the module doc for the specs).

    `split` chooses among several splits (needed only when there are several). `cache_dir` is the
    `datasets` cache (default: HF_DATASETS_CACHE). `columns` maps schema names to the data's own
    (`{"context": "text"}`); data with one row per question is grouped (`gacc_hf.data.columns`). `revision` is the
    commit of a Hub dataset to load (`hub_revision`; default: its main branch). Invalid data raises
    DataValidationError naming every file, row and field at fault, before anything is written.
    """
    _check_config(config)
    name = os.fspath(spec)
    kind = spec_kind(name)
    if kind in ("sample", "synthetic") and columns:
        raise DataSourceError(f"data spec {name!r} is in gacc-hf's own layout; a column mapping does not apply")
    if kind == "sample":
        sample = load_sample(config, parse_spec(name)[1]["language"])
        return _pick(datasets.DatasetDict({DEFAULT_SPLIT: sample}), split, "the sample")
    loaded = _prepared(name, kind, config, columns, cache_dir, check=False, revision=revision)
    assert loaded is not None  # a build always gives the data
    chosen = _pick(loaded, split, name)
    return public_view(chosen) if config == "public" else chosen


def from_memory(dataset: Any, columns: Mapping[str, str] | None = None) -> Any:
    """An in-memory dataset (`Dataset`, `DatasetDict` of one split, rows) put in gacc-hf's layout when it is in
    another (`columns` given, or one row per question), checked as a file would be; data already in the
    layout is returned as it is (a `Dataset` itself, other data as its list of rows), for `validate`."""
    rows = as_rows(dataset)
    if not (columns or needs_mapping(rows)):
        return dataset if isinstance(dataset, datasets.Dataset) else rows
    read = {DEFAULT_SPLIT: [FileRows("the dataset", "", rows, list(range(len(rows))), None, [])]}
    return _mapped(read, columns)[DEFAULT_SPLIT]


def find_spec_problems(
    spec: str | os.PathLike[str], config: Config | None = None, columns: Mapping[str, str] | None = None
) -> list[Problem]:
    """Every problem of the data a spec names, without raising for bad rows (what `gacc data validate` lists).

    The data is read as `load_any(spec, columns=columns)` reads it (the same steps), so what one accepts the
    other accepts; data in neither layout is one problem naming the columns found and a mapping to try.

    With `config=None` every view the data holds is checked: the judge view, and also the public files
    of a folder built by `gacc data build` (which must not carry gold); data that holds only the public
    view (no gold anywhere) is checked as a public view.
    """
    name = os.fspath(spec)
    kind = spec_kind(name)
    if config is not None:
        _check_config(config)
    if kind in ("sample", "synthetic") and columns:
        raise DataSourceError(f"data spec {name!r} is in gacc-hf's own layout; a column mapping does not apply")

    def view_problems(view: Config) -> list[Problem]:
        if kind == "sample":
            language = parse_spec(name)[1]["language"]
            flat = list(SAMPLE_FILES.values()) if language == "all" else [SAMPLE_FILES[language]]
            return find_file_problems(flat, view == "judge")
        try:
            _prepared(name, kind, view, columns, None, check=True)
        except DataValidationError as exc:
            return exc.problems
        except LayoutError as exc:
            return [Problem(0, "*", str(exc))]
        return []

    if config is not None:
        return view_problems(config)
    configs = set(card_configs(name)) if kind == "files" else set()
    if configs == {"public"}:
        return view_problems("public")
    problems = view_problems("judge")
    if is_public_view(problems):
        return view_problems("public")
    return problems + (view_problems("public") if {"public", "judge"} <= configs else [])


def check_hub_folder(folder: str | Path) -> Mapping[str, Files]:
    """The files of a folder ready to push (a card with both configs, valid data); raises otherwise."""
    folder = Path(folder)
    configs = card_configs(folder)
    if not {"public", "judge"} <= set(configs):
        raise DataSourceError(
            f"{folder} is not a built GACC folder (its README.md card lacks the public and judge configs); "
            "run `gacc data build SRC OUT` first"
        )
    problems = find_spec_problems(folder)
    if problems:
        raise DataValidationError(problems)
    return {view: data_files(folder, view)[0] for view in CONFIGS}
