"""`--reader a,b` and `--judge x,y` on the command line and in config files; publishing and comparing by setting."""

from __future__ import annotations

import json

from tests.helpers.cli import outcome, run_args


def _results(tmp_path, name="out"):
    return json.loads((tmp_path / name / "results.json").read_text(encoding="utf-8"))


def test_several_judges_on_the_command_line_judge_every_answer_once_each(tmp_path, capsys):
    code, out, err = outcome(run_args(tmp_path, "--judge", "exact,contains,f1"), capsys)
    assert code == 0, err
    doc = _results(tmp_path)
    # ROWS: 2 goals of 2 questions; truncate, own, one ratio: 2 memories, 4 answers, each judged by 3 judges
    assert doc["calls"] == {"compressor": 2, "reader": 4, "judge": 12}
    assert [j["name"] for j in doc["config"]["judge"]] == ["exact", "contains", "f1"]
    assert doc["config"]["methods"]["judge"] == ["exact", "contains", "f1"]
    assert doc["config"]["reader"]["name"] == "fields"  # one reader is recorded as itself
    assert {(s["reader"], s["judge"]) for s in doc["scores"]} == {("fields", j) for j in ("exact", "contains", "f1")}
    head = out.splitlines()[0].split()
    assert head[:3] == ["reader", "judge", "compressor"]
    config = (tmp_path / "out" / "config.yaml").read_text(encoding="utf-8")
    assert "judge:\n- exact\n- contains\n- f1\n" in config and "reader: fields\n" in config


def test_one_judge_keeps_todays_table_and_config(tmp_path, capsys):
    code, out, err = outcome(run_args(tmp_path), capsys)
    assert code == 0, err
    assert out.splitlines()[0].split()[0] == "compressor"
    assert "judge: exact\n" in (tmp_path / "out" / "config.yaml").read_text(encoding="utf-8")
    assert _results(tmp_path)["config"]["judge"]["name"] == "exact"


def test_a_judge_named_twice_is_refused_with_exit_2_in_one_line(tmp_path, capsys):
    code, _, err = outcome(run_args(tmp_path, "--judge", "exact,contains,exact"), capsys)
    assert code == 2 and err.strip().count("\n") == 0
    assert "--judge names exact twice" in err and not (tmp_path / "out").exists()
    code, _, err = outcome(run_args(tmp_path, "--reader", "fields,"), capsys)
    assert code == 2 and "--reader is empty or names an empty method" in err


def test_a_config_file_takes_lists_of_readers_and_judges(tmp_path, capsys):
    config = tmp_path / "run.yaml"
    config.write_text("judge: [exact, contains]\n", encoding="utf-8")
    args = [a for a in run_args(tmp_path) if a not in ("--judge", "exact")]
    code, _, err = outcome([*args, "--config", str(config)], capsys)
    assert code == 0, err
    assert _results(tmp_path)["calls"] == {"compressor": 2, "reader": 4, "judge": 8}
    config.write_text("judge: []\n", encoding="utf-8")
    code, _, err = outcome([*args, "--config", str(config), "--output-dir", str(tmp_path / "other")], capsys)
    assert code == 2 and "judge must be a string or a non-empty list of strings" in err


def test_publish_chooses_one_setting_and_refuses_to_mix_them(tmp_path, capsys):
    code, _, err = outcome(run_args(tmp_path, "--data", "synthetic", "--judge", "exact,contains"), capsys)
    assert code == 0, err
    publish = ["publish", str(tmp_path / "out"), "--repo-id", "me/model", "--dry-run"]
    code, out, err = outcome(publish, capsys)
    assert code == 2 and err.strip().count("\n") == 0
    assert "2 (reader, judge) settings (reader fields, judge exact; reader fields, judge contains)" in err
    code, out, err = outcome([*publish, "--judge", "contains"], capsys)
    assert code == 0, err
    assert "judge: contains@" in out and "judge: exact@" not in out
    code, out, err = outcome([*publish, "--judge", "contains", "--space", "me/page"], capsys)
    assert code == 2 and "a run of several (reader, judge) settings holds them all" in err
    code, out, err = outcome([*publish, "--judge", "f1"], capsys)
    assert code == 2 and "no setting with judge f1" in err


def test_compare_pairs_the_settings_both_runs_have(tmp_path, capsys):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    assert outcome(run_args(tmp_path / "a", "--judge", "exact,contains"), capsys)[0] == 0
    assert outcome(run_args(tmp_path / "b", "--compressors", "goal-lines"), capsys)[0] == 0
    code, out, err = outcome(["compare", str(tmp_path / "a" / "out"), str(tmp_path / "b" / "out")], capsys)
    assert code == 0, err
    assert out.count("== reader") == 1 and "== reader fields, judge exact ==" in out
    assert "skipped 1 setting(s) not in both runs: reader fields, judge contains" in out
    code, out, err = outcome(["compare", str(tmp_path / "a" / "out"), "--a", "truncate", "--b", "truncate"], capsys)
    assert code == 0, err
    assert "== reader fields, judge exact ==" in out and "== reader fields, judge contains ==" in out
