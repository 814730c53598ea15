"""Run config files (YAML or TOML): load and check them, resolve a run, write the resolved config back.

A run is resolved in three layers: the preset (`gacc_hf.run.presets`), then the config file, then the
options given on the command line. Every results folder holds the resolved run as `config.yaml`, so
`gacc run --config <results>/config.yaml` runs the same experiment again (on the same cache: 0 model
calls). A file with an unknown key or a value of the wrong type is refused with the key named, before
any data is loaded.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import reprlib
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from gacc_hf.run.config_limits import unreadable
from gacc_hf.run.goals import check_goal_ids, partial_choice
from gacc_hf.run.presets import DEFAULT_PRESET, PRESETS, RUN_DEFAULTS, get_preset
from gacc_hf.run.tasks import UNNAMED
from gacc_hf.safe_yaml import dump_yaml, load_yaml

T = TypeVar("T")
CONFIG_FILE = "config.yaml"
DATA_FILE = "data.jsonl"  # the rows of an in-memory dataset, written beside the config that reruns its run
Limit = int | float
if TYPE_CHECKING:
    from gacc_hf.data.schema import Group


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return _is_int(v) or isinstance(v, float)


_FRACTION = re.compile(r"\s*\d+\s*/\s*[1-9]\d*\s*")


def _ratio(v: Any) -> bool:
    """A number, or a "p/q" string for an exact fraction (a float cannot say 1/3)."""
    return _is_number(v) or (isinstance(v, str) and _FRACTION.fullmatch(v) is not None)


def as_ratio(v: Any) -> float | Fraction:
    """A config's or option's ratio: a "p/q" string or a Fraction as a Fraction (exact), else a float."""
    return Fraction(v.replace(" ", "")) if isinstance(v, str) else v if isinstance(v, Fraction) else float(v)


def _str_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _one_or_more(v: Any) -> bool:
    return isinstance(v, str) or (_str_list(v) and len(v) > 0)


# key -> (check, what the value must be); None is allowed where the description says so
_TYPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "preset": (lambda v: isinstance(v, str) and v in PRESETS, f"a preset name: {', '.join(PRESETS)}"),
    "data": (lambda v: v is None or isinstance(v, str), "a string (a data spec) or null"),
    "split": (lambda v: v is None or isinstance(v, str), "a string or null"),
    "columns": (
        lambda v: v is None or (isinstance(v, dict) and all(isinstance(x, str) for x in (*v, *v.values()))),
        "a mapping of schema column names to the data's column names, or null",
    ),
    "limit": (lambda v: v is None or _is_number(v), "a number (groups, or a fraction below 1) or null"),
    "goals": (lambda v: v is None or _str_list(v), "a list of goal ids (strings) or null"),
    "compressors": (_str_list, "a list of strings"),
    "reader": (_one_or_more, "a string or a non-empty list of strings (several readers)"),
    "judge": (_one_or_more, "a string or a non-empty list of strings (several judges)"),
    "conditions": (_str_list, "a list of strings"),
    "ratios": (lambda v: isinstance(v, list) and all(_ratio(x) for x in v), 'a list of numbers or "p/q" fractions'),
    "seed": (_is_int, "an integer"),
    "bootstrap": (_is_int, "an integer"),
    "batch_size": (_is_int, "an integer"),
    "cache_dir": (lambda v: v is None or isinstance(v, str), "a string or null"),
    "on_error": (lambda v: v in ("raise", "record"), "'raise' or 'record'"),
}
KEYS = tuple(_TYPES)


class RunConfigError(ValueError):
    """A config file or a run option is unusable; the message names the file and the key."""


_SHOWN = reprlib.Repr()
_SHOWN.maxstring, _SHOWN.maxother, _SHOWN.maxlist, _SHOWN.maxdict, _SHOWN.maxlevel = 80, 80, 6, 6, 2


@dataclass(frozen=True)
class RunConfig:
    """One fully resolved run: everything `gacc run` needs, nothing left to a default."""

    data: str
    split: str | None
    limit: Limit | None
    compressors: list[str]
    reader: str | list[str]  # several: each reads the same memories (`run_benchmark`)
    judge: str | list[str]  # several: each judges every answer
    conditions: list[str]
    ratios: list[float | Fraction]
    seed: int
    bootstrap: int
    batch_size: int
    cache_dir: str | None
    on_error: str
    columns: dict[str, str] | None = None  # the data's column names (`gacc_hf.data.columns`); None: the schema's
    goals: list[str] | None = None  # the goal ids to run (`gacc_hf.run.goals`); None: every goal

    def to_dict(self) -> dict[str, Any]:
        """Plain values; an exact fraction as its "p/q" string, which `load` reads back as the same Fraction."""
        values = asdict(self)
        values["ratios"] = [str(r) if isinstance(r, Fraction) else r for r in self.ratios]
        return values

    def dump(self, path: str | Path, notes: Sequence[str] = ()) -> Path:
        """Write this config as YAML that `gacc run --config` reads back to the same run, with a cache folder
        that means something on another machine (`portable_cache_dir`); `notes` are further header lines. A run
        of a method no name reaches gets a header saying that the file cannot rerun it, and why."""
        path = Path(path)
        reason = unnamed_method(self.to_dict())
        if reason is None:
            head = "# The resolved run: `gacc run --config <this file>` runs it again (options given override it).\n"
        else:
            head = f"# This file cannot rerun the run: {reason}.\n"
        head += "".join(f"# {note}\n" for note in notes)
        values = self.to_dict()
        values["cache_dir"], moved = portable_cache_dir(self.cache_dir)
        if moved:
            head += "# The run's cache was a folder outside its working directory: pass --cache-dir to reuse it.\n"
        path.write_text(head + dump_yaml(values), encoding="utf-8")
        return path


def saved_data_spec(folder: str | Path, cwd: str | Path | None = None) -> str:
    """The data spec of the rows a results folder holds (`DATA_FILE`): relative to the working directory when
    the folder lies below it (the way a data spec on the command line is read), else absolute.

    >>> saved_data_spec("/home/me/proj/runs/quick", "/home/me/proj"), saved_data_spec("/tmp/r", "/home/me/proj")
    ('runs/quick/data.jsonl', '/tmp/r/data.jsonl')
    """
    here = Path(cwd) if cwd is not None else Path.cwd()
    path = Path(os.path.normpath(here / folder)) / DATA_FILE
    try:
        return str(path.relative_to(here))
    except ValueError:
        return str(path)


def unnamed_method(values: Mapping[str, Any]) -> str | None:
    """Why a config cannot rerun its run: the first method it names as `<callable NAME>` (a Python callable that
    no `import:` spec reaches); None when every method has a name a run can resolve."""
    named = {"compressors": values.get("compressors") or [], "reader": as_list(values.get("reader"))}
    named["judge"] = as_list(values.get("judge"))
    for key, specs in named.items():
        for spec in specs:
            if isinstance(spec, str) and spec.startswith(UNNAMED):
                return (
                    f"its {key.removesuffix('s')} {spec} is a Python callable that no name reaches (a function of "
                    "a script or notebook, a lambda, a nested function, a partial or an object), and a config names "
                    f"only registered methods and import:<module>:<attr>; give --{key}, or rerun it from Python"
                )
    return None


def as_list(spec: Any) -> list[Any]:
    """A role's methods (one, or a list or tuple of several) as a list."""
    return list(spec) if isinstance(spec, list | tuple) else [spec]


