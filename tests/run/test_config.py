"""Run config files: YAML and TOML read the same, bad keys and types are named, layers override in order."""

from __future__ import annotations

import pytest

from gacc_hf.run.config import (
    RunConfig,
    RunConfigError,
    check_limit,
    from_result_config,
    limited_count,
    load,
    parse_limit,
    partial_run,
    resolve,
)

YAML = """\
preset: rules
data: synthetic:contexts=3
ratios: [0.2, 1]
limit: 4
cache_dir: null
"""
TOML = """\
preset = "rules"
data = "synthetic:contexts=3"
ratios = [0.2, 1]
limit = 4
"""


def test_yaml_and_toml_give_the_same_values(tmp_path):
    (tmp_path / "run.yaml").write_text(YAML)
    (tmp_path / "run.toml").write_text(TOML)
    from_yaml, from_toml = load(tmp_path / "run.yaml"), load(tmp_path / "run.toml")
    assert from_yaml.pop("cache_dir") is None  # TOML has no null; the rest is the same
    assert from_yaml == from_toml == {"preset": "rules", "data": "synthetic:contexts=3", "ratios": [0.2, 1], "limit": 4}


def test_the_file_overrides_the_preset_and_the_options_override_the_file(tmp_path):
    (tmp_path / "run.yaml").write_text(YAML)
    run = resolve(load(tmp_path / "run.yaml"), {"judge": "contains", "seed": None})
    assert run.compressors == ["truncate", "goal-lines"] and run.reader == "fields"  # rules preset
    assert run.ratios == [0.2, 1.0] and run.limit == 4 and run.cache_dir is None  # the file
    assert run.judge == "contains" and run.seed == 0  # given; not given (None) leaves the default
    assert resolve({}, {"preset": "rules"}).data == "synthetic"


def test_a_dumped_config_loads_back_to_the_same_run(tmp_path):
    run = resolve({"data": "sample", "limit": 0.25, "split": "test"}, {"preset": "rules", "bootstrap": 10})
    path = run.dump(tmp_path / "config.yaml")
    assert path.read_text().startswith("# The resolved run")
    assert resolve(load(path), {}) == run


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ratio: [0.1]\n", r"unknown key 'ratio' \(did you mean 'ratios'\?\); known keys: preset, data, split"),
        ("temperature: 0.1\n", "unknown key 'temperature'; known keys"),
        ("ratios: 0.1\n", 'ratios must be a list of numbers or "p/q" fractions, got float 0.1'),
        ("ratios: ['0.1']\n", r"ratios must be a list of numbers or \"p/q\" fractions, got list \['0.1'\]"),
        ("compressors: truncate\n", "compressors must be a list of strings, got str 'truncate'"),
        ("seed: true\n", "seed must be an integer, got bool True"),
        ("preset: fast\n", "preset must be a preset name: main, baselines, bilingual, rules, curve, got str 'fast'"),
        ("seed: 1.5\n", "seed must be an integer, got float 1.5"),
        ("on_error: ignore\n", "on_error must be 'raise' or 'record', got str 'ignore'"),
        ("limit: 0\n", r"limit must be a number of groups >= 1 or a fraction in \(0, 1\), got 0"),
        ("- data: sample\n", "a config file holds keys and values, got list"),
        ("data: [\n", "not valid YAML"),
    ],
)
def test_bad_files_name_the_file_and_the_key(tmp_path, text, message):
    path = tmp_path / "run.yaml"
    path.write_text(text)
    with pytest.raises(RunConfigError, match=f"{path}: {message}"):
        load(path)


def test_a_missing_or_unknown_kind_of_file_is_refused(tmp_path):
    with pytest.raises(RunConfigError, match="no such config file"):
        load(tmp_path / "none.yaml")
    (tmp_path / "run.json").write_text("{}")
    with pytest.raises(RunConfigError, match=r"a config file is \.yaml, \.yml or \.toml, not '\.json'"):
        load(tmp_path / "run.json")
    (tmp_path / "run.toml").write_text("data = \n")
    with pytest.raises(RunConfigError, match="not valid TOML"):
        load(tmp_path / "run.toml")
    (tmp_path / "empty.yml").write_text("")
    assert load(tmp_path / "empty.yml") == {}


