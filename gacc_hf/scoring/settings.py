"""Settings: the (reader, judge) pairs a run read its memories with, and figures computed per setting.

A run may have several readers and judges (`run_benchmark(reader=[...], judge=[...])`); every answer row
then names its `reader` and `judge`, and every figure (scores, gaps, outcomes, retention, AUC, per language)
is computed over one setting's rows at a time, exactly as a run of that one setting computes it, each row
tagged with the setting first. Rows that name no setting (folders written before schema 5, whose reader
and judge are the run's) are computed whole and left untagged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any

from gacc_hf.scoring.groups import ABSENT, Rows, field_or_absent, grouped_by, kept

SETTING = ("reader", "judge")
Setting = tuple[str, str]


def setting_of(row: Mapping[str, Any]) -> Setting | None:
    """The (reader, judge) a row names, None when it names none (a row of a schema 4 folder)."""
    return (row["reader"], row["judge"]) if "reader" in row and "judge" in row else None


def settings_of(rows: Iterable[Mapping[str, Any]]) -> list[Setting]:
    """The settings rows name, in first-seen order."""
    return list(dict.fromkeys(s for s in map(setting_of, rows) if s is not None))


def in_setting(rows: Iterable[Mapping[str, Any]], setting: Setting) -> list[Any]:
    """The rows of one setting; a row naming none belongs to every setting (its run had one)."""
    return [r for r in rows if setting_of(r) in (None, setting)]


def tagged(setting: Setting | None, rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows with the setting's reader and judge first (untouched when `setting` is None)."""
    if setting is None:
        return [dict(r) for r in rows]
    return [
        {"reader": setting[0], "judge": setting[1], **{k: v for k, v in r.items() if k not in SETTING}} for r in rows
    ]


Parts = dict[Setting | None, list[Any]]
_READER, _JUDGE = field_or_absent("reader"), field_or_absent("judge")
_READ_READER, _READ_JUDGE = itemgetter("reader"), itemgetter("judge")


def setting_parts(rows: Sequence[Mapping[str, Any]]) -> Parts:
    """The rows of each setting (None: rows naming none), settings in first-seen order, each part's rows in
    their order: the split `by_setting` computes over, made once for every figure of a run (each part keeps
    its grouping by cell, `gacc_hf.scoring.groups.Rows`, for all of them), and kept by `Rows` for the judging
    figures that split the same rows."""
    return kept(rows, "setting parts", _split)


def _split(rows: Sequence[Mapping[str, Any]]) -> Parts:
    rows = rows if isinstance(rows, list) else list(rows)
    try:  # read in C; a getter with a default is twice as slow, so it reads only rows that lack a field
        readers, judges = list(map(_READ_READER, rows)), list(map(_READ_JUDGE, rows))
    except KeyError:
        readers, judges = list(map(_READER, rows)), list(map(_JUDGE, rows))
    if rows and readers.count(readers[0]) == len(rows) and judges.count(judges[0]) == len(rows):
        groups = {(readers[0], judges[0]): rows}  # a run of one setting (or of none); `Rows` copies it
    else:
        groups = grouped_by(zip(readers, judges, strict=True), rows)
    unnamed = [key for key in groups if ABSENT in key]
    parts: Parts = {None if ABSENT in key else key: Rows(part) for key, part in groups.items()}
    if len(unnamed) > 1:  # rows naming a reader but no judge, or the reverse: one part, in row order
        parts[None] = Rows(r for r in rows if setting_of(r) is None)
    return parts


def by_setting(
    rows: Sequence[Mapping[str, Any]], compute: Callable[[list[Any]], list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """`compute` over each setting's rows (settings in first-seen order), its rows tagged with the setting.

    Each setting is computed alone, with the same bootstrap seed, so a one-setting run's figures are exactly
    those `compute` gives over all its rows."""
    return over_parts(setting_parts(rows), compute)


def over_parts(parts: Parts, compute: Callable[[list[Any]], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """`by_setting` over rows already split by `setting_parts`."""
    if not parts:
        return compute([])
    return [out for setting, part in parts.items() for out in tagged(setting, compute(part))]


def setting_label(setting: Setting) -> str:
    """How a setting is named in reports and messages: `reader X, judge Y`."""
    return f"reader {setting[0]}, judge {setting[1]}"


def config_methods(config: Mapping[str, Any], role: str) -> list[dict[str, Any]]:
    """The readers or judges a result's config records (`role`: "reader" or "judge"): one method is recorded
    as itself, several as a list."""
    recorded = config.get(role)
    if recorded is None:
        return []
    return list(recorded) if isinstance(recorded, list) else [recorded]


def config_settings(config: Mapping[str, Any]) -> list[Setting]:
    """Every (reader, judge) setting of a run, in run order: each reader, then each judge."""
    judges = [j["name"] for j in config_methods(config, "judge")]
    return [(r["name"], j) for r in config_methods(config, "reader") for j in judges]