def one_or_list(values: Sequence[T]) -> T | list[T]:
    """A reader's or judge's record as a run keeps it: one as itself (as before several were possible),
    several as a list."""
    return values[0] if len(values) == 1 else list(values)


def parse_methods(text: str) -> str | list[str]:
    """`--reader a,b` / `--judge x,y`: one name as itself, several as a list (empty names kept, to be refused)."""
    return one_or_list([part.strip() for part in text.split(",")])


def check_method_names(run: RunConfig) -> None:
    """Refuse an empty reader or judge name, and one given twice (it would judge every answer twice)."""
    for role in ("reader", "judge"):
        names = as_list(getattr(run, role))
        if not all(n.strip() for n in names):
            raise RunConfigError(f"--{role} is empty or names an empty method; name one, or several comma-separated")
        if twice := [n for n in dict.fromkeys(names) if names.count(n) > 1]:
            raise RunConfigError(f"--{role} names {', '.join(twice)} twice; give each {role} once")


def portable_cache_dir(cache_dir: str | None, cwd: str | Path | None = None) -> tuple[str | None, bool]:
    """The cache folder a shared config names, and whether it is not the run's own: a relative folder as it
    is, an absolute one inside the working directory made relative to it, any other the default (an absolute
    path names one machine's folders, and its user's).

    >>> portable_cache_dir("/home/me/proj/cache", "/home/me/proj"), portable_cache_dir("/tmp/c", "/home/me/proj")
    (('cache', False), ('.gacc_cache', True))
    """
    if cache_dir is None or not Path(cache_dir).is_absolute():
        return cache_dir, False
    try:
        return str(Path(cache_dir).relative_to(Path(cwd) if cwd is not None else Path.cwd())), False
    except ValueError:
        return RUN_DEFAULTS["cache_dir"], True


