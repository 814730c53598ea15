"""The GaccBench builder, the Hub-ready folder it writes, the shipped folder being in sync with the sample,
and the `gacc data build / stats / push` commands."""

from __future__ import annotations

import json
import subprocess
import sys

import datasets
import pyarrow.parquet as pq
import pytest

from gacc_hf.cli import main
from gacc_hf.data.builder import GaccBench, build, content_hash, data_hash, write_hub_folder
from gacc_hf.data.card import SAMPLE_CARD
from gacc_hf.data.loading import find_spec_problems
from gacc_hf.data.schema import JUDGE_FEATURES, PUBLIC_FEATURES, SAMPLE_PATH, DataValidationError
from tests.helpers.data import SHIPPED_FOLDER, hf_cache, sample_rows, write_jsonl

pytestmark = pytest.mark.usefixtures("hf_cache")
_ = hf_cache  # the fixture, imported for pytest
REBUILD = "out of sync with gacc_hf/data/sample/sample.jsonl: run `python dataset_scripts/gacc_bench/build.py`"


def _public(rows):
    return [{k: v for k, v in r.items() if k != "gold"} for r in rows]


def test_builder_has_the_two_configs_with_list_features():
    assert [c.name for c in GaccBench.BUILDER_CONFIGS] == ["public", "judge"]
    assert isinstance(JUDGE_FEATURES["questions"], datasets.List)
    assert isinstance(JUDGE_FEATURES["gold"], datasets.List)
    assert "gold" not in PUBLIC_FEATURES


def test_builder_used_directly_builds_both_views(tmp_path):
    for config, features, rows in (("judge", JUDGE_FEATURES, sample_rows()), ("public", PUBLIC_FEATURES, None)):
        builder = GaccBench(config_name=config, data_files=str(SAMPLE_PATH), cache_dir=str(tmp_path / "c"))
        builder.download_and_prepare()
        ds = builder.as_dataset(split="test")
        assert ds.features == features
        assert ds.to_list() == (rows or _public(sample_rows()))
        assert builder.hash == content_hash({"test": [SAMPLE_PATH]})


def test_splits_are_those_the_data_defines(tmp_path):
    rows = sample_rows()
    files = {
        "train": [write_jsonl(tmp_path / "a.jsonl", rows[:5]), write_jsonl(tmp_path / "b.jsonl", rows[5:9])],
        "validation": [write_jsonl(tmp_path / "c.jsonl", rows[9:12])],
    }
    built = build(files, "judge", cache_dir=tmp_path / "c")
    assert {k: len(v) for k, v in built.items()} == {"train": 9, "validation": 3}


def test_the_fingerprint_follows_the_bytes_not_the_path(tmp_path):
    rows = sample_rows()[:3]
    a = write_jsonl(tmp_path / "a.jsonl", rows)
    b = write_jsonl(tmp_path / "b.jsonl", rows)
    assert content_hash({"test": [a]}) == content_hash({"test": [b]})
    write_jsonl(b, [dict(rows[0], goal="Another goal."), *rows[1:]])
    assert content_hash({"test": [a]}) != content_hash({"test": [b]})
    assert data_hash({"test": [a]}) != data_hash({"train": [a]})


def test_bad_data_writes_nothing_and_direct_use_fails_clearly(tmp_path):
    bad = write_jsonl(tmp_path / "bad.jsonl", [dict(sample_rows()[0], goal="")])
    with pytest.raises(DataValidationError, match=r"row 0 .*field 'goal': must not be empty"):
        build({"test": [bad]}, "judge", cache_dir=tmp_path / "c")
    assert not (tmp_path / "c").exists()
    with pytest.raises(DataValidationError, match="field 'goal': must not be empty"):
        GaccBench(config_name="judge", data_files=str(bad), cache_dir=str(tmp_path / "d")).download_and_prepare()
    with pytest.raises(ValueError, match="GaccBench needs data_files"):
        GaccBench(config_name="judge", cache_dir=str(tmp_path / "e")).download_and_prepare()


# --- the Hub-ready folder -------------------------------------------------------------------------------


def test_a_built_folder_loads_with_load_dataset_in_both_views(tmp_path):
    folder = tmp_path / "hub"
    written = write_hub_folder({"test": [SAMPLE_PATH]}, folder)
    assert sorted(p.relative_to(folder).as_posix() for p in written) == [
        "README.md",
        "judge/test-00000-of-00001.parquet",
        "public/test-00000-of-00001.parquet",
    ]
    public = datasets.load_dataset(str(folder), "public", split="test", cache_dir=str(tmp_path / "c"))
    judge = datasets.load_dataset(str(folder), "judge", split="test", cache_dir=str(tmp_path / "c"))
    default = datasets.load_dataset(str(folder), split="test", cache_dir=str(tmp_path / "c"))
    assert public.features == PUBLIC_FEATURES and public.to_list() == _public(sample_rows())
    assert judge.features == JUDGE_FEATURES and judge.to_list() == sample_rows()
    assert "gold" not in default.column_names  # the default config is the safe one


def test_a_rebuild_drops_shards_it_no_longer_writes(tmp_path):
    rows = sample_rows()
    folder = tmp_path / "hub"
    write_hub_folder({"train": [write_jsonl(tmp_path / "x.jsonl", rows[:5])]}, folder)
    write_hub_folder({"test": [write_jsonl(tmp_path / "y.jsonl", rows[5:])]}, folder)
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.parquet")) == [
        "judge/test-00000-of-00001.parquet",
        "public/test-00000-of-00001.parquet",
    ]


