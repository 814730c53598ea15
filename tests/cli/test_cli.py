import json

import pytest

from gacc_hf.cli import main
from tests.helpers.paths import ROOT


def test_run_writes_results_and_prints_table(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(
        [
            "run",
            "--data",
            "synthetic",
            "--ratios",
            "0.1,0.5",
            "--conditions",
            "own,none",
            "--compressors",
            "truncate,goal-lines",
            "--reader",
            "fields",
            "--judge",
            "exact",
            "--cache-dir",
            str(tmp_path / "c"),
            "--output-dir",
            str(out),
            "--bootstrap",
            "50",
            "--no-progress",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "goal-lines" in printed and "micro" in printed
    payload = json.loads((out / "results.json").read_text())
    assert payload["integrity"] == {"budget_violations": 0, "count_errors": 0, "exposures": 0}
    assert payload["tokenizer"]["identity_verified"] is True
    assert len(payload["scores"]) == 2 * 2 * 2
    assert payload["config"]["seed"] == 0 and payload["versions"]["tiktoken"]


def test_bad_ratio_is_a_clear_error(tmp_path, capsys):
    code = main(
        [
            "run",
            "--data",
            "synthetic",
            "--ratios",
            "1.5",
            "--cache-dir",
            str(tmp_path / "c"),
            "--output-dir",
            str(tmp_path / "o"),
            "--no-progress",
        ]
    )
    assert code == 2
    assert "ratio must be in [0, 1], got 1.5" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


RULES = ["run", "--preset", "rules", "--data", "synthetic:contexts=3", "--bootstrap", "20", "--no-progress"]


def _run(tmp_path, name, *extra):
    out = tmp_path / name
    code = main([*RULES, "--cache-dir", str(tmp_path / "cache"), "--output-dir", str(out), *extra])
    return code, out


def _results(out):
    return json.loads((out / "results.json").read_text())


def test_a_results_config_reproduces_the_run_with_no_model_call(tmp_path, capsys):
    code, first = _run(tmp_path, "first", "--limit", "5")
    assert code == 0 and all(n > 0 for n in _results(first)["calls"].values())
    again = tmp_path / "again"
    cache = ["--cache-dir", str(tmp_path / "cache")]  # a folder outside the working directory is not in the file
    again_argv = ["run", "--config", str(first / "config.yaml"), *cache, "--output-dir", str(again)]
    assert main([*again_argv, "--no-progress"]) == 0
    a, b = _results(first), _results(again)
    assert b["calls"] == {"compressor": 0, "reader": 0, "judge": 0}
    assert b["scores"] == a["scores"] and b["config"]["limit"] == a["config"]["limit"]
    assert (again / "config.yaml").read_text() == (first / "config.yaml").read_text()
    # an option given overrides the file: a new ratio is new work
    other = tmp_path / "other"
    assert main([*again_argv[:-1], str(other), "--ratios", "0.5"]) == 0
    assert _results(other)["config"]["ratios"] == [0.5] and _results(other)["calls"]["compressor"] > 0


def test_a_bad_config_file_is_named_before_any_work(tmp_path, capsys):
    path = tmp_path / "run.yaml"
    path.write_text("preset: rules\nratio: [0.1]\n")
    assert main(["run", "--config", str(path), "--output-dir", str(tmp_path / "o")]) == 2
    assert f"{path}: unknown key 'ratio' (did you mean 'ratios'?)" in capsys.readouterr().err
    path.write_text("preset: rules\nseed: '1'\n")
    assert main(["run", "--config", str(path), "--output-dir", str(tmp_path / "o")]) == 2
    assert "seed must be an integer, got str '1'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_limit_runs_the_first_groups_and_publish_refuses_a_partial_run(tmp_path, capsys):
    from gacc_hf import synthetic

    code, out = _run(tmp_path, "part", "--limit", "5")
    assert code == 0
    payload = _results(out)
    assert payload["config"]["limit"] == {"value": 5, "groups": 5, "of": 9}  # 3 contexts x 3 goals
    first_five = synthetic(contexts=3)["goal_id"][:5]
    assert sorted({r["goal_id"] for r in _memories(out)}) == sorted(first_five)
    publish = ["publish", str(out), "--repo-id", "me/model", "--compressor", "goal-lines", "--dry-run"]
    capsys.readouterr()
    assert main(publish) == 2
    assert "a partial run (limit 5: the first 5 of 9 groups)" in capsys.readouterr().err
    code, whole = _run(tmp_path, "whole", "--limit", "0.999")  # rounds up to every group: not partial
    assert code == 0 and _results(whole)["config"]["limit"]["groups"] == 9
    assert main(["publish", str(whole), *publish[2:]]) == 0


def _memories(out):
    import pyarrow.parquet as pq

    return pq.read_table(out / "memories.parquet").to_pylist()


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("0", "--limit must be a number of groups >= 1 or a fraction in (0, 1), got 0"),
        ("-1", "got -1"),
        ("2.5", "got 2.5"),
        ("x", "--limit must be a number, got 'x'"),
    ],
)
def test_a_bad_limit_is_a_usage_error(tmp_path, capsys, bad, message):
    with pytest.raises(SystemExit) as info:
        main([*RULES, "--limit", bad, "--output-dir", str(tmp_path / "o")])
    assert info.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_the_run_seed_does_not_change_the_data(tmp_path):
    runs = [_run(tmp_path, f"seed{seed}", "--seed", str(seed), "--conditions", "own")[1] for seed in (1, 2)]
    own = [{(r["goal_id"], r["ratio"]): r["memory_sha256"] for r in _memories(out)} for out in runs]
    assert own[0] == own[1] and len(own[0]) == 9 * 2


def test_list_names_every_builtin_with_its_description(capsys):
    from gacc_hf.methods import BUILTINS, PREFIXES

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for entry in [*BUILTINS, *PREFIXES]:
        name = entry.name if entry in BUILTINS else f"{entry.name}:..."
        assert any(line.split(None, 1) == [name, entry.description] for line in out.splitlines()), entry
    assert [line for line in out.splitlines() if not line.startswith(" ")] == [
        "compressors:",
        "readers:",
        "judges:",
        "presets:",
    ]
    assert main(["list", "judges"]) == 0
    judges = capsys.readouterr().out
    assert "contains" in judges and "fields" not in judges and "goal-lines" not in judges
    assert main(["list", "preset"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split()[:2] == ["main", "the"]


def test_version_is_the_package_version(capsys):
    import tomllib

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"gacc {pyproject['project']['version']}"


def test_verbosity_controls_notes_and_progress(tmp_path, capsys):
    assert _run(tmp_path, "quiet", "--limit", "2", "--verbosity", "WARNING")[0] == 0
    quiet = capsys.readouterr()
    loud_run = [*RULES[:-1], "--limit", "2", "--output-dir", str(tmp_path / "loud")]
    loud_run += ["--cache-dir", str(tmp_path / "c2")]
    assert main(["--verbosity", "info", *loud_run]) == 0  # a new cache: every role has work, so a progress bar
    loud = capsys.readouterr()
    assert "gacc: limit 2: the first 2 of 9 groups" in loud.err and "reader fields" in loud.err  # a progress bar
    assert "gacc:" not in quiet.err and "reader fields" not in quiet.err
    assert "micro" in quiet.out and "micro" in loud.out  # the results are printed at every level
    assert main(["--verbosity", "DEBUG", *RULES, "--limit", "2", "--output-dir", str(tmp_path / "d")]) == 0
    assert "gacc: resolved run: {'data': 'synthetic:contexts=3'" in capsys.readouterr().err
    main(["--verbosity", "INFO", "list"])  # leave the default level for the next tests


def test_import_finds_a_module_in_the_working_directory_under_a_script(tmp_path):
    """The `gacc` console script puts its own folder, not the working directory, first on sys.path; the
    processes `--num-processes` starts run under `accelerate launch`."""
    import os
    import subprocess
    import sys

    work = tmp_path / "work"
    work.mkdir()
    (work / "mymethods.py").write_text(
        "def first_lines(item):\n    return '\\n'.join(item.context.splitlines()[:3])\n", encoding="utf-8"
    )
    script = tmp_path / "bin" / "gacc"
    script.parent.mkdir()
    script.write_text("import sys\nfrom gacc_hf.cli import main\nsys.exit(main())\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [*RULES, "--compressors", "import:mymethods:first_lines", "--conditions", "own", "--limit", "2"]

    def gacc(*args):
        return subprocess.run([sys.executable, str(script), *args], cwd=work, env=env, capture_output=True, text=True)

    proc = gacc(*argv, "--cache-dir", "c", "--output-dir", "o")
    assert proc.returncode == 0, proc.stderr
    assert _results(work / "o")["config"]["methods"]["compressors"] == ["import:mymethods:first_lines"]
    proc = gacc(*argv, "--cache-dir", "c2", "--output-dir", "o3", "--num-processes", "2")  # ranks: accelerate launch
    assert proc.returncode == 0, proc.stderr
    assert _results(work / "o3")["scores"] == _results(work / "o")["scores"]
    proc = gacc(*[a.replace("mymethods", "nomethods") for a in argv], "--output-dir", "o2")
    assert proc.returncode == 2 and "cannot import method 'import:nomethods:first_lines'" in proc.stderr


def test_cache_check_recomputes_matches_entries_and_reports_an_edited_one(tmp_path, capsys):
    import json
    import sqlite3

    from gacc_hf.data.schema import SAMPLE_PATH
    from gacc_hf.run.cache import CACHE_FILENAME
    from tests.helpers.runs import rules_run

    rules_run(str(SAMPLE_PATH), compressor="goal-lines", ratios=[1.0], limit=3, cache_dir=str(tmp_path))
    with sqlite3.connect(tmp_path / CACHE_FILENAME) as db:
        entries = db.execute("SELECT COUNT(*) FROM entries WHERE kind='matches'").fetchone()[0]
    assert main(["cache", "check", str(tmp_path), "--full"]) == 0
    assert capsys.readouterr().out == f"matches: {entries} entries recomputed (all)\nok: no problems in {tmp_path}\n"
    with sqlite3.connect(tmp_path / CACHE_FILENAME) as db:
        key, value = db.execute("SELECT key, value FROM entries WHERE kind='matches' ORDER BY key").fetchone()
        forged = {**json.loads(value), "exposed": [["question", "What was never asked?"]]}
        db.execute("UPDATE entries SET value=? WHERE kind='matches' AND key=?", (json.dumps(forged), key))
    assert main(["cache", "check", str(tmp_path), "--sample", "1"]) in (0, 2)  # one of three drawn
    capsys.readouterr()
    assert main(["cache", "check", str(tmp_path)]) == 2  # the default sample covers a small cache
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith(f"matches/{key}: stored evidence") and "What was never asked?" in out[1]
    assert out[-1] == f"1 problem(s) in {tmp_path}"
    assert main(["cache", "check", str(tmp_path), "--sample", "0"]) == 2
    assert "--sample 0: give at least 1" in capsys.readouterr().err


def test_cache_check_lists_an_edited_matches_entry_beside_an_unusable_value(tmp_path, capsys):
    import json
    import sqlite3

    from gacc_hf.data.schema import SAMPLE_PATH
    from gacc_hf.run.cache import CACHE_FILENAME
    from tests.helpers.runs import rules_run

    rules_run(str(SAMPLE_PATH), compressor="goal-lines", ratios=[1.0], limit=3, cache_dir=str(tmp_path))
    with sqlite3.connect(tmp_path / CACHE_FILENAME) as db:
        key, value = db.execute("SELECT key, value FROM entries WHERE kind='matches' ORDER BY key").fetchone()
        flipped = {
            **json.loads(value),
            "evidence": "".join("1" if f == "0" else "0" for f in json.loads(value)["evidence"]),
        }
        db.execute("UPDATE entries SET value=? WHERE kind='matches' AND key=?", (json.dumps(flipped), key))
        db.execute("INSERT INTO entries VALUES ('verdict', 'bad', '{\"correct\": 1}', 0)")
    assert main(["cache", "check", str(tmp_path), "--full"]) == 2
    out, err = capsys.readouterr()
    lines = out.splitlines()  # the recount, the unusable value, the edited entry, the total: two problems
    assert lines[0].startswith("matches: ") and lines[0].endswith(" entries recomputed (all)")
    assert lines[1].startswith("verdict/bad: ") and lines[2].startswith(f"matches/{key}: stored evidence ")
    assert lines[3:] == [f"2 problem(s) in {tmp_path}"] and err == ""  # the unusable value is not logged twice


def test_cache_check_and_merge(tmp_path, capsys):
    import os
    import sqlite3

    from gacc_hf.run.cache import CACHE_FILENAME, Cache

    for name, key in (("a", "k1"), ("b", "k2")):
        with Cache(tmp_path / name) as c:
            c.put_many("answer", {key: {"answer": name}, "shared": {"answer": "same"}})
    assert main(["cache", "check", str(tmp_path / "a")]) == 0
    assert capsys.readouterr().out == f"matches: 0 entries recomputed\nok: no problems in {tmp_path / 'a'}\n"
    db = sqlite3.connect(tmp_path / "b" / CACHE_FILENAME)
    db.execute("INSERT INTO entries VALUES ('verdict', 'bad', '{\"correct\": 1}', 0)")
    db.commit()
    db.close()
    assert main(["cache", "check", str(tmp_path / "b")]) == 2
    out = capsys.readouterr().out
    assert out.startswith("matches: 0 entries recomputed\nverdict/bad: verdict value needs a bool 'correct'")
    assert out.endswith("1 problem(s) in " + str(tmp_path / "b") + "\n")
    assert main(["cache", "merge", str(tmp_path / "all"), str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert capsys.readouterr().out == f"3 new entries in {tmp_path / 'all'}\n"  # k1, k2, shared; not the bad one
    with Cache(tmp_path / "all") as c:
        assert c.get_many("answer", ["k1", "k2", "shared"]) == {
            "k1": {"answer": "a"},
            "k2": {"answer": "b"},
            "shared": {"answer": "same"},
        }
        assert c.count() == 3
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / CACHE_FILENAME).write_bytes(os.urandom(2048))
    assert main(["cache", "check", str(tmp_path / "junk")]) == 2
    assert "is damaged or not a gacc cache" in capsys.readouterr().out
    assert main(["cache", "merge", str(tmp_path / "all"), str(tmp_path / "nothing")]) == 2
    assert capsys.readouterr().err == f"gacc cache: error: {tmp_path / 'nothing'} holds no cache ({CACHE_FILENAME})\n"
