"""Choosing goals by id (`--goals`, `--goals-file`, `goals:` in a config, `run_benchmark(goals=)`), on English and
Chinese ids: unknown and repeated ids refused in one line, the choice recorded, fingerprinted and refused by
publishing, the chosen cells equal to a whole run's, with one process or several."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from gacc_hf.cli import main
from gacc_hf.data.fingerprint import fingerprint
from gacc_hf.data.schema import SAMPLE_FILES, validate
from gacc_hf.hub.commit import PublishError
from gacc_hf.hub.model_card import check_publishable
from gacc_hf.results.folder import read_folder
from gacc_hf.run.benchmark import run_benchmark
from gacc_hf.run.config import partial_run
from gacc_hf.run.distributed import ContextShard, Topology, merge
from gacc_hf.run.goals import GoalChoiceError, check_goal_ids, read_goals_file, select_goals

RULES = {"compressor": ["truncate", "goal-lines"], "reader": "fields", "judge": "exact", "n_bootstrap": 0}
RULES |= {"progress": False}
RULES_ARGS = ["--preset", "rules", "--no-progress", "--bootstrap", "0"]


def _zh_rows():
    """The Chinese sample with Chinese goal ids: `zh-pm-cache/g1` becomes `缓存事故/目标1`."""
    rows = [json.loads(line) for line in SAMPLE_FILES["zh"].read_text(encoding="utf-8").splitlines() if line]
    names = {"zh-pm-cache": "缓存事故", "zh-mt-launch": "发布会议", "zh-api-tracking": "接口追踪"}
    for row in rows:
        context, _, goal = row["goal_id"].partition("/")
        row["goal_id"] = f"{names.get(context, context)}/目标{goal.removeprefix('g')}"
    return rows


def _en_rows():
    return [json.loads(line) for line in SAMPLE_FILES["en"].read_text(encoding="utf-8").splitlines() if line]


def _uncached(rows):
    """The rows without whether the cache held them (the second run finds every one there)."""
    return [{k: v for k, v in row.items() if k != "cached"} for row in rows]


def test_a_goals_file_skips_blank_lines_and_comments_and_reads_chinese_ids(tmp_path):
    path = tmp_path / "goals.txt"
    text = "\ufeff# the incidents\n\n  缓存事故/目标1  \npm-db-failover/g2\n   # indented comment\n缓存事故/目标3\n"
    path.write_text(text, encoding="utf-8")
    assert read_goals_file(path) == ["缓存事故/目标1", "pm-db-failover/g2", "缓存事故/目标3"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "a\n缓存/目标1\n\n缓存/目标1\na\n",
            "goal id(s) given twice: '缓存/目标1' (lines 2 and 4), 'a' (lines 1 and 5)",
        ),
        ("# nothing but a comment\n\n", "names no goal id (one a line; # starts a comment)"),
    ],
)
def test_a_goals_file_with_a_repeated_id_or_none_is_refused_naming_the_lines(tmp_path, text, message):
    path = tmp_path / "goals.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GoalChoiceError) as caught:
        read_goals_file(path)
    assert str(caught.value) == f"--goals-file {path}: {message}"


def test_a_missing_or_non_utf8_goals_file_is_named(tmp_path):
    with pytest.raises(GoalChoiceError, match=r"--goals-file .*nope\.txt: no such file"):
        read_goals_file(tmp_path / "nope.txt")
    (tmp_path / "latin.txt").write_bytes("a\ncaf\xe9\n".encode("latin-1"))
    with pytest.raises(GoalChoiceError, match=r"latin\.txt: not UTF-8 text \(byte 5\)"):
        read_goals_file(tmp_path / "latin.txt")


def test_ids_must_be_a_list_of_non_empty_strings_each_once():
    assert check_goal_ids(("b", "a")) == ["b", "a"]
    for bad, message in [
        ("a,b", "goals must be a list of goal ids, got str"),
        ([], "goals names no goal id; give at least one"),
        (["a", " "], "goals: a goal id is a non-empty string, got ' '"),
        (["目标", "a", "目标"], "goals: goal id(s) given twice: '目标'; give each goal once"),
    ]:
        with pytest.raises(GoalChoiceError) as caught:
            check_goal_ids(bad)
        assert str(caught.value) == message


@pytest.mark.parametrize("rows", [_en_rows(), _zh_rows()], ids=["en", "zh"])
def test_chosen_goals_keep_the_datas_order_and_every_unknown_id_is_named(rows):
    groups = validate(rows)
    last, first = groups[-1].goal_id, groups[0].goal_id
    kept, record = select_goals(groups, [last, first])
    assert [g.goal_id for g in kept] == [first, last]  # the data's order, not the order given
    assert record == {"ids": [last, first], "groups": 2, "of": len(rows)}
    typo = first.replace("/", "")  # one character off the first id
    with pytest.raises(GoalChoiceError) as caught:
        select_goals(groups, [first, typo, "不存在", "nope"])
    assert str(caught.value) == (
        f"goals: 3 goal id(s) not in the data: {typo!r}, '不存在', 'nope' (did you mean {first!r}?); the data has "
        f"{len(rows)} goals (their ids are its goal_id column)"
    )


def test_a_thousand_unknown_ids_make_one_bounded_line():
    groups = validate(_zh_rows())
    with pytest.raises(GoalChoiceError) as caught:
        select_goals(groups, [f"目标{i}" for i in range(1000)])
    message = str(caught.value)
    assert message.startswith("goals: 1000 goal id(s) not in the data: '目标0', '目标1', ")
    assert "'目标9' and 990 more" in message and "目标10'" not in message and "\n" not in message


@pytest.mark.parametrize("rows", [_en_rows(), _zh_rows()], ids=["en", "zh"])
def test_a_run_on_chosen_goals_holds_the_whole_runs_rows_for_them(rows, tmp_path):
    whole = run_benchmark(rows, cache_dir=str(tmp_path / "c"), **RULES)
    groups = validate(rows)
    shared = [g.goal_id for g in groups if sum(h.context_id == g.context_id for h in groups) > 1]
    chosen = [shared[0], rows[-1]["goal_id"]]  # a goal whose context has others: its cross goal is one of them
    part = run_benchmark(rows, cache_dir=str(tmp_path / "c"), goals=chosen, **RULES)
    assert part.calls == {"compressor": 0, "reader": 0, "judge": 0}  # every memory and answer is the whole run's
    assert _uncached(part.memories) == _uncached(m for m in whole.memories if m["goal_id"] in chosen)
    assert _uncached(part.answers) == _uncached(a for a in whole.answers if a["goal_id"] in chosen)
    assert part.config["goals"] == {"ids": chosen, "groups": 2, "of": len(rows)}
    assert part.config["n_groups"] == 2 and whole.config["goals"] is None
    subset = [r for r in rows if r["goal_id"] in chosen]
    assert part.config["data"]["fingerprint"] == fingerprint(validate(subset)) != whole.config["data"]["fingerprint"]
    assert partial_run(part.config) == f"a partial run (goals chosen by id: 2 of {len(rows)} goals)"


def test_choosing_every_goal_is_the_whole_run(tmp_path):
    rows = _zh_rows()
    whole = run_benchmark(rows, **RULES)
    every = run_benchmark(rows, goals=[r["goal_id"] for r in reversed(rows)], **RULES)
    assert partial_run(every.config) is None and every.answers == whole.answers
    assert every.config["data"]["fingerprint"] == whole.config["data"]["fingerprint"]


def test_goals_are_chosen_before_the_limit(tmp_path):
    rows = _en_rows()
    chosen = [r["goal_id"] for r in rows[-3:]]
    result = run_benchmark(rows, goals=chosen, limit=2, conditions=["own"], **RULES)
    assert sorted({a["goal_id"] for a in result.answers}) == sorted(chosen[:2])
    assert result.config["limit"] == {"value": 2, "groups": 2, "of": 3}


def test_shards_of_a_choice_merge_to_the_one_process_run(tmp_path):
    rows = _zh_rows() + _en_rows()
    chosen = [rows[0]["goal_id"], rows[5]["goal_id"], rows[-1]["goal_id"], rows[-7]["goal_id"]]
    one = run_benchmark(rows, goals=chosen, cache_dir=str(tmp_path / "one"), **RULES)
    parts, order = [], None
    for rank in range(2):
        shard = ContextShard(Topology(rank, 2))
        parts.append(run_benchmark(rows, goals=chosen, cache_dir=str(tmp_path / "two"), shard=shard, **RULES))
        order = shard.goal_order
    merged = merge(parts, order)
    assert merged.answers == one.answers and merged.memories == one.memories
    assert merged.config["goals"] == one.config["goals"]


def test_publishing_refuses_a_run_on_some_goals_like_a_limited_one(tmp_path):
    rows = _en_rows()
    result = run_benchmark(rows, goals=[rows[0]["goal_id"]], **RULES)
    folder = read_folder(result.save(tmp_path / "run").parent)
    with pytest.raises(PublishError, match=r"the run is a partial run \(goals chosen by id: 1 of 35 goals\)"):
        check_publishable(folder)
    assert "partial run (goals chosen by id: 1 of 35 goals)" in (tmp_path / "run" / "report.md").read_text()


def test_the_cli_runs_chosen_goals_records_them_and_reruns_them_from_config_yaml(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "zh.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _zh_rows()), encoding="utf-8")
    (tmp_path / "goals.txt").write_text("# two incidents\n缓存事故/目标2\n\n接口追踪/目标1\n", encoding="utf-8")
    args = ["run", *RULES_ARGS, "--data", str(data), "--cache-dir", "c"]
    assert main([*args, "--goals-file", "goals.txt", "--output-dir", "a"]) == 0
    config = yaml.safe_load((tmp_path / "a" / "config.yaml").read_text(encoding="utf-8"))
    assert config["goals"] == ["缓存事故/目标2", "接口追踪/目标1"]
    recorded = json.loads((tmp_path / "a" / "results.json").read_text(encoding="utf-8"))["config"]["goals"]
    assert recorded == {"ids": ["缓存事故/目标2", "接口追踪/目标1"], "groups": 2, "of": 18}
    capsys.readouterr()
    assert main(["run", "--config", "a/config.yaml", "--output-dir", "b", "--no-progress"]) == 0
    assert "calls: {'compressor': 0, 'reader': 0, 'judge': 0}" in capsys.readouterr().out
    assert main([*args, "--goals", "缓存事故/目标2,接口追踪/目标1", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "note: a partial run (goals chosen by id: 2 of 18 goals)" in out and "calls to make: 0" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--goals", "缓存事故/目标2,缺失/目标9,nope"], "goals: 2 goal id(s) not in the data: '缺失/目标9', 'nope'"),
        (["--goals", "缓存事故/目标2,缓存事故/目标2"], "--goals: goal id(s) given twice: '缓存事故/目标2'"),
        (["--goals", " , "], "--goals names no goal id; give at least one"),
        (["--goals", "a", "--goals-file", "g.txt"], "argument --goals-file: not allowed with argument --goals"),
    ],
)
def test_the_cli_refuses_a_bad_choice_with_exit_2_before_any_call(tmp_path, monkeypatch, capsys, extra, message):
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "zh.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _zh_rows()), encoding="utf-8")
    for dry in ([], ["--dry-run"]):
        try:
            code = main(["run", *RULES_ARGS, "--data", str(data), "--cache-dir", "c", *extra, *dry])
        except SystemExit as exc:  # argparse's own refusal
            code = exc.code
        assert code == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "c").exists() and not (tmp_path / "runs").exists()


def test_a_config_files_goals_are_checked_and_the_command_line_overrides_them(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.yaml").write_text("preset: rules\ndata: sample:zh\ngoals: [zh-pm-cache/g1, zh-pm-cache/g1]\n")
    assert main(["run", "--config", "run.yaml", "--dry-run"]) == 2
    assert "run.yaml: goals: goal id(s) given twice: 'zh-pm-cache/g1'" in capsys.readouterr().err
    (tmp_path / "run.yaml").write_text("preset: rules\ndata: sample:zh\ngoals: [zh-pm-cache/g1]\n")
    assert main(["run", "--config", "run.yaml", "--dry-run", "--format", "json"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert main(["run", "--config", "run.yaml", "--goals", "zh-pm-cache/g1,zh-pm-cache/g2", "--dry-run",
                 "--format", "json"]) == 0  # fmt: skip
    two = json.loads(capsys.readouterr().out)
    reader = [n["calls"] for plan in (one, two) for n in plan["needs"] if n["role"] == "reader"]
    assert reader[1] == 2 * reader[0]  # zh-pm-cache/g1 and /g2 have as many questions (5 each)


def test_two_processes_run_the_goals_a_file_chooses_as_one_does(tmp_path):
    data = tmp_path / "zh.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _zh_rows()), encoding="utf-8")
    (tmp_path / "goals.txt").write_text(
        "# 三个目标\n缓存事故/目标2\n接口追踪/目标1\n发布会议/目标3\n", encoding="utf-8"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}
    args = [sys.executable, "-m", "gacc_hf", "run", *RULES_ARGS, "--data", str(data), "--goals-file", "goals.txt"]
    answers = {}
    for processes in ("1", "2"):
        out = f"out{processes}"
        command = [*args, "--num-processes", processes, "--cache-dir", f"c{processes}", "--output-dir", out]
        proc = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert ("calls per process: 0: " in proc.stdout) == (processes == "2")  # two ranks did the work
        doc = json.loads((tmp_path / out / "results.json").read_text(encoding="utf-8"))
        assert doc["config"]["goals"] == {
            "ids": ["缓存事故/目标2", "接口追踪/目标1", "发布会议/目标3"],
            "groups": 3,
            "of": 18,
        }
        answers[processes] = (doc["scores"], doc["config"]["data"]["fingerprint"])
    assert answers["1"] == answers["2"]
