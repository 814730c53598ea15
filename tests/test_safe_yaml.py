"""Every YAML file gacc reads goes through `gacc_hf.safe_yaml`: an alias bomb, a deep or huge document and a
malformed card header are one line naming the file, exit 2, at once; what gacc itself writes reads back."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gacc_hf import errors
from gacc_hf.cli import main
from gacc_hf.safe_yaml import MAX_CHARS, MAX_DEPTH, YamlError, check_front_matter, dump_yaml, load_yaml
from tests.helpers.cli import data_file, outcome, run_args
from tests.helpers.data import SHIPPED_FOLDER
from tests.helpers.paths import ROOT

MAIN = ROOT / "docs" / "results" / "main"
PUBLISH = ["publish", str(MAIN), "--repo-id", "me/embed", "--compressor", "embed", "--dry-run"]
HUB = ["--dataset-repo", "me/gacc-bench-sample", "--split", "test"]


def bomb(top: str) -> str:
    """Nine levels of nine aliases under `top`: under 1 KB of text standing for 9**9 = 387,420,489 strings."""
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
    return "\n".join([*lines, f"{top}: *l8", ""])


def test_the_bomb_is_small_and_exponential() -> None:
    text = bomb("prices")
    assert len(text) < 1_000 and text.count("*l") == 8 * 9 + 1  # 9 aliases on each of 8 lines, and the top one


@pytest.mark.parametrize("top", ["prices", "tasks", "名字"])
def test_an_alias_bomb_is_refused_at_once_naming_the_file_and_line(top: str) -> None:
    started = time.monotonic()
    with pytest.raises(YamlError, match=r"^bomb\.yaml: line 2: YAML aliases \(\*name\) are not allowed in a x"):
        load_yaml(bomb(top), "bomb.yaml", "a x")
    assert time.monotonic() - started < 0.5


def test_anchors_alone_and_plain_documents_read_as_ever() -> None:
    assert load_yaml("a: &first 1\nb: 2\n", "f") == {"a": 1, "b": 2}  # an anchor nobody refers to is harmless
    assert load_yaml("名字: 价格\nlist: [1, 2.5]\n", "f") == {"名字": "价格", "list": [1, 2.5]}
    assert load_yaml("", "f") is None


def test_nesting_is_bounded_at_max_depth() -> None:
    deepest = "[" * MAX_DEPTH + "]" * MAX_DEPTH  # MAX_DEPTH lists inside each other: read
    value = load_yaml(deepest, "f")
    for _ in range(MAX_DEPTH - 1):
        (value,) = value  # one list inside the other, MAX_DEPTH in all, the innermost empty
    assert value == []
    with pytest.raises(YamlError, match=rf"^f: nested too deeply to read \(more than {MAX_DEPTH} levels by line 1\)"):
        load_yaml("[" + deepest + "]", "f")


def test_size_is_bounded() -> None:
    assert load_yaml("a: " + "x" * (MAX_CHARS - 3), "f") == {"a": "x" * (MAX_CHARS - 3)}  # exactly MAX_CHARS
    with pytest.raises(YamlError, match=r"^f: 4,000,001 characters, over the 4,000,000"):
        load_yaml("a: " + "x" * (MAX_CHARS - 2), "f")


def test_a_parse_error_and_a_huge_integer_name_the_file_and_line() -> None:
    with pytest.raises(YamlError, match=r"^p\.yaml: not valid YAML \(line 2, column 1: while parsing a flow"):
        load_yaml("a: [1,\n", "p.yaml")
    with pytest.raises(YamlError, match=r"^p\.yaml: line 2, key 'seed': a number of more than 4300 digits"):
        load_yaml("a: 1\nseed: " + "7" * 5000 + "\n", "p.yaml")


def test_what_gacc_writes_has_no_alias_and_reads_back() -> None:
    shared = {"id": "me/bench", "名字": "样本"}
    values = {"first": shared, "second": shared, "list": [shared, shared]}
    text = dump_yaml(values)
    assert "&" not in text and "*" not in text  # each place written out in full
    assert load_yaml(text, "f") == values


def test_a_card_header_is_checked_before_huggingface_hub_reads_it() -> None:
    assert check_front_matter("---\nlicense: mit\n---\n# 卡片\n", "c.md") == {"license": "mit"}
    assert check_front_matter("# no header\n", "c.md") == {}
    with pytest.raises(YamlError, match=r"^c\.md: malformed model card header .*: line 3: YAML aliases"):
        check_front_matter("---\na: &x [1]\nb: *x\n---\n", "c.md")
    with pytest.raises(YamlError, match=r"^c\.md: malformed model card header .*: the metadata block should be a dict"):
        check_front_matter("---\n- a list\n---\n", "c.md")


def test_a_prices_bomb_is_refused_by_run_and_dry_run_at_once(tmp_path: Path, capsys) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(bomb("prices"), encoding="utf-8")
    for extra in (["--dry-run"], []):
        started = time.monotonic()
        code, out, err = outcome(run_args(tmp_path, "--prices", str(prices), *extra), capsys)
        assert time.monotonic() - started < 5  # before any data is read: no model, no run
        assert code == errors.BAD_INPUT and out == "" and len(err.strip().splitlines()) == 1
        assert f"--prices {prices}: line 2: YAML aliases (*name) are not allowed in a prices file" in err
    assert not (tmp_path / "out").exists()


def test_an_eval_yaml_bomb_and_a_malformed_card_are_refused_by_publish(tmp_path: Path, capsys) -> None:
    eval_yaml, card = tmp_path / "eval.yaml", tmp_path / "card.md"
    eval_yaml.write_text(bomb("tasks"), encoding="utf-8")
    started = time.monotonic()
    assert main([*PUBLISH, *HUB, "--eval-yaml", str(eval_yaml)]) == errors.BAD_INPUT
    assert time.monotonic() - started < 5
    err = capsys.readouterr().err
    assert f"--eval-yaml {eval_yaml}: line 2: YAML aliases (*name) are not allowed in eval.yaml" in err
    card.write_text("---\nlicense: [mit\n---\n# 模型\n", encoding="utf-8")
    assert main([*PUBLISH, "--card", str(card)]) == errors.BAD_INPUT
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"--card {card}: malformed model card header (the YAML between the --- lines): not valid YAML (line" in err


def test_publish_reads_a_sound_eval_yaml_and_card(tmp_path: Path, capsys) -> None:
    card = tmp_path / "card.md"
    card.write_text("---\nlicense: mit\nlanguage: [en, zh]\n---\n# 模型\n", encoding="utf-8")
    argv = [*PUBLISH, *HUB, "--eval-yaml", str(SHIPPED_FOLDER / "eval.yaml"), "--card", str(card)]
    assert main(argv) == errors.OK
    assert "license: mit" in capsys.readouterr().out


def test_a_data_folder_whose_card_header_is_a_bomb_is_refused_at_once(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "数据"
    folder.mkdir()
    data_file(folder)
    (folder / "README.md").write_text(f"---\n{bomb('configs')}---\n# 数据集\n", encoding="utf-8")
    started = time.monotonic()
    assert main(["data", "validate", str(folder)]) == errors.BAD_INPUT
    assert time.monotonic() - started < 5
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "README.md: malformed dataset card header" in err
    assert "line 3: YAML aliases (*name) are not allowed in a card header" in err  # the file's line 3
    (folder / "README.md").write_text("---\nlicense: mit\n---\n# 数据集\n", encoding="utf-8")
    assert main(["data", "validate", str(folder)]) == errors.OK  # quiet: a sound header
