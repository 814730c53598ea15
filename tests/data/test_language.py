"""Bilingual data: language tags (declared or detected), the bilingual sample, other layouts through a column
mapping, and scores per language in every output."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gacc_hf.data.columns import layout_error, parse_columns, to_schema_rows
from gacc_hf.data.fingerprint import fingerprint
from gacc_hf.data.jsonl import load_sample
from gacc_hf.data.language import canonical_tag, detect_language, tag_problem
from gacc_hf.data.loading import load_any
from gacc_hf.data.schema import DataSourceError, DataValidationError, validate
from gacc_hf.data.stats import stats_text
from gacc_hf.data.synthetic import synthetic_rows
from gacc_hf.run.benchmark import run_benchmark
from gacc_hf.scoring.by_language import answer_languages, paired_by_language, score_by_language
from tests.helpers.data import write_jsonl
from tests.helpers.paths import ROOT

# the fingerprint the recorded main run holds (docs/results/main/results.json), copied here by hand
ENGLISH_SAMPLE = "sha256:4ce82d3a6cd9c8bbe461fbccfbce264f5139df02f1e450d1beee4ec2b9108dc4"
# the release's names for the schema's columns, as a user would map them
NAMES = {
    "context_id": "doc_id",
    "context": "text",
    "goal_id": "task_id",
    "goal": "user_goal",
    "question_id": "qid",
    "question": "query",
    "references": "answers",
    "source": "domain",
}
RULES = {"compressor": "truncate", "reader": "fields", "judge": "exact", "conditions": ("own", "none"), "ratios": 0.3}


def flat_rows(rows: list[dict]) -> list[dict]:
    """One row per question under the release's names, written independently of the code under test."""
    out = []
    for row in rows:
        refs = {g["question_id"]: g["references"] for g in row["gold"]}
        for q in row["questions"]:
            flat = {
                "doc_id": row["context_id"],
                "domain": row["source"],
                "text": row["context"],
                "task_id": row["goal_id"],
                "user_goal": row["goal"],
                "qid": q["question_id"],
                "query": q["question"],
                "answers": refs[q["question_id"]],
            }
            if any("language" in r for r in rows):
                flat["lang"] = row.get("language")  # null where a group declares none
            out.append(flat)
    return out


def test_tags_are_checked_and_put_in_canonical_case():
    assert [canonical_tag(t) for t in ("en", "ZH-hans-cn", "es-419", "sr-Latn")] == [
        "en",
        "zh-Hans-CN",
        "es-419",
        "sr-Latn",
    ]
    for bad in ("chinese", "en_US", "e", "zh-", "", "english"):
        assert canonical_tag(bad) is None and "is not a BCP-47 language tag" in tag_problem(bad)
    assert "got int" in tag_problem(7)


def test_detection_tells_chinese_from_english_by_script():
    assert detect_language("主库停写了多久？") == "zh"
    assert detect_language("How long was ledger-pg-02 read-only?") == "en"
    # 6 Han characters against 7 Latin words (max_retries, Retry, After, header, and, is, ms): English
    assert detect_language("max_retries 和 Retry-After header 重试 and is 500 ms") == "en"
    assert [g.language_tag for g in validate(load_sample(language="en"))] == ["en"] * 35
    chinese = [{k: v for k, v in r.items() if k != "language"} for r in load_sample(language="zh").to_list()]
    assert {g.language_tag for g in validate(chinese)} == {"zh"}  # undeclared, detected
    assert all(g.language_detected for g in validate(chinese))


def test_the_bundled_sample_is_bilingual_and_the_english_part_keeps_its_fingerprint():
    english, chinese, both = (validate(load_sample(language=lang)) for lang in ("en", "zh", "all"))
    assert (len(english), len(chinese), len(both)) == (35, 18, 53)  # the 35 goals and the 18 written
    assert sum(len(g.questions) for g in chinese) == 84
    assert fingerprint(english) == ENGLISH_SAMPLE == fingerprint(validate(load_any("sample")))
    assert {g.language for g in chinese} == {"zh"} and {g.language for g in english} == {None}
    assert len(load_any("sample:all")) == 53 and len(load_any("sample:zh")) == 18
    with pytest.raises(ValueError, match="the sample's languages are en, zh, all, not 'fr'"):
        load_sample(language="fr")


