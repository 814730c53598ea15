"""`gacc data push` names what it would leave out: a built folder without its eval.yaml is refused unless
`--no-eval-yaml` says the dataset is to be no Benchmark; the repo id is checked in a dry run too."""

from __future__ import annotations

import shutil

from gacc_hf.cli import main
from tests.helpers.data import SHIPPED_FOLDER

PARQUET = ["judge/test-00000-of-00001.parquet", "public/test-00000-of-00001.parquet"]


def _built(tmp_path, eval_yaml=True):
    folder = shutil.copytree(SHIPPED_FOLDER, tmp_path / "built")
    if not eval_yaml:
        (folder / "eval.yaml").unlink()
    return folder


def _planned(out):
    return [line.split()[1] for line in out.splitlines() if line.startswith("  + ")]


def test_a_built_folder_whose_eval_yaml_was_deleted_is_refused(tmp_path, capsys):
    folder = _built(tmp_path, eval_yaml=False)
    assert main(["data", "push", str(folder), "me/bench", "--dry-run"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1
    assert f"{folder} has no eval.yaml, the file `gacc data build` writes that makes the dataset a Benchmark" in err
    assert "pass --no-eval-yaml to push the data without it" in err


def test_no_eval_yaml_pushes_the_data_alone_and_says_so(tmp_path, capsys):
    for eval_yaml in (False, True):  # deleted, or there and left out
        folder = _built(tmp_path / str(eval_yaml), eval_yaml=eval_yaml)
        assert main(["data", "push", str(folder), "me/bench", "--dry-run", "--no-eval-yaml"]) == 0
        out = capsys.readouterr().out
        assert out.startswith("(--no-eval-yaml: eval.yaml is not pushed; the dataset is no Benchmark)\n")
        assert _planned(out) == ["README.md", *PARQUET] and "eval.yaml <==" not in out


def test_a_built_folder_with_its_eval_yaml_pushes_it(tmp_path, capsys):
    assert main(["data", "push", str(_built(tmp_path)), "me/bench", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert _planned(out) == ["README.md", "eval.yaml", *PARQUET] and "no Benchmark" not in out


def test_a_repo_id_the_hub_would_refuse_is_refused_in_a_dry_run(capsys):
    assert main(["data", "push", str(SHIPPED_FOLDER), "my bench", "--dry-run"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "repo id 'my bench': not a Hub repo id (Repo id must use alphanumeric chars" in err
    assert main(["data", "push", str(SHIPPED_FOLDER), "bench", "--dry-run"]) == 2
    assert "repo id 'bench': a dataset is named OWNER/NAME" in capsys.readouterr().err


def _framework(folder, name):
    path = folder / "eval.yaml"
    path.write_text(
        path.read_text(encoding="utf-8").replace("framework: gacc-hf", f"framework: {name}"), encoding="utf-8"
    )
    return path


def test_a_framework_the_hub_does_not_list_is_said_in_one_line_before_the_push(tmp_path, capsys):
    folder = _built(tmp_path)
    assert main(["data", "push", str(folder), "me/bench", "--dry-run"]) == 0
    warning = capsys.readouterr().err.strip().splitlines()
    assert len(warning) == 1 and warning[0].startswith(
        f"warning: {folder / 'eval.yaml'}: evaluation_framework 'gacc-hf' is not in the Hub's list of framework names"
    )
    assert "a pull request to huggingface.js adds 'gacc-hf'" in warning[0] and "--no-eval-yaml" in warning[0]
    _framework(folder, "inspect-ai")  # a listed name: quiet
    assert main(["data", "push", str(folder), "me/bench", "--dry-run"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["data", "push", str(folder), "me/bench", "--dry-run", "--no-eval-yaml"]) == 0
    assert capsys.readouterr().err == ""  # not pushed, so not read


def test_a_malformed_eval_yaml_is_refused_by_push_naming_the_file_and_field(tmp_path, capsys):
    folder = _built(tmp_path)
    path = _framework(folder, "gacc-hf\nlicense: mit")
    assert main(["data", "push", str(folder), "me/bench", "--dry-run"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip().splitlines() == [
        f"gacc data: error: {path}: unknown field(s) license; the spec names name, description, "
        "evaluation_framework, tasks"
    ]
