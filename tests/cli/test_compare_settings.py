"""`gacc compare` over runs under different judges: the survival section against each run's recorded scores."""

from __future__ import annotations

import json
import shutil
from itertools import combinations

import pandas as pd
import pytest
from scipy.stats import kendalltau

from gacc_hf.cli import main

JUDGES = ("exact", "contains", "f1")
COMPRESSORS = ("truncate", "goal-lines", "bm25")


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """The rules preset (generated data, `fields` reader) with three compressors, judged by each rule judge."""
    root = tmp_path_factory.mktemp("judged")
    for judge in JUDGES:
        args = ["run", "--preset", "rules", "--compressors", ",".join(COMPRESSORS), "--judge", judge]
        args += ["--bootstrap", "0", "--no-progress", "--verbosity", "WARNING"]
        assert main([*args, "--cache-dir", str(root / "cache"), "--output-dir", str(root / judge)]) == 0
    return root


def _recorded(folder):
    """Micro of each own-condition cell as the run's results.json records it: (ratio, compressor) → Micro."""
    scores = json.loads((folder / "results.json").read_text())["scores"]
    return {(s["ratio"], s["compressor"]): s["micro"] for s in scores if s["condition"] == "own"}


def test_three_runs_give_rankings_tau_and_wins_that_match_their_recorded_scores(judged, tmp_path, capsys):
    folders = [str(judged / j) for j in JUDGES]
    out_md, out_json = tmp_path / "survival.md", tmp_path / "survival.json"
    assert main(["compare", *folders, "--bootstrap", "50", "--output", str(out_md), "--json", str(out_json)]) == 0
    printed, err = capsys.readouterr()
    assert err == ""  # every run records its data fingerprint: nothing to warn of
    assert printed == out_md.read_text() and printed.startswith("## Do conclusions survive?")
    assert f"- `{folders[2]}`: reader fields@fields-v1, judge f1@f1-v3@0.5" in printed
    doc = json.loads(out_json.read_text())
    assert doc["settings"] == {f: printed.split(f"`{f}`: ")[1].split("\n")[0] for f in folders}
    recorded = {f: _recorded(judged / j) for f, j in zip(folders, JUDGES, strict=True)}
    assert [s["ratio"] for s in doc["survival"]] == [0.1, 0.25]
    for sec in doc["survival"]:
        ratio = sec["ratio"]
        micro = {f: [recorded[f][ratio, c] for c in COMPRESSORS] for f in folders}
        for r in sec["rankings"]:  # best first, as the recorded Micro orders them
            assert [x["micro"] for x in r["ranking"]] == sorted(micro[r["setting"]], reverse=True)
        for t in sec["tau"]:
            expected = kendalltau(micro[t["setting_a"]], micro[t["setting_b"]]).statistic  # τ-b, scipy's own
            assert t["tau"] == (None if expected != expected else pytest.approx(expected))
        for p in sec["pairs"]:
            a, b = COMPRESSORS.index(p["a"]), COMPRESSORS.index(p["b"])
            diffs = [micro[f][b] - micro[f][a] for f in folders]
            assert [d["micro_diff"] for d in p["settings"]] == pytest.approx(diffs)
            assert (p["k"], p["m"]) == (sum(d > 0 for d in diffs), 3)
        assert len(sec["pairs"]) == len(list(combinations(COMPRESSORS, 2)))
    # one reader: the same answers judged three times; each pair's raw agreement is the share of answer rows
    # whose recorded verdicts are the same in both folders
    answers = {
        f: pd.read_parquet(judged / j / "answers.parquet")["correct"].tolist()
        for f, j in zip(folders, JUDGES, strict=True)
    }
    agreement = doc["agreement"]
    assert agreement["n_answers"] == len(answers[folders[0]]) and agreement["n_left_out"] == 0
    for pair in agreement["pairs"]:
        a, b = answers[pair["judge_a"]], answers[pair["judge_b"]]
        assert pair["agreement"] == pytest.approx(sum(x == y for x, y in zip(a, b, strict=True)) / len(a))
    assert "## Judge agreement" in printed