def test_the_fingerprint_covers_a_declared_language():
    rows = load_sample(language="en").to_list()
    tagged = [{**r, "language": "en"} for r in rows]
    assert fingerprint(validate(tagged)) != ENGLISH_SAMPLE  # declared: in the fingerprint
    assert fingerprint(validate(rows)) == ENGLISH_SAMPLE  # absent: the old lines, unchanged
    relabelled = [{**r, "language": "en-GB"} for r in rows]
    assert fingerprint(validate(relabelled)) != fingerprint(validate(tagged))


def test_a_language_that_is_not_a_tag_names_the_row_and_field():
    rows = load_sample(language="zh").to_list()
    rows[4]["language"] = "Chinese"
    with pytest.raises(DataValidationError) as err:
        validate(rows)
    (problem,) = err.value.problems
    assert (problem.row, problem.field) == (4, "language") and "'Chinese' is not a BCP-47 language tag" in str(problem)
    rows[4]["language"] = "zh-Hans"
    assert validate(rows)[4].language == "zh-Hans"  # a well-formed tag stays quiet


def test_a_flat_dataset_with_other_names_gives_the_same_groups_fingerprint_and_scores(tmp_path):
    rows = synthetic_rows(contexts=4)
    for i, row in enumerate(rows):
        if i % 2:
            row["language"] = "en-GB"  # declared in some rows, detected in the others
    own = write_jsonl(tmp_path / "own.jsonl", rows)
    flat = write_jsonl(tmp_path / "flat.jsonl", flat_rows(rows))
    mapped = load_any(flat, columns={**NAMES, "language": "lang"})
    assert validate(mapped) == validate(load_any(own))
    assert fingerprint(validate(mapped)) == fingerprint(validate(rows))
    a, b = run_benchmark(load_any(own), **RULES), run_benchmark(mapped, **RULES)
    assert a.scores == b.scores and a.scores_by_language == b.scores_by_language
    assert any(s["micro"] > 0 for s in a.scores)  # a comparison of something, not of zeros
    assert [s["language"] for s in a.scores_by_language] == ["en"] * 2  # en-GB is scored as en (language_of)


def test_a_mapping_to_a_missing_column_names_the_row_and_field(tmp_path):
    flat = write_jsonl(tmp_path / "flat.jsonl", flat_rows(synthetic_rows(contexts=2)))
    with pytest.raises(DataValidationError) as err:
        load_any(flat, columns={**NAMES, "goal": "intent"})
    (problem,) = err.value.problems
    assert (problem.row, problem.field) == (0, "intent")
    assert "maps goal to 'intent', but the data has no such column (its columns: doc_id, domain, text" in str(problem)
    rows = flat_rows(synthetic_rows(contexts=2))
    del rows[3]["user_goal"]
    with pytest.raises(DataValidationError) as err:
        to_schema_rows(rows, NAMES)
    assert [(p.row, p.field) for p in err.value.problems] == [(3, "user_goal")]


def test_flat_rows_that_disagree_on_a_group_name_the_row_and_field():
    rows = flat_rows(synthetic_rows(contexts=2))
    rows[2]["user_goal"] += " (edited)"
    rows[5]["text"] = "another text"
    with pytest.raises(DataValidationError) as err:
        to_schema_rows(rows, NAMES)
    found = [(p.row, p.field) for p in err.value.problems]
    assert (2, "goal") in found and (5, "context") in found
    assert all(p.row in (2, 5) for p in err.value.problems)
    assert "differs from the goal of goal_id" in str(err.value)
    assert to_schema_rows(flat_rows(synthetic_rows(contexts=2)), NAMES)  # agreeing rows stay quiet