def test_the_shipped_folder_is_in_sync_with_the_sample(tmp_path):
    fresh = tmp_path / "fresh"
    write_hub_folder({"test": [SAMPLE_PATH]}, fresh, **SAMPLE_CARD)
    shipped = (SHIPPED_FOLDER / "README.md").read_text(encoding="utf-8")
    assert shipped == (fresh / "README.md").read_text(encoding="utf-8"), REBUILD
    for config, rows in (("judge", sample_rows()), ("public", _public(sample_rows()))):
        table = pq.read_table(SHIPPED_FOLDER / config / "test-00000-of-00001.parquet")
        assert table.to_pylist() == rows, REBUILD
        features = json.loads(table.schema.metadata[b"huggingface"])["info"]["features"]
        assert datasets.Features.from_dict(features) == (JUDGE_FEATURES if config == "judge" else PUBLIC_FEATURES)
    assert find_spec_problems(SHIPPED_FOLDER) == []


# --- the data CLI ----------------------------------------------------------------------------------------


def test_gacc_data_build_reproduces_the_shipped_folder(tmp_path, capsys):
    assert main(["data", "build", "sample", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out.split()
    assert [p.rsplit("/", 1)[-1] for p in printed[-2:]] == ["README.md", "eval.yaml"]
    for name in ("README.md", "eval.yaml"):
        assert (tmp_path / "out" / name).read_text() == (SHIPPED_FOLDER / name).read_text()


def test_the_folder_script_rebuilds_the_shipped_folder_byte_for_byte(tmp_path):
    script = SHIPPED_FOLDER / "build.py"
    done = subprocess.run(
        [sys.executable, str(script), "--output", str(tmp_path / "out")], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    shipped = {p.relative_to(SHIPPED_FOLDER).as_posix() for p in SHIPPED_FOLDER.rglob("*") if p.is_file()}
    built = {p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert built == shipped - {"build.py"}
    for name in built:
        assert (tmp_path / "out" / name).read_bytes() == (SHIPPED_FOLDER / name).read_bytes(), (name, REBUILD)


def test_the_folder_script_plans_a_push_offline(tmp_path):
    script = SHIPPED_FOLDER / "build.py"
    args = [sys.executable, str(script), "--output", str(tmp_path / "out"), "--push", "someone/gacc-bench", "--dry-run"]
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "someone/gacc-bench" in done.stdout and "judge/test-00000-of-00001.parquet" in done.stdout


def test_gacc_data_build_of_bad_data_writes_nothing(tmp_path, capsys):
    bad = write_jsonl(tmp_path / "bad.jsonl", [dict(sample_rows()[0], questions=[])])
    assert main(["data", "build", str(bad), str(tmp_path / "out")]) == 2
    assert "field 'questions': must be a non-empty list" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_gacc_data_build_card_options(tmp_path):
    src = write_jsonl(tmp_path / "mine.jsonl", sample_rows()[:4])
    args = ["--pretty-name", "My GACC", "--license", "cc-by-4.0", "--repo-id", "me/my-gacc"]
    assert main(["data", "build", str(src), str(tmp_path / "out"), *args]) == 0
    card = (tmp_path / "out" / "README.md").read_text()
    assert "pretty_name: My GACC" in card and "license: cc-by-4.0" in card
    assert 'load_dataset("me/my-gacc", "public", split="test")' in card


def test_gacc_data_stats_prints_the_token_length_distribution(capsys):
    assert main(["data", "stats", "sample"]) == 0
    out = capsys.readouterr().out
    assert "contexts:  15 from 7 sources" in out
    assert "goals:     35 (2-3 per context)" in out
    assert "questions: 155" in out
    assert "context tokens (cl100k_base)" in out and "median" in out
    bars = [line for line in out.splitlines() if line.strip()[:1].isdigit() and "-" in line.split()[0]]
    assert sum(int(line.split()[1]) for line in bars) == 15


def test_gacc_data_validate_checks_both_views_of_a_built_folder(capsys):
    assert main(["data", "validate", str(SHIPPED_FOLDER)]) == 0
    assert capsys.readouterr().out.strip() == f"ok: no problems in {SHIPPED_FOLDER}"


def test_gacc_data_push_dry_run_prints_the_plan(capsys):
    assert main(["data", "push", str(SHIPPED_FOLDER), "someone/gacc-bench", "--dry-run"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "repo: someone/gacc-bench (dataset), 4 file(s):"
    for name in ("README.md", "eval.yaml"):  # the text files in full, the Parquet shards by size only
        shown = out.split(f"==> someone/gacc-bench:{name} <==\n", 1)[1].split("\n==> ", 1)[0]
        assert shown == (SHIPPED_FOLDER / name).read_text(encoding="utf-8")
    assert out.count("==> ") == 2
    assert [line.split()[1] for line in lines[1:5]] == [
        "README.md",
        "eval.yaml",
        "judge/test-00000-of-00001.parquet",
        "public/test-00000-of-00001.parquet",
    ]


def test_gacc_data_push_offline_refuses(monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["data", "push", str(SHIPPED_FOLDER), "someone/gacc-bench"]) == 2
    assert "cannot push to someone/gacc-bench: HF_HUB_OFFLINE is set" in capsys.readouterr().err


def test_gacc_data_push_refuses_an_unbuilt_folder(tmp_path, capsys):
    write_jsonl(tmp_path / "data.jsonl", sample_rows())
    assert main(["data", "push", str(tmp_path), "someone/gacc-bench", "--dry-run"]) == 2
    assert "run `gacc data build SRC OUT` first" in capsys.readouterr().err
