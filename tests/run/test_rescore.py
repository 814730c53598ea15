"""`gacc rescore`: the main job's stored answers judged again, with no compressor or reader call; the judges'
agreement, the survival of the ranking and the labels against hand counts of the stored rows; each bad input
refused in one line."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from gacc_hf.cli import main
from gacc_hf.run.calls import MethodError
from gacc_hf.run.rescore import rescore
from tests.helpers.paths import ROOT

MAIN = ROOT / "docs" / "results" / "main"
LABELS = MAIN / "labels.jsonl"


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("rescore-cache")


@pytest.fixture(scope="module")
def rescored(tmp_path_factory, cache) -> Path:
    """The main job rescored by `exact` and `f1`, with its labels, through the command line."""
    out = tmp_path_factory.mktemp("rescored") / "main-rescored"
    argv = ["rescore", str(MAIN), "--judge", "exact,f1", "--labels", str(LABELS), "--output-dir", str(out)]
    assert main([*argv, "--cache-dir", str(cache), "--no-progress"]) == 0
    return out


def _doc(folder: Path) -> dict:
    return json.loads((folder / "results.json").read_text(encoding="utf-8"))


def _rows(folder: Path) -> list[dict]:
    return pq.read_table(folder / "answers.parquet").to_pylist()


def test_rescoring_the_main_job_calls_no_compressor_and_no_reader(rescored):
    doc = _doc(rescored)
    assert doc["calls"]["compressor"] == 0
    assert doc["calls"]["reader"] == 0
    assert doc["schema_version"] == 5
    assert [j["name"] for j in doc["config"]["judge"]] == ["exact", "f1"]
    source = _doc(MAIN)["config"]
    for kept in ("data", "compressors", "reader", "ratios", "conditions", "protocol_version"):
        assert doc["config"][kept] == source[kept]
    came = doc["config"]["rescored_from"]
    assert came["path"] == str(MAIN)
    assert came["results_sha256"] == hashlib.sha256((MAIN / "results.json").read_bytes()).hexdigest()
    assert came["judge"] == source["judge"]


def test_the_answers_are_the_stored_ones_judged_again(rescored):
    stored = _rows(MAIN)
    rows = _rows(rescored)
    assert len(rows) == 2 * len(stored)  # one row per stored row and judge
    for judge, part in (("exact", rows[: len(stored)]), ("f1", rows[len(stored) :])):
        assert {r["judge"] for r in part} == {judge}
        assert [(r["question_id"], r["answer"], r["memory_sha256"]) for r in part] == [
            (r["question_id"], r["answer"], r["memory_sha256"]) for r in stored
        ]


def test_a_judge_run_before_on_the_same_answers_costs_no_call(rescored, cache, tmp_path):
    again = rescore(MAIN, ["f1", "exact"], tmp_path / "again", cache_dir=str(cache), progress=False)
    assert again.calls == {"compressor": 0, "reader": 0, "judge": 0}
    fresh = rescore(MAIN, "contains", tmp_path / "fresh", cache_dir=str(tmp_path / "new-cache"), progress=False)
    # every distinct (question, answer) the main job's judge was asked: its 868 recorded judge calls
    assert fresh.calls["judge"] == _doc(MAIN)["calls"]["judge"] == 868


def test_the_judges_agreement_equals_hand_counts_of_the_rows(rescored):
    rows = _rows(rescored)
    n = len(rows) // 2
    exact, f1 = [r["correct"] for r in rows[:n]], [r["correct"] for r in rows[n:]]
    agree = sum(a == b for a, b in zip(exact, f1, strict=True))
    f1_right = sum(f1)
    assert sum(exact) == 0  # exact matches no answer of the main job (the SmolLM2 reader's answers are sentences)
    measured = _doc(rescored)["agreement"]
    assert [m["reader"] for m in measured] == ["smollm2"]
    (pair,) = measured[0]["pairs"]
    assert (pair["judge_a"], pair["judge_b"], pair["n_answers"]) == ("exact", "f1", n)
    assert pair["agreement"] == pytest.approx(agree / n)
    assert agree == n - f1_right  # they differ exactly where f1 says right
    # κ = (p_o − p_e)/(1 − p_e); exact says right to none: p_e = 1·(1 − p_f1) = p_o, so κ = 0
    assert pair["kappa"] == pytest.approx(0.0)
    # α (nominal, 2 judges, n answers): D = Σ r(2 − r) = the f1_right answers with one right verdict;
    # 2n values, R = f1_right right, W = 2n − R wrong: α = 1 − (2n − 1)·D / (R·W)
    alpha = 1 - (2 * n - 1) * f1_right / (f1_right * (2 * n - f1_right))
    assert measured[0]["all"]["alpha"] == pytest.approx(alpha)
    assert pair["agreement_ci_low"] <= pair["agreement"] <= pair["agreement_ci_high"]
    report = (rescored / "report.md").read_text(encoding="utf-8")
    assert "## Judge agreement, reader smollm2" in report
    assert f"| exact | f1 | {agree / n:.3f} [" in report
    assert (rescored / "agreement.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_survival_of_the_ranking_equals_hand_counts(rescored):
    rows = _rows(rescored)
    survived = _doc(rescored)["survival"]
    assert survived["settings"] == ["reader smollm2, judge exact", "reader smollm2, judge f1"]
    (section,) = survived["sections"]  # own, at the one ratio 0.2
    assert (section["condition"], section["ratio"]) == ("own", 0.2)

    def micro(judge, compressor):
        part = [r for r in rows if (r["judge"], r["compressor"], r["condition"]) == (judge, compressor, "own")]
        return sum(r["correct"] for r in part) / len(part)

    rankings = {r["setting"]: r["ranking"] for r in section["rankings"]}
    f1 = [(c["compressor"], c["rank"], c["micro"]) for c in rankings["reader smollm2, judge f1"]]
    assert f1 == [("embed", 1, micro("f1", "embed")), ("truncate", 2, micro("f1", "truncate"))]
    assert micro("f1", "embed") > micro("f1", "truncate") > 0
    # exact says wrong to every answer: both compressors tie at 0 and share rank 1
    exact = [(c["compressor"], c["rank"], c["micro"]) for c in rankings["reader smollm2, judge exact"]]
    assert sorted(exact) == [("embed", 1, 0.0), ("truncate", 1, 0.0)]
    (pair,) = section["pairs"]
    assert (pair["a"], pair["b"], pair["k"], pair["m"]) == ("truncate", "embed", 1, 2)  # B − A > 0 under f1 only
    (tau,) = section["tau"]  # τ-b does not exist when one ranking is one tie: said, not a number
    assert tau["tau"] is None and tau["tau_undefined"] == "a setting ranks every compressor alike"
    assert "## Do conclusions survive?" in (rescored / "report.md").read_text(encoding="utf-8")


def test_the_labels_give_each_judge_against_a_person(rescored):
    labels = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines() if line.strip()]
    n_right = sum(label["label"] == "right" for label in labels)
    section = _doc(rescored)["labels"]
    assert (section["n_labels"], section["n_right"]) == (len(labels), n_right) == (154, 21)
    by_judge = {r["judge"]: r for r in section["accuracy"]}
    # exact calls every answer wrong: right on the 133 labelled wrong, wrong on the 21 labelled right
    assert by_judge["exact"]["accuracy"] == pytest.approx(133 / 154)
    assert by_judge["exact"]["false_right"] == 0
    assert by_judge["exact"]["false_wrong"] == 1
    reference = section["human_reference"]
    assert {(r["reader"], r["judge"]) for r in reference} == {("smollm2", "exact"), ("smollm2", "f1")}
    report = (rescored / "report.md").read_text(encoding="utf-8")
    assert "## Judges against human labels" in report and "never published" in report


def test_the_human_reference_is_never_a_method_that_publish_takes(rescored, capsys):
    argv = ["publish", str(rescored), "--repo-id", "me/m", "--dry-run", "--reader", "smollm2", "--judge", "f1"]
    assert main([*argv, "--compressor", "human"]) == 2
    assert "has no compressor 'human'" in capsys.readouterr().err
    assert all("human" not in s["compressor"] for s in _doc(rescored)["scores"])


def _copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(MAIN, tmp_path / "main"))


def _edit(folder: Path, change) -> Path:
    doc = _doc(folder)
    change(doc)
    (folder / "results.json").write_text(json.dumps(doc), encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        (lambda f: _edit(f, lambda d: d.update(schema_version=3)), "schema_version 3; rescore reads schema 4 to 5"),
        (
            lambda f: _edit(f, lambda d: d["config"].update(protocol_version="gacc-0")),
            "config.protocol_version 'gacc-0' is not this gacc-hf's",
        ),
        (
            lambda f: _edit(f, lambda d: d["config"]["data"].update(fingerprint="sha256:" + "0" * 64)),
            "'sample' has changed since the run",
        ),
    ],
    ids=["schema", "protocol", "data"],
)
def test_a_folder_of_another_schema_protocol_or_data_is_refused(tmp_path, capsys, spoil, message):
    folder = spoil(_copy(tmp_path))
    code = main(["rescore", str(folder), "--judge", "exact", "--output-dir", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_an_answer_edited_by_hand_is_refused_as_gacc_report_refuses_it(tmp_path, capsys):
    folder = _copy(tmp_path)
    table = pq.read_table(folder / "answers.parquet").to_pylist()
    table[0]["answer"] = "an answer typed in afterwards"
    import pyarrow as pa

    pq.write_table(pa.Table.from_pylist(table), folder / "answers.parquet")
    assert main(["rescore", str(folder), "--judge", "exact", "--output-dir", str(tmp_path / "out")]) == 2
    rescore_err = capsys.readouterr().err
    assert main(["report", str(folder)]) == 2
    report_err = capsys.readouterr().err
    assert "answers.parquet" in rescore_err and rescore_err == report_err.replace("gacc report", "gacc rescore")


def test_an_output_folder_that_is_not_empty_is_refused(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "kept.txt").write_text("mine")
    assert main(["rescore", str(MAIN), "--judge", "exact", "--output-dir", str(out)]) == 2
    assert "exists and is not empty" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["kept.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert rescore(MAIN, "exact", empty, progress=False).calls["reader"] == 0  # an empty folder is taken


def test_labels_that_match_no_answer_are_refused_naming_the_first(tmp_path, capsys):
    bogus = tmp_path / "labels.jsonl"
    keys = [f"{i:016x}" for i in range(5)]
    bogus.write_text("".join(json.dumps({"key": k, "label": "right"}) + "\n" for k in keys), encoding="utf-8")
    argv = ["rescore", str(MAIN), "--judge", "exact", "--labels", str(bogus), "--output-dir", str(tmp_path / "o")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert f"5 label(s) match no answer of the run: {keys[0]}, {keys[1]}, {keys[2]}, …" in err
    assert len(err.splitlines()) == 1 and not (tmp_path / "o").exists()


def broken_judge(item) -> bool:
    raise RuntimeError("the judge's server went away")


def test_a_judge_that_fails_follows_the_on_error_rules_of_a_run(tmp_path):
    with pytest.raises(MethodError, match="judge 'broken_judge' failed on question_id="):
        rescore(MAIN, broken_judge, tmp_path / "raised", progress=False)
    assert not (tmp_path / "raised").exists()
    recorded = rescore(MAIN, broken_judge, tmp_path / "recorded", on_error="record", progress=False)
    rows = _rows(tmp_path / "recorded")
    answered = [r for r in _rows(MAIN) if r["answer"] is not None and r["error"] is None]
    assert sum(r["error"] is not None for r in rows) == len(rows) == len(answered)
    assert len(recorded.errors) == 868  # one per distinct verdict asked
    assert not any(r["correct"] for r in rows)
    # the answers the failed judge left unjudged are judged again by the next judge, each row as in main
    again = rescore(tmp_path / "recorded", "exact", tmp_path / "again", progress=False)
    assert not again.errors and all(r["error"] is None for r in _rows(tmp_path / "again"))
    assert [r["answer"] for r in _rows(tmp_path / "again")] == [r["answer"] for r in _rows(MAIN)]


def test_a_rescore_refusal_leaves_no_folder_and_the_exit_code_is_two_for_an_unknown_judge(tmp_path, capsys):
    assert main(["rescore", str(MAIN), "--judge", "no-such-judge", "--output-dir", str(tmp_path / "o")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()
    with pytest.raises(ValueError, match="not a results folder"):
        rescore(tmp_path / "nothing", "exact", tmp_path / "o2")


def test_a_rescored_folder_is_checked_and_compared_as_a_run(rescored, capsys, tmp_path):
    copy = Path(shutil.copytree(rescored, tmp_path / "copy"))
    report = (copy / "report.md").read_text(encoding="utf-8")
    assert main(["report", str(copy)]) == 0  # every figure re-derived from its answers
    assert (copy / "report.md").read_text(encoding="utf-8") == report
    capsys.readouterr()
    assert main(["compare", str(MAIN), str(rescored)]) == 0  # no setting in common: each judge is a setting
    out = capsys.readouterr().out
    pair = _doc(rescored)["agreement"][0]["pairs"][0]
    assert f"| {MAIN} | 1. embed (" in out and f"| {rescored} [reader smollm2, judge f1] | 1. embed (" in out
    assert "| truncate | embed | 2 of 3 |" in out  # contains and f1 put embed above truncate; exact ties them
    exact, f1 = (f"{rescored} [reader smollm2, judge {j}]" for j in ("exact", "f1"))
    assert f"| {exact} | {f1} | {pair['agreement']:.3f} [" in out