def test_an_unrecognised_layout_lists_the_columns_and_the_mapping_that_fixes_it(tmp_path):
    rows = flat_rows(synthetic_rows(contexts=2))
    path = write_jsonl(tmp_path / "release.jsonl", rows)
    with pytest.raises(DataSourceError) as err:
        load_any(path)
    message = str(err.value)
    assert "the data has the columns doc_id, domain, text, task_id, user_goal, qid, query, answers" in message
    fix = message.split("--columns ")[1].split(" ")[0]
    assert fix == ",".join(f"{k}={v}" for k, v in NAMES.items() if k != "source")  # all but the optional one
    assert len(load_any(path, columns={**parse_columns(fix), "source": "domain"})) == 6  # the fix works
    required = "--columns context=<column>,goal=<column>,questions=<column>,gold=<column> "  # IDs, source: optional
    assert f"For one row per (context, goal) group, map the data's names: {required}" in str(layout_error(["a", "b"]))


def test_parse_columns_refuses_malformed_and_unknown_entries():
    assert parse_columns("context=text, goal=user_goal") == {"context": "text", "goal": "user_goal"}
    for text, message in (
        ("context", "not SCHEMA_NAME=DATA_COLUMN"),
        ("contxt=text", "'contxt' is not a schema column"),
        ("context=a,context=b", "context is mapped twice"),
        ("context=a,goal=a", "mapped to two schema names"),
    ):
        with pytest.raises(DataSourceError, match=message):
            parse_columns(text)


def test_a_mapping_does_not_apply_to_the_sample():
    with pytest.raises(DataSourceError, match="a column mapping does not apply"):
        load_any("sample", columns={"context": "text"})


def test_data_stats_per_language():
    text = stats_text(load_any("sample:all"))
    assert text.startswith("languages: en (35 goals, detected), zh (18 goals, declared)")
    assert "-- language en --\ncontexts:  15 from" in text and "-- language zh --\ncontexts:  7 from 7 sources" in text
    assert "questions: 84 (" in text and "questions: 155 (" in text and "questions: 239 (" in text
    assert "-- language" not in stats_text(load_any("sample"))  # one language: no repeat


def test_scores_per_language_by_hand():
    answers = [
        {"compressor": "c", "condition": "own", "ratio": 0.2, "goal_id": "e1", "correct": True, "error": None},
        {"compressor": "c", "condition": "own", "ratio": 0.2, "goal_id": "e1", "correct": False, "error": None},
        {"compressor": "c", "condition": "own", "ratio": 0.2, "goal_id": "e2", "correct": True, "error": None},
        {"compressor": "c", "condition": "own", "ratio": 0.2, "goal_id": "z1", "correct": True, "error": None},
        {"compressor": "c", "condition": "own", "ratio": 0.2, "goal_id": "z1", "correct": False, "error": None},
    ]
    tagged = [{**a, "language": lang} for a, lang in zip(answers, ["en"] * 3 + ["zh"] * 2, strict=True)]
    rows = score_by_language(tagged, 0, 0)
    assert [(r["language"], r["micro"], r["macro"], r["n_questions"]) for r in rows] == [
        ("en", 2 / 3, 0.5, 3),  # e1 half right, e2 right: 2 of 3 questions, 1 of 2 goals
        ("zh", 0.5, 0.0, 2),
    ]
    assert score_by_language(answers, 0, 0) == [] and answer_languages(answers) == []  # older runs: no language


def test_compare_pairs_each_language_on_its_own_questions():
    a = [
        {"condition": "own", "ratio": 0.2, "question_id": q, "goal_id": g, "correct": c, "language": lang}
        for q, g, c, lang in (("q1", "g1", False, "en"), ("q2", "g2", False, "en"), ("q3", "g3", True, "zh"))
    ]
    b = [{**r, "correct": True} for r in a]
    tables = paired_by_language(a, b, 0, 0, ("A", "B"))
    assert [(lang, rows[0]["micro_diff"], rows[0]["n_questions"]) for lang, rows in tables] == [
        ("en", 1.0, 2),
        ("zh", 0.0, 1),
    ]
    assert paired_by_language(a[:2], b[:2], 0, 0, ("A", "B")) == []  # one language: the overall table says it all


