"""`config.yaml` reruns what it can and says what it cannot: an in-memory run's rows are written beside it (English
and Chinese rows, mapped from another layout), a module's function is named `import:module:attr`, and a callable
no name reaches makes the header and `gacc run --config` say, in one line, that the file cannot rerun the run."""

from __future__ import annotations

import json

import datasets
import pytest

from gacc_hf.cli import main
from gacc_hf.data.jsonl import read_rows
from gacc_hf.protocol import CompressorInput
from tests.helpers.data import flat_rows, hf_cache
from tests.helpers.runs import rules_run

pytestmark = pytest.mark.usefixtures("hf_cache")
_ = hf_cache  # the fixture, imported for pytest
NAMES = {"context": "text", "question": "query"}
SETTINGS = {"ratios": (0.5,), "conditions": ("own",), "n_bootstrap": 0}


def head_lines(item: CompressorInput) -> str:
    """A module's own function: `import:tests.results.test_rerun:head_lines` reaches it."""
    return "\n".join(item.context.splitlines()[:1])


def _flat_dataset() -> datasets.Dataset:
    rows = [{**r, "references": r["references"] if isinstance(r["references"], list) else [r["references"]]}
            for r in flat_rows(**NAMES)]  # fmt: skip
    return datasets.Dataset.from_list(rows)


def test_an_in_memory_run_saves_its_rows_and_names_its_function_so_the_config_reruns_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    result = rules_run(_flat_dataset(), columns=NAMES, compressor=head_lines, cache_dir="cache", **SETTINGS)
    result.save("runs/mine")
    text = (tmp_path / "runs/mine/config.yaml").read_text(encoding="utf-8")
    assert text.startswith("# The resolved run: `gacc run --config <this file>` runs it again")
    assert "data: runs/mine/data.jsonl\n" in text and "columns: null" in text  # the rows are in the own layout
    assert "- import:tests.results.test_rerun:head_lines\n" in text
    rows = read_rows(tmp_path / "runs/mine/data.jsonl")
    assert [r["goal_id"] for r in rows] == ["en-1/g1", "zh-1/g1"]
    assert rows[1]["questions"][0] == {"question_id": "q3", "question": "新工牌在哪里领取？"}
    assert main(["run", "--config", "runs/mine/config.yaml", "--output-dir", "runs/again", "--no-progress"]) == 0
    capsys.readouterr()
    again = json.loads((tmp_path / "runs/again/results.json").read_text(encoding="utf-8"))
    assert again["calls"] == {"compressor": 0, "reader": 0, "judge": 0}  # the same run, from the cache
    assert again["config"]["data"]["fingerprint"] == result.config["data"]["fingerprint"]


def test_a_spec_run_writes_no_rows(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rules_run("synthetic:contexts=1", compressor="truncate", **SETTINGS).save("runs/spec")
    assert not (tmp_path / "runs/spec/data.jsonl").exists()
    assert "data: synthetic:contexts=1\n" in (tmp_path / "runs/spec/config.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize("kind", ["lambda", "nested"])
def test_the_config_of_a_run_no_name_reaches_says_so_and_gacc_run_refuses_it(kind, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)

    def nested(item: CompressorInput) -> str:
        return item.context[:40]

    method = (lambda item: item.context[:40]) if kind == "lambda" else nested
    result = rules_run(_flat_dataset(), columns=NAMES, compressor=["truncate", method], **SETTINGS)
    result.save("runs/mine")
    name = f"{nested.__qualname__.removesuffix('nested')}{'<lambda>' if kind == 'lambda' else 'nested'}"
    header = (tmp_path / "runs/mine/config.yaml").read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith(f"# This file cannot rerun the run: its compressor <callable {name}> is a Python callable")
    assert main(["run", "--config", "runs/mine/config.yaml", "--output-dir", "runs/again"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and not (tmp_path / "runs/again").exists()
    assert f"runs/mine/config.yaml: cannot rerun the run: its compressor <callable {name}> is a Python callable" in err
    assert "give --compressors, or rerun it from Python" in err
    given = ["--compressors", "truncate", "--output-dir", "runs/given", "--no-progress"]
    assert main(["run", "--config", "runs/mine/config.yaml", *given]) == 0  # the option replaces it: the rest reruns