def test_two_runs_under_different_judges_give_the_section_and_the_paired_table_only_when_asked(judged, capsys):
    a, b = str(judged / "exact"), str(judged / "f1")
    assert main(["compare", a, b, "--bootstrap", "20"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("(the paired table of one side against the other needs one reader and one judge")
    assert "## Do conclusions survive?" in out and "WARNING" not in out
    assert main(["compare", a, b, "--a", "truncate", "--b", "bm25", "--bootstrap", "20", "--allow-different-data"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("WARNING, NOT COMPARABLE: judge:") and "WARNING: judge: " in err
    table, section = out.split("## Do conclusions survive?")
    assert "differences are B − A" in table and "Rankings by Micro" in section


def test_runs_under_one_setting_keep_todays_comparison(judged, capsys, tmp_path):
    a = str(judged / "exact")
    assert main(["compare", a, a, "--a", "truncate", "--b", "bm25", "--bootstrap", "0"]) == 0
    assert "Do conclusions survive" not in capsys.readouterr().out
    assert main(["compare", a, a, "--a", "truncate", "--b", "bm25", "--json", str(tmp_path / "s.json")]) == 2
    assert "--output and --json write the survival section" in capsys.readouterr().err


def _set_config(folder, **changes):
    doc = json.loads((folder / "results.json").read_text())
    for key, value in changes.items():
        doc["config"][key] = value
    (folder / "results.json").write_text(json.dumps(doc))


def test_other_data_or_a_setting_twice_is_refused_in_one_line(judged, tmp_path, capsys):
    other = shutil.copytree(judged / "f1", tmp_path / "other")
    config = json.loads((other / "results.json").read_text())["config"]
    _set_config(other, data={**config["data"], "fingerprint": "sha256:" + "e" * 64})
    assert main(["compare", str(judged / "exact"), str(judged / "contains"), str(other)]) == 2
    err = capsys.readouterr().err.strip()
    assert "the runs are not on the same data: data:" in err and "eeeeeeeeeeeeeeee" in err and "\n" not in err
    assert main(["compare", str(judged / "exact"), str(judged / "contains"), str(judged / "exact")]) == 2
    assert f"{judged / 'exact'} is given twice: give each run once" in capsys.readouterr().err
    again = shutil.copytree(judged / "exact", tmp_path / "again")
    assert main(["compare", str(judged / "exact"), str(judged / "contains"), str(again)]) == 2
    assert "are the same setting (reader fields@fields-v1, judge exact@exact-v3)" in capsys.readouterr().err
    assert main(["compare", str(judged / "exact"), str(judged / "contains"), str(judged / "f1"), "--a", "bm25"]) == 2
    assert "--a, --b and --allow-different-data are for two runs" in capsys.readouterr().err


def test_runs_that_do_not_hold_the_same_compressors_are_refused(judged, tmp_path, capsys):
    fewer = tmp_path / "fewer"
    args = ["run", "--preset", "rules", "--compressors", "truncate", "--judge", "f1", "--bootstrap", "0"]
    args += ["--no-progress", "--verbosity", "WARNING", "--cache-dir", str(judged / "cache")]
    args += ["--output-dir", str(fewer)]
    assert main(args) == 0
    assert main(["compare", str(judged / "exact"), str(judged / "contains"), str(fewer)]) == 2
    assert "do not hold the same compressors' cells at condition own" in capsys.readouterr().err
    assert main(["compare", str(judged / "exact"), str(fewer)]) == 2  # two runs: today's refusal, and why no section
    err = capsys.readouterr().err
    assert "not comparable: judge:" in err and "no survival section either: " in err


def test_a_run_without_a_data_fingerprint_is_compared_with_a_warning(judged, tmp_path, capsys):
    old = shutil.copytree(judged / "f1", tmp_path / "old")
    config = json.loads((old / "results.json").read_text())["config"]
    _set_config(old, data={**config["data"], "fingerprint": None})
    assert main(["compare", str(judged / "exact"), str(judged / "contains"), str(old), "--bootstrap", "0"]) == 0
    out, err = capsys.readouterr()
    assert "## Judge agreement" in out  # the same reader: its answers judged again
    assert err == f"WARNING: {old} records no data fingerprint: cannot check that every run is on the same data\n"
    assert out.startswith("## Do conclusions survive?")


def test_runs_under_different_readers_give_no_judge_agreement(judged, tmp_path, capsys):
    other = shutil.copytree(judged / "f1", tmp_path / "other-reader")
    _set_config(other, reader={"name": "fields", "revision": "fields-v0"})
    assert main(["compare", str(judged / "exact"), str(other), "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out
    assert "Do conclusions survive?" in out and "## Judge agreement" not in out
    assert out.endswith("(no judge agreement: the runs have different readers, so their answers differ)\n")
