"""Presets: one definition of the defaults, resolved the same by `gacc run` and `run_benchmark`."""

from __future__ import annotations

import inspect
import json

import pytest

from gacc_hf.cli import build_parser, main
from gacc_hf.cli.run import resolve_run
from gacc_hf.run.benchmark import run_benchmark
from gacc_hf.run.presets import DEFAULTS, PRESETS, RUN_DEFAULTS, get_preset


def _resolved(*argv: str):
    return resolve_run(build_parser().parse_args(["run", *argv]))


def test_the_main_job_is_what_the_project_defines():
    main_job = PRESETS["main"]
    assert DEFAULTS is main_job
    assert (main_job.data, main_job.compressors, main_job.reader, main_job.judge) == (
        "sample",
        ("truncate", "embed"),
        "smollm2",
        "contains",
    )
    assert main_job.conditions == ("own", "none", "full", "oracle", "closed") and main_job.ratios == (0.2,)
    rules = PRESETS["rules"]
    assert set(rules.compressors) == {"truncate", "goal-lines"} and (rules.reader, rules.judge) == ("fields", "exact")


@pytest.mark.parametrize("name", ["main", "rules"])
def test_gacc_run_resolves_a_preset_to_its_methods(name):
    preset = PRESETS[name]
    run = _resolved() if name == "main" else _resolved("--preset", name)
    assert run.data == preset.data
    assert run.compressors == list(preset.compressors) and (run.reader, run.judge) == (preset.reader, preset.judge)
    assert run.conditions == list(preset.conditions) and run.ratios == list(preset.ratios)
    assert (run.seed, run.bootstrap, run.batch_size, run.cache_dir, run.on_error) == (
        RUN_DEFAULTS["seed"],
        RUN_DEFAULTS["n_bootstrap"],
        RUN_DEFAULTS["batch_size"],
        RUN_DEFAULTS["cache_dir"],
        RUN_DEFAULTS["on_error"],
    )


def test_options_override_the_preset():
    run = _resolved("--preset", "rules", "--reader", "smollm2", "--ratios", "0.5")
    assert (run.reader, run.ratios, run.judge) == ("smollm2", [0.5], "exact")


def test_the_preset_methods_are_run_benchmark_keywords():
    assert set(PRESETS["rules"].methods()) <= set(inspect.signature(run_benchmark).parameters)


def test_run_benchmark_defaults_are_the_main_preset():
    params = inspect.signature(run_benchmark).parameters
    methods = DEFAULTS.methods()
    assert {k: params[k].default for k in methods} == methods
    assert params["batch_size"].default == RUN_DEFAULTS["batch_size"]
    assert params["n_bootstrap"].default == RUN_DEFAULTS["n_bootstrap"]


def test_an_unknown_preset_is_a_clear_error(tmp_path, capsys):
    known = "main, baselines, bilingual, rules, curve"
    with pytest.raises(ValueError, match=f"unknown preset 'fast'; known presets: {known}"):
        get_preset("fast")
    assert main(["run", "--preset", "fast", "--output-dir", str(tmp_path / "o")]) == 2
    assert "unknown preset 'fast'; known presets: main, baselines, bilingual, rules, curve" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_the_curve_preset_draws_curves_with_their_areas_in_seconds(tmp_path):
    out = tmp_path / "curve"
    assert main(["run", "--preset", "curve", "--output-dir", str(out), "--cache-dir", str(tmp_path / "c")]) == 0
    doc = json.loads((out / "results.json").read_text())
    assert {(r["compressor"], r["condition"], tuple(r["ratios"])) for r in doc["auc"]} == {
        (name, "own", (0.1, 0.2, 0.3, 0.5)) for name in ("truncate", "goal-lines")
    }
    assert all(r["retention"] is not None for r in doc["retention"])  # full and closed are both run
    assert "## Score against budget" in (out / "report.md").read_text()