def test_limits_count_groups_or_take_a_fraction_rounded_up():
    assert parse_limit("3") == 3 and parse_limit("0.1") == 0.1
    assert limited_count(3, 35) == 3 and limited_count(50, 35) == 35
    assert limited_count(0.1, 35) == 4  # 3.5 groups, rounded up
    assert limited_count(0.01, 35) == 1  # never none
    for bad in ("0", "-2", "1.0", "2.5", "many"):
        with pytest.raises(RunConfigError, match="--limit must be a number"):
            parse_limit(bad)
    with pytest.raises(RunConfigError):
        check_limit(True)


def test_a_run_is_partial_only_when_its_limit_left_groups_out():
    assert partial_run({"limit": None}) is None and partial_run({}) is None
    assert partial_run({"limit": {"value": 50, "groups": 35, "of": 35}}) is None
    assert partial_run({"limit": {"value": 0.1, "groups": 4, "of": 35}}) == (
        "a partial run (limit 0.1: the first 4 of 35 groups)"
    )


def test_a_result_config_without_a_data_spec_needs_data_given():
    config = {
        "compressors": [{"name": "truncate", "revision": "r"}],
        "reader": {"name": "fields", "revision": "r"},
        "judge": {"name": "exact", "revision": "r"},
        "ratios": [0.5],
        "conditions": ["own"],
        "seed": 3,
        "n_bootstrap": 0,
        "batch_size": 8,
        "on_error": "record",
        "cache_dir": None,
    }
    run = from_result_config(config)
    assert isinstance(run, RunConfig) and run.data is None and run.compressors == ["truncate"] and run.seed == 3
    with pytest.raises(RunConfigError, match="names no data"):
        resolve(run.to_dict(), {})
    assert resolve(run.to_dict(), {"data": "sample"}).data == "sample"


@pytest.mark.parametrize(
    ("given", "written", "note"),
    [
        ("{cwd}/caches/c", "caches/c", False),  # inside the working directory: made relative to it
        ("{other}/cache", ".gacc_cache", True),  # outside: one machine's folder, replaced by the default
        ("my cache/缓存", "my cache/缓存", False),  # relative: kept
        (None, None, False),
    ],
)
def test_a_saved_config_names_no_folder_of_this_machine(tmp_path, monkeypatch, given, written, note):
    cwd, other = tmp_path / "project", tmp_path / "elsewhere"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    cache_dir = given.format(cwd=cwd, other=other) if given else None
    run = resolve({"cache_dir": cache_dir}, {"preset": "rules"})
    text = run.dump(tmp_path / "config.yaml").read_text(encoding="utf-8")
    assert load(tmp_path / "config.yaml")["cache_dir"] == written
    assert str(tmp_path) not in text
    assert ("pass --cache-dir to reuse it" in text) is note


def test_the_shipped_configs_name_no_maintainer_folder():
    from tests.helpers.paths import ROOT

    shipped = sorted((ROOT / "docs" / "results").glob("*/config.yaml"))
    assert [p.parent.name for p in shipped] == ["baselines", "bilingual", "curve", "judges", "main", "survival"]
    for path in shipped:
        cache_dir = load(path)["cache_dir"]
        assert cache_dir == ".gacc_cache", path


@pytest.mark.parametrize(("limit", "english", "chinese"), [(4, 4, 4), (0.1, 4, 2), (40, 35, 18)])
def test_a_limit_keeps_the_first_groups_of_each_language(limit, english, chinese):
    from gacc_hf.data.loading import load_any
    from gacc_hf.data.schema import validate
    from gacc_hf.run.config import limited_groups

    groups = validate(load_any("sample:all"))  # 35 English goals, then 18 Chinese
    kept = limited_groups(groups, limit)
    # 0.1 of 35 rounds up to 4, of 18 to 2; 40 keeps every one of both
    assert [g.language_tag for g in kept] == ["en"] * english + ["zh"] * chinese
    assert kept == [g for g in groups if g in kept]  # in the data's order, the first of each
    assert kept[:english] == groups[:english] and kept[english:] == groups[35 : 35 + chinese]
    one_language = validate(load_any("sample"))
    assert limited_groups(one_language, 4) == one_language[:4]


def test_a_limited_bilingual_run_scores_both_languages():
    from gacc_hf.data.loading import load_any
    from gacc_hf.run.benchmark import run_benchmark

    result = run_benchmark(load_any("sample:all"), compressor="truncate", reader="fields", judge="exact",
                           ratios=[0.2], conditions=["full"], limit=4, progress=False)  # fmt: skip
    assert result.config["limit"] == {"value": 4, "groups": 8, "of": 53}
    assert [s["language"] for s in result.scores_by_language] == ["en", "zh"]