def test_a_bilingual_run_writes_per_language_rows_everywhere(tmp_path):
    from gacc_hf.hub.model_card import DatasetRef, model_card
    from gacc_hf.results.folder import verify_folder
    from gacc_hf.results.layout import ResultsError

    rows = synthetic_rows(contexts=4)
    zh = [{**r, "language": "zh"} for r in synthetic_rows(seed=1, contexts=2)]
    zh = [
        {
            **r,
            "goal_id": "zh-" + r["goal_id"],
            "context_id": "zh-" + r["context_id"],
            "questions": [{**q, "question_id": "zh-" + q["question_id"]} for q in r["questions"]],
            "gold": [{**g, "question_id": "zh-" + g["question_id"]} for g in r["gold"]],
        }
        for r in zh
    ]
    data = write_jsonl(tmp_path / "both.jsonl", rows + zh)
    out = tmp_path / "run"
    cmd = [
        sys.executable,
        "-m",
        "gacc_hf",
        "run",
        "--preset",
        "rules",
        "--data",
        str(data),
        "--output-dir",
        str(out),
        "--cache-dir",
        str(tmp_path / "c"),
        "--no-progress",
        "--bootstrap",
        "50",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert "by language:" in done.stdout and "\nzh " in done.stdout
    run = verify_folder(out)
    payload = json.loads((out / "results.json").read_text())
    assert {r["language"] for r in payload["scores_by_language"]} == {"en", "zh"}
    assert payload["config"]["data"]["languages"]["zh"] == {"n_groups": 6, "n_questions": 24, "detected": False}
    report = (out / "report.md").read_text()
    assert "## Scores by language" in report and "languages: en (detected), zh" in report
    assert (out / "scores_en.png").is_file() and (out / "scores_zh.png").is_file()
    edited = {**payload, "scores_by_language": [dict(r) for r in payload["scores_by_language"]]}
    edited["scores_by_language"][-1]["micro"] += 0.01
    (out / "results.json").write_text(json.dumps(edited))
    with pytest.raises(ResultsError, match="scores_by_language at language=zh"):
        verify_folder(out)
    card = model_card(
        run, "truncate", "me/m", DatasetRef("local", "me/d", "judge", None, run.config["data"]["fingerprint"])
    )
    assert "Languages of the data: en (detected), zh." in card and "| zh | own |" in card


def test_gacc_run_refuses_a_bad_mapping_before_any_model_is_loaded(tmp_path, capsys, monkeypatch):
    from gacc_hf.cli import main
    from gacc_hf.run import calls

    flat = write_jsonl(tmp_path / "flat.jsonl", flat_rows(synthetic_rows(contexts=2)))
    monkeypatch.setattr(calls, "resolve", lambda *a, **k: pytest.fail("a method was resolved"))
    columns = ",".join(f"{k}={v}" for k, v in {**NAMES, "goal": "intent"}.items())
    args = ["run", "--data", str(flat), "--columns", columns, "--output-dir", str(tmp_path / "o"), "--no-progress"]
    assert main(args) == 2
    assert (
        "row 0, line 1, field 'intent': columns maps goal to 'intent', but the data has no such column"
        in capsys.readouterr().err
    )
    monkeypatch.undo()
    good = ",".join(f"{k}={v}" for k, v in NAMES.items())
    assert main([*args[:4], good, *args[5:], "--preset", "rules"]) == 0  # the right mapping runs
    assert json.loads((tmp_path / "o" / "results.json").read_text())["config"]["data"]["columns"] == NAMES


def test_gacc_data_validate_reads_other_layouts_through_the_mapping(tmp_path, capsys):
    from gacc_hf.cli import main

    rows = flat_rows(synthetic_rows(contexts=2))
    path = write_jsonl(tmp_path / "flat.jsonl", rows)
    good = ",".join(f"{k}={v}" for k, v in NAMES.items())
    assert main(["data", "validate", str(path)]) == 2
    assert "unrecognised layout: the data has the columns doc_id" in capsys.readouterr().out
    assert main(["data", "validate", str(path), "--columns", good]) == 0
    rows[3]["text"] = "another text"
    write_jsonl(path, rows)
    assert main(["data", "validate", str(path), "--columns", good]) == 2
    out = capsys.readouterr().out
    assert "row 3 (goal_id='syn-0-000000/g0'), line 4, field 'text': differs from the text of context_id" in out
    assert "1 problem(s)" in out


def test_tags_of_one_language_and_script_are_one_language():
    from gacc_hf.data.language import language_of

    same = ("zh", "zh-Hans", "zh-CN", "zh-hans-cn", "zh-SG")
    assert {language_of(t) for t in same} == {"zh"}
    assert {language_of(t) for t in ("en", "en-US", "en-GB", "en-Latn")} == {"en"}
    # another script than the language's usual one stays apart: traditional Chinese, given or implied by region
    assert [language_of(t) for t in ("zh-Hant", "zh-TW", "zh-HK", "zh-Hant-TW")] == ["zh-Hant"] * 4
    assert [language_of(t) for t in ("fr-CA", "sr-Latn", "sr-Cyrl")] == ["fr", "sr-Latn", "sr-Cyrl"]


def test_a_run_on_zh_zh_hans_and_zh_cn_reports_one_language_and_keeps_the_declared_tags():
    rows = load_sample(language="zh").to_list()[:3]
    tagged = [{**r, "language": tag} for r, tag in zip(rows, ("zh", "zh-Hans", "zh-CN"), strict=True)]
    result = run_benchmark(tagged, progress=False, **RULES)
    languages = result.config["data"]["languages"]
    assert list(languages) == ["zh"] and languages["zh"]["n_groups"] == 3
    assert languages["zh"]["declared"] == ["zh", "zh-CN", "zh-Hans"]
    assert {r["language"] for r in result.answers} == {"zh"}
    assert {r["language"] for r in result.scores_by_language} == {"zh"}
    assert stats_text(tagged).startswith("languages: zh (3 goals, declared)\n")
    plain = run_benchmark([{**r, "language": "zh"} for r in rows], progress=False, **RULES)
    assert "declared" not in plain.config["data"]["languages"]["zh"]  # only where a tag differs from its language


@pytest.mark.parametrize(
    ("sample", "tag", "conflict"),
    [("zh", "en", True), ("en", "zh-Hans", True), ("zh", "zh-CN", False), ("en", "en-US", False), ("zh", "fr", False)],
)
def test_a_declared_tag_that_contradicts_the_script_is_a_warning(sample, tag, conflict, caplog):
    rows = [{**r, "language": tag} for r in load_sample(language=sample).to_list()[:2]]
    with caplog.at_level("WARNING", logger="gacc_hf"):
        groups = validate(rows)
    warned = [r.getMessage() for r in caplog.records if "script contradicts" in r.getMessage()]
    assert [g.language for g in groups] == [canonical_tag(tag)] * 2  # kept as declared either way
    if conflict:
        assert warned == [
            f"data: 2 goal(s) declare a language their text's script contradicts (first: goal {rows[0]['goal_id']} "
            f"declares {canonical_tag(tag)!r}, its text reads as {sample}); scored under the declared tag"
        ]
    else:
        assert warned == []


def test_answer_languages_are_in_first_seen_order_and_none_when_a_row_has_none():
    rows = [{"language": "zh"}, {"language": "en"}, {"language": "zh"}]
    assert answer_languages(rows) == ["zh", "en"]
    assert answer_languages([*rows, {"language": ""}]) == answer_languages([{}, *rows]) == answer_languages([]) == []