def check(values: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The values if every key is known and every value has its type; RunConfigError naming the key otherwise."""
    for key, value in values.items():
        if key not in _TYPES:
            near = difflib.get_close_matches(str(key), KEYS, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise RunConfigError(f"{where}: unknown key {_SHOWN.repr(key)}{hint}; known keys: {', '.join(KEYS)}")
        ok, what = _TYPES[key]
        if not ok(value):
            shown = _SHOWN.repr(value)  # bounded: a huge value is never formatted whole
            raise RunConfigError(f"{where}: {key} must be {what}, got {type(value).__name__} {shown}")
    if values.get("limit") is not None:
        check_limit(values["limit"], f"{where}: limit")
    if values.get("goals") is not None:
        check_goal_ids(values["goals"], f"{where}: goals")
    return dict(values)


def load(path: str | Path) -> dict[str, Any]:
    """The checked keys of a `.yaml`/`.yml`/`.toml` run config file (only the keys it sets)."""
    path = Path(path)
    if not path.is_file():
        raise RunConfigError(f"{path}: no such config file")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".toml":
            values: Any = tomllib.loads(text)
        elif path.suffix in (".yaml", ".yml"):
            values = load_yaml(text, str(path), "a run config", RunConfigError)
        else:
            raise RunConfigError(f"{path}: a config file is .yaml, .yml or .toml, not {path.suffix or 'no suffix'!r}")
    except tomllib.TOMLDecodeError as exc:
        raise RunConfigError(f"{path}: not valid {path.suffix[1:].upper()}: {exc}") from exc
    except (RecursionError, ValueError) as exc:  # Python's own limits, met while parsing: name the file
        if isinstance(exc, RunConfigError):
            raise
        raise RunConfigError(unreadable(path, text, exc)) from exc
    if values is None:
        return {}
    if not isinstance(values, dict):
        raise RunConfigError(f"{path}: a config file holds keys and values, got {type(values).__name__}")
    return check(values, str(path))


def check_limit(value: Any, where: str = "limit") -> Limit:
    """A whole number of groups >= 1, or a fraction of the groups in (0, 1)."""
    if _is_int(value) and value >= 1:
        return int(value)
    if isinstance(value, float) and 0 < value < 1:
        return value
    raise RunConfigError(f"{where} must be a number of groups >= 1 or a fraction in (0, 1), got {value!r}")


def parse_limit(text: str) -> Limit:
    """`--limit` on the command line: `5` (groups) or `0.1` (a tenth of them)."""
    try:
        value: Any = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            raise RunConfigError(f"--limit must be a number, got {text!r}") from None
    return check_limit(value, "--limit")


def limited_count(limit: Limit, n_groups: int) -> int:
    """How many groups (the first ones) a limit keeps: N itself, or the fraction rounded up (at least 1)."""
    return min(n_groups, limit if isinstance(limit, int) else max(1, math.ceil(limit * n_groups)))


def limited_groups(groups: Sequence[Group], limit: Limit) -> list[Group]:
    """The groups a limit keeps: the first N (or the fraction) of each language, in the data's order, so a
    limited run on bilingual data still scores both languages (`language_tag`; one language: the first N)."""
    by_language: dict[str, list[Group]] = {}
    for group in groups:
        by_language.setdefault(group.language_tag, []).append(group)
    kept = {id(g) for same in by_language.values() for g in same[: limited_count(limit, len(same))]}
    return [g for g in groups if id(g) in kept]


def resolve(file_values: Mapping[str, Any], given: Mapping[str, Any], where: str = "the config") -> RunConfig:
    """The run from the preset, overridden by the file's values (`where`: the file), overridden by the options
    given.

    `given` holds the options set on the command line (None = not given); the preset is the one
    given, else the file's, else the default.
    """
    given = {k: v for k, v in given.items() if v is not None}
    chosen = get_preset(given.get("preset") or file_values.get("preset") or DEFAULT_PRESET)
    base = {
        "data": chosen.data,
        "split": None,
        "columns": None,
        "limit": None,
        "goals": None,
        "compressors": list(chosen.compressors),
        "reader": chosen.reader,
        "judge": chosen.judge,
        "conditions": list(chosen.conditions),
        "ratios": list(chosen.ratios),
        "bootstrap": RUN_DEFAULTS["n_bootstrap"],
        **{k: RUN_DEFAULTS[k] for k in ("seed", "batch_size", "cache_dir", "on_error")},
    }
    merged = {**base, **file_values, **given}
    merged.pop("preset", None)
    if merged["data"] is None:
        raise RunConfigError("data: the config names no data (the run was on an in-memory dataset); give --data")
    if reason := unnamed_method(merged):
        raise RunConfigError(f"{where}: cannot rerun the run: {reason}")
    merged["ratios"] = [as_ratio(r) for r in merged["ratios"]]
    for role in ("reader", "judge"):
        merged[role] = one_or_list(as_list(merged[role]))
    return RunConfig(**{f.name: merged[f.name] for f in fields(RunConfig)})


def from_result_config(config: Mapping[str, Any]) -> RunConfig:
    """The run a `result.config` records, as a config that reproduces it.

    Methods are taken as they were named (`methods`), else by their registered names; the data as it
    was named (`data.spec`: None for an in-memory dataset, which `--data` must then supply).
    """
    data = config.get("data") or {}
    methods = config.get("methods") or {}
    limit = config.get("limit") or {}
    return RunConfig(
        data=data.get("spec"),  # type: ignore[arg-type]
        split=data.get("split"),
        columns=data.get("columns"),
        limit=limit.get("value"),
        goals=(config.get("goals") or {}).get("ids"),
        compressors=list(methods.get("compressors") or [c["name"] for c in config["compressors"]]),
        reader=methods.get("reader") or one_or_list([m["name"] for m in as_list(config["reader"])]),
        judge=methods.get("judge") or one_or_list([m["name"] for m in as_list(config["judge"])]),
        conditions=list(config["conditions"]),
        ratios=_recorded_ratios(config),
        seed=int(config["seed"]),
        bootstrap=int(config["n_bootstrap"]),
        batch_size=int(config["batch_size"]),
        cache_dir=config.get("cache_dir"),
        on_error=str(config["on_error"]),
    )


def _recorded_ratios(config: Mapping[str, Any]) -> list[float | Fraction]:
    """The ratios as run: the float where it reads back as the exact ratio (0.2), else the Fraction (1/3)."""
    floats = [float(r) for r in config["ratios"]]
    exact = config.get("exact_ratios") or [None] * len(floats)
    return [
        f if e is None or Fraction(repr(f)) == Fraction(e) else Fraction(e) for f, e in zip(floats, exact, strict=True)
    ]


def partial_run(config: Mapping[str, Any]) -> str | None:
    """What makes a run partial (a --limit or a choice of goals that left groups out), or None for a run over the
    whole data."""
    limit = config.get("limit")
    if limit and limit["groups"] < limit["of"]:
        return f"a partial run (limit {limit['value']}: the first {limit['groups']} of {limit['of']} groups)"
    return partial_choice(config.get("goals"))
