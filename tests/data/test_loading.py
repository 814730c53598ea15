"""`load_any`: every kind of spec, both views, split choice, clear errors, and no stale cache after an edit."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import datasets
import pytest

from gacc_hf.cli import main
from gacc_hf.data.loading import data_files, find_spec_problems, load_any
from gacc_hf.data.schema import DataSourceError, DataValidationError
from gacc_hf.online import OfflineError
from tests.helpers.data import SHIPPED_FOLDER, hf_cache, sample_rows, write_jsonl, write_parquet
from tests.helpers.runs import rules_run

pytestmark = pytest.mark.usefixtures("hf_cache")
_ = hf_cache  # the fixture, imported for pytest


def _public(rows):
    return [{k: v for k, v in r.items() if k != "gold"} for r in rows]


def _specs(tmp_path: Path) -> dict[str, str]:
    rows = sample_rows()
    judge = datasets.Dataset.from_list(rows)
    judge.save_to_disk(str(tmp_path / "saved"))
    datasets.DatasetDict({"test": judge}).save_to_disk(str(tmp_path / "saved-dict"))
    write_jsonl(tmp_path / "folder" / "part-a.jsonl", rows[:20])
    write_parquet(tmp_path / "folder" / "more" / "part-b.parquet", rows[20:])
    return {
        "sample": "sample",
        "jsonl": str(write_jsonl(tmp_path / "data.jsonl", rows)),
        "parquet": str(write_parquet(tmp_path / "data.parquet", rows)),
        "folder": str(tmp_path / "folder"),
        "built folder": str(SHIPPED_FOLDER),
        "save_to_disk": str(tmp_path / "saved"),
        "save_to_disk dict": str(tmp_path / "saved-dict"),
    }


def test_every_local_spec_gives_the_same_rows_in_both_views(tmp_path):
    rows = sample_rows()
    for kind, spec in _specs(tmp_path).items():
        judge = load_any(spec)
        public = load_any(spec, "public")
        key = lambda r: r["goal_id"]  # noqa: E731  (a folder's files come in path order)
        assert sorted(judge.to_list(), key=key) == sorted(rows, key=key), kind
        assert "gold" not in public.column_names, kind
        assert sorted(public.to_list(), key=key) == sorted(_public(rows), key=key), kind


def test_a_path_object_works_and_the_runner_takes_a_spec(tmp_path):
    path = write_jsonl(tmp_path / "data.jsonl", sample_rows()[:4])
    assert len(load_any(Path(path))) == 4
    result = rules_run(path, ratios=(0.5,), conditions=("own",), n_bootstrap=0, compressor="goal-lines")
    assert result.config["n_groups"] == 4
    assert result.integrity == {"budget_violations": 0, "count_errors": 0, "exposures": 0}


def test_gacc_run_takes_a_built_folder(tmp_path, capsys):
    args = ["run", "--data", str(SHIPPED_FOLDER), "--ratios", "0.2", "--conditions", "own", "--bootstrap", "0"]
    args += ["--compressors", "truncate,goal-lines", "--reader", "fields", "--judge", "exact"]  # no model
    out = tmp_path / "out"
    assert main([*args, "--cache-dir", str(tmp_path / "c"), "--output-dir", str(out), "--no-progress"]) == 0
    assert "own" in capsys.readouterr().out and (out / "results.json").exists()


def test_splits_follow_the_file_names(tmp_path):
    rows = sample_rows()
    write_jsonl(tmp_path / "d" / "train.jsonl", rows[:10])
    write_jsonl(tmp_path / "d" / "test.jsonl", rows[10:])
    files, held = data_files(tmp_path / "d")
    assert held == "judge" and sorted(files) == ["test", "train"]
    assert len(load_any(tmp_path / "d", split="train")) == 10
    assert len(load_any(tmp_path / "d", split="test")) == 25
    with pytest.raises(DataSourceError, match=r"has the splits \['test', 'train'\]; choose one"):
        load_any(tmp_path / "d")
    with pytest.raises(DataSourceError, match="has no split 'dev'"):
        load_any(tmp_path / "d", split="dev")


def test_ids_must_be_unique_across_splits(tmp_path):
    rows = sample_rows()
    write_jsonl(tmp_path / "d" / "train.jsonl", rows[:10])
    write_jsonl(tmp_path / "d" / "test.jsonl", rows[9:])
    with pytest.raises(DataValidationError, match=r"duplicate goal_id, first seen in .*train\.jsonl row 9"):
        load_any(tmp_path / "d", split="test")


def test_synthetic_spec_takes_its_arguments():
    a, b = load_any("synthetic:contexts=3,seed=1"), load_any("synthetic: seed=2 , contexts=3")
    assert len({r["context_id"] for r in a}) == 3 and len(a) == 3 * 3  # 3 goals per context by default
    assert a["context"] != b["context"]
    assert load_any("synthetic:contexts=3,seed=1")["context"] == a["context"]
    assert len(load_any("synthetic:contexts=2,goals_per_context=1,questions_per_goal=5")[0]["questions"]) == 5
    assert len({r["context_id"] for r in load_any("synthetic")}) == 10  # gacc_hf.synthetic()'s default
    assert "gold" not in load_any("synthetic:contexts=2", "public").column_names


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("synthetic:context=3", "synthetic has no argument 'context'; its arguments are contexts, goals_per_context"),
        ("synthetic:contexts=three", r"contexts needs an integer value \(contexts=N\)"),
        ("synthetic:seed", r"seed needs an integer value"),
        ("synthetic:seed=1,seed=2", "seed is given twice"),
        ("synthetic:contexts=0", "contexts must be >= 1, got 0"),
        ("sample:seed=1", "the sample's languages are en, zh, all"),
        ("sample:fr", "the sample's languages are en, zh, all"),
    ],
)
def test_bad_generated_data_specs_are_named(spec, message):
    with pytest.raises(DataSourceError, match=f"data spec '{re.escape(spec)}': {message}"):
        load_any(spec)


def test_hub_repo_id_offline_fails_with_a_clear_message(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(OfflineError, match="cannot load the Hub dataset 'someone/gacc-bench': HF_HUB_OFFLINE is set"):
        load_any("someone/gacc-bench")
    with pytest.raises(OfflineError):
        rules_run("someone/gacc-bench", compressor="goal-lines", ratios=(0.1, 0.2), conditions=("own", "none", "cross"))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no/such/file.jsonl", "no such file or folder"),
        ("missing.jsonl", "no such file or folder"),
        ("not a spec", "no such file or folder"),
    ],
)
def test_unknown_specs_are_clear_errors(spec, message):
    with pytest.raises(DataSourceError, match=message):
        load_any(spec)


def test_unsupported_and_empty_sources(tmp_path):
    (tmp_path / "data.xlsx").write_text("a,b\n")
    with pytest.raises(DataSourceError, match=r"unsupported file type '\.xlsx'"):
        load_any(tmp_path / "data.xlsx")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataSourceError, match="no data files"):
        load_any(tmp_path / "empty")
    with pytest.raises(ValueError, match="config must be"):
        load_any("sample", "gold")  # type: ignore[arg-type]


def test_a_built_folder_gives_only_its_public_files_to_the_public_view(tmp_path):
    files, held = data_files(SHIPPED_FOLDER, "public")
    assert held == "public"
    assert [p.as_posix().split("/")[-2:] for p in files["test"]] == [["public", "test-00000-of-00001.parquet"]]
    assert data_files(SHIPPED_FOLDER, "judge")[1] == "judge"


def test_public_files_holding_gold_are_a_leak(tmp_path):
    folder = tmp_path / "built"
    assert main(["data", "build", "sample", str(folder)]) == 0
    write_parquet(folder / "public" / "test-00000-of-00001.parquet", sample_rows())  # gold in the public view
    problems = find_spec_problems(folder)
    assert {p.field for p in problems} == {"gold"} and len(problems) == 35
    assert all("public" in (p.file or "") for p in problems)


# --- no stale cache ------------------------------------------------------------------------------------


def _edit_keeping_mtime(path: Path, write) -> None:
    """Rewrite a file but give it back its old modification time: only the content tells the change."""
    stat = path.stat()
    write()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_editing_a_file_and_loading_again_returns_the_new_rows(fmt, tmp_path, hf_cache):
    rows = sample_rows()[:6]
    write = write_jsonl if fmt == "jsonl" else write_parquet
    path = write(tmp_path / f"data.{fmt}", rows)
    first = load_any(path)
    assert first[0]["goal"] == rows[0]["goal"]
    assert len(load_any(path)) == 6  # a second load reuses the cache ...
    edited = [dict(rows[0], goal="A goal that was just edited."), *rows[1:5]]
    _edit_keeping_mtime(path, lambda: write(path, edited))
    again = load_any(path)  # ... an edit does not
    assert again[0]["goal"] == "A goal that was just edited."
    assert len(again) == 5
    assert hf_cache.exists()


def test_editing_a_saved_dataset_and_loading_again_returns_the_new_rows(tmp_path):
    rows = sample_rows()[:4]
    folder = tmp_path / "saved"
    datasets.Dataset.from_list(rows).save_to_disk(str(folder))
    assert load_any(folder)[0]["goal"] == rows[0]["goal"]
    shutil.rmtree(folder)
    datasets.Dataset.from_list([dict(rows[0], goal="Changed."), *rows[1:]]).save_to_disk(str(folder))
    assert load_any(folder)[0]["goal"] == "Changed."


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ("configs: [judge", "while parsing a flow sequence"),
        ("- a list, not a mapping", "metadata block should be a dict"),
        ("configs: 5", "Expected configs to be a list"),
    ],
)
def test_a_malformed_card_header_is_one_line_naming_the_card(header, reason, tmp_path, capsys):
    folder = tmp_path / "data"
    write_jsonl(folder / "test.jsonl", sample_rows())
    (folder / "README.md").write_text(f"---\n{header}\n---\n# 数据集\n", encoding="utf-8")
    with pytest.raises(DataSourceError, match=f"^{re.escape(str(folder / 'README.md'))}: malformed dataset card"):
        load_any(folder)
    assert main(["data", "validate", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and reason in err and "Traceback" not in err
    (folder / "README.md").write_text("---\nlicense: apache-2.0\n---\n# 数据集\n", encoding="utf-8")
    assert len(load_any(folder)) == 35  # a well-formed header without configs: the files by their names


def test_a_file_is_read_once_so_an_append_during_the_run_changes_nothing(tmp_path, monkeypatch):
    import gacc_hf.data.jsonl as jsonl
    import gacc_hf.data.loading as loading

    path = write_jsonl(tmp_path / "data.jsonl", sample_rows()[:3])
    reads: list[str] = []
    read_file, build = jsonl.read_file, loading.build

    def counted(p):
        reads.append(str(p))
        return read_file(p)

    def append_then_build(*args, **kwargs):  # a writer appends between the check and the build
        with path.open("a", encoding="utf-8") as fh:
            fh.write('{"not": "a row of the schema"}\nnot even JSON\n')
        return build(*args, **kwargs)

    monkeypatch.setattr(jsonl, "read_file", counted)
    monkeypatch.setattr("gacc_hf.data.builder.read_file", counted)
    monkeypatch.setattr(loading, "build", append_then_build)
    loaded = load_any(path)
    assert loaded["goal_id"] == [r["goal_id"] for r in sample_rows()[:3]]  # the rows as checked
    assert reads == [str(path)]
    with pytest.raises(DataValidationError, match="line 5 is not valid JSON"):
        load_any(path)  # the next run reads the appended lines, and refuses them
