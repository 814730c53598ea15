"""One (reader, judge) setting of a results folder, seen as a run of that setting alone.

A run of several readers or judges records every setting in one folder (`gacc_hf.scoring.settings`); what
reads one setting at a time (the report's sections, the plots, publishing, `gacc compare`) takes its view:
the answer rows, figures and usage cells of that setting, and a config naming its one reader and judge, as
a run of that setting would have recorded them. A run of one setting is its own view.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gacc_hf.cost.costing import cost_document
from gacc_hf.results.layout import RunResults
from gacc_hf.scoring.settings import Setting, config_methods, config_settings, in_setting, setting_label

__all__ = ["SettingError", "choose_setting", "matched_views", "setting_view", "setting_views", "several_settings"]


class SettingError(ValueError):
    """A setting was asked for that the run does not have, or none was chosen where the run has several."""


def several_settings(config: Mapping[str, Any]) -> bool:
    """Whether a run has more than one (reader, judge) setting."""
    return len(config_settings(config)) > 1


def _method(config: Mapping[str, Any], role: str, name: str) -> dict[str, Any]:
    return next(m for m in config_methods(config, role) if m["name"] == name)


def _spec(config: Mapping[str, Any], role: str, name: str) -> Any:
    """The spec a method was given as, of the one named `name` (specs are recorded in the order of methods)."""
    specs = (config.get("methods") or {}).get(role)
    if not isinstance(specs, list):
        return specs
    names = [m["name"] for m in config_methods(config, role)]
    return specs[names.index(name)]


def _rows(value: Any, setting: Setting) -> Any:
    """A figure's rows of one setting; any other value as it is."""
    if isinstance(value, list) and value and all(isinstance(r, Mapping) for r in value):
        return in_setting(value, setting)
    return value


def setting_view(run: RunResults, setting: Setting) -> RunResults:
    """The run as a run of `setting` alone (see the module); the run itself when it has one setting."""
    config = run.config
    if not several_settings(config):
        return run
    if setting not in config_settings(config):
        raise SettingError(f"the run has no setting {setting_label(setting)}; it has {settings_line(config)}")
    reader, judge = setting
    methods = {
        **(config.get("methods") or {}),
        "reader": _spec(config, "reader", reader),
        "judge": _spec(config, "judge", judge),
    }
    view_config = {
        **config,
        "reader": _method(config, "reader", reader),
        "judge": _method(config, "judge", judge),
        "methods": methods,
    }
    payload = {key: _rows(value, setting) for key, value in run.payload.items()}
    payload["config"] = view_config
    if isinstance(payload.get("usage"), Mapping):
        payload["usage"] = _setting_usage(payload["usage"], setting)
        if payload.get("prices") is not None:
            payload["cost"] = cost_document(payload["usage"], payload["prices"], reader, judge)
    return RunResults(payload, in_setting(run.answers, setting), run.memories)


def _setting_usage(usage: Mapping[str, Any], setting: Setting) -> dict[str, Any]:
    """A run's usage as a setting sees it: the setting's cells, and of the readers and judges only its own
    (their whole usage in the run: a judge of several readers' answers is counted for all of them)."""
    named = {"reader": setting[0], "judge": setting[1]}

    def own(by_role: Mapping[str, Any]) -> dict[str, Any]:
        return {
            role: {n: v for n, v in methods.items() if role not in named or n == named[role]}
            for role, methods in by_role.items()
        }

    out = {**usage, "cells": in_setting(usage.get("cells") or [], setting)}
    for section in ("roles", "sent"):
        if isinstance(usage.get(section), Mapping):
            out[section] = own(usage[section])
    return out


def setting_views(run: RunResults) -> list[tuple[Setting, RunResults]]:
    """Every setting of the run with its view, in run order."""
    return [(s, setting_view(run, s)) for s in config_settings(run.config)]


def settings_line(config: Mapping[str, Any]) -> str:
    """The run's settings in one line: `reader a, judge x; reader a, judge y`."""
    return "; ".join(setting_label(s) for s in config_settings(config))


def choose_setting(config: Mapping[str, Any], reader: str | None, judge: str | None) -> Setting:
    """The setting `reader` and `judge` name (either may be left out where the run has one of that role);
    SettingError naming the run's settings when none or several remain."""
    settings = config_settings(config)
    chosen = [s for s in settings if reader in (None, s[0]) and judge in (None, s[1])]
    if len(chosen) == 1:
        return chosen[0]
    if not chosen:
        asked = ", ".join(f"{role} {name}" for role, name in (("reader", reader), ("judge", judge)) if name)
        raise SettingError(f"the run has no setting with {asked}; its settings: {settings_line(config)}")
    raise SettingError(
        f"the run has {len(settings)} (reader, judge) settings ({settings_line(config)}); "
        "choose one with --reader NAME --judge NAME"
    )


def matched_views(
    run_a: RunResults, run_b: RunResults
) -> tuple[list[tuple[Setting | None, RunResults, RunResults]], list[Setting]]:
    """The settings two runs are compared on, each with both runs' views, and the settings only one run has.

    Two runs of one setting each are compared as they are (setting None: their readers and judges are checked
    as a run's are, `setup_differences`); otherwise on each (reader, judge) setting both have, by name.
    SettingError when they share none."""
    if not several_settings(run_a.config) and not several_settings(run_b.config):
        return [(None, run_a, run_b)], []
    settings_a, settings_b = config_settings(run_a.config), config_settings(run_b.config)
    shared = [s for s in settings_a if s in settings_b]
    if not shared:
        raise SettingError(
            f"the runs share no (reader, judge) setting: A has {settings_line(run_a.config)}, "
            f"B has {settings_line(run_b.config)}"
        )
    unmatched = [s for s in dict.fromkeys([*settings_a, *settings_b]) if s not in shared]
    return [(s, setting_view(run_a, s), setting_view(run_b, s)) for s in shared], unmatched
