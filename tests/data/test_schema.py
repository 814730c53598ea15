"""The schema, its validation (every bad-input case, through the API, `gacc data validate`, `run_benchmark`
and `gacc run`), the bundled sample's promised properties, the views, and the stats."""

from __future__ import annotations

import dataclasses
import re
import statistics

import numpy as np
import pytest

import gacc_hf
from gacc_hf.cli import main
from gacc_hf.data.jsonl import find_file_problems, load_sample
from gacc_hf.data.schema import (
    JUDGE_FEATURES,
    PUBLIC_FEATURES,
    DataValidationError,
    find_problems,
    public_view,
    validate,
)
from gacc_hf.data.stats import data_stats
from gacc_hf.protocol import CompressorInput, JudgeInput, ReaderInput
from gacc_hf.run.benchmark import run_benchmark
from gacc_hf.tokenizer import independent_count
from tests.helpers.data import hf_cache, mutated, sample_rows, write_jsonl, write_parquet
from tests.helpers.runs import rules_run

pytestmark = pytest.mark.usefixtures("hf_cache")
_ = hf_cache  # the fixture, imported for pytest


# --- the bundled sample -------------------------------------------------------------------------------


def _contexts(rows):
    return {r["context_id"]: (r["source"], r["context"]) for r in rows}


def test_sample_counts_meet_the_issue():
    rows = sample_rows()
    contexts = _contexts(rows)
    goals_per_context = {cid: sum(r["context_id"] == cid for r in rows) for cid in contexts}
    assert len(contexts) == 15 >= 12
    assert len({source for source, _ in contexts.values()}) == 7 >= 5
    assert min(goals_per_context.values()) >= 2
    assert len(rows) == 35
    assert sum(len(r["questions"]) for r in rows) == 155 >= 100


def test_sample_contexts_are_600_to_2500_cl100k_tokens():
    codec = gacc_hf.get_codec()
    assert codec.identity_verified
    for cid, (_, text) in _contexts(sample_rows()).items():
        n = len(codec.encode(text))
        assert 600 <= n <= 2500, (cid, n)
        assert n == independent_count(text), cid  # a second BPE implementation agrees


def test_every_question_has_a_short_canonical_answer_found_in_its_context_plus_alternates():
    codec = gacc_hf.get_codec()
    for row in sample_rows():
        context = row["context"].casefold()
        assert [g["question_id"] for g in row["gold"]] == [q["question_id"] for q in row["questions"]]
        for gold in row["gold"]:
            canonical, *alternates = gold["references"]
            assert canonical.casefold() in context, gold["question_id"]
            assert 1 <= len(codec.encode(canonical)) <= 10, gold["question_id"]
            assert len(set(gold["references"])) == len(gold["references"]), gold["question_id"]
            assert all(a.strip() for a in alternates)
    n_with_alternates = sum(len(g["references"]) > 1 for r in sample_rows() for g in r["gold"])
    assert n_with_alternates >= 130  # most answers accept alternates; ids and names may have none


def test_questions_of_one_goal_need_facts_from_different_places():
    for row in sample_rows():
        paragraphs = [p.casefold() for p in re.split(r"\n\s*\n", row["context"])]
        where = {next(i for i, p in enumerate(paragraphs) if g["references"][0].casefold() in p) for g in row["gold"]}
        assert len(where) >= 2, row["goal_id"]


def test_questions_are_not_written_in_the_contexts():
    rows = sample_rows()
    for row in rows:
        for q in row["questions"]:
            assert all(q["question"] not in r["context"] and q["question"] not in r["goal"] for r in rows)


def test_load_sample_views():
    judge, public = load_sample("judge"), load_sample("public")
    assert judge.features == JUDGE_FEATURES
    assert public.features == PUBLIC_FEATURES
    assert "gold" not in public.column_names
    assert judge.to_list() == sample_rows()
    assert public.to_list() == [{k: v for k, v in r.items() if k != "gold"} for r in sample_rows()]
    assert public_view(judge).to_list() == public.to_list()
    with pytest.raises(ValueError, match="config must be"):
        load_sample("gold")


# --- bad input: every case gets its own error (row + field) -------------------------------------------


def _drop_goal(rows):
    del rows[2]["goal"]


def _int_context_id(rows):
    rows[1]["context_id"] = 7


def _duplicate_goal_id(rows):
    rows[3]["goal_id"] = rows[2]["goal_id"]


def _duplicate_question_id(rows):
    qid = rows[0]["questions"][0]["question_id"]
    rows[4]["questions"][0]["question_id"] = rows[4]["gold"][0]["question_id"] = qid


def _no_references(rows):
    rows[5]["gold"][1]["references"] = []


def _gold_for_unknown_question(rows):
    rows[6]["gold"].append({"question_id": "nowhere/q9", "references": ["x"]})


def _context_differs(rows):
    assert rows[1]["context_id"] == rows[0]["context_id"]
    rows[1]["context"] += " One more sentence."


def _empty_context(rows):
    cid = rows[8]["context_id"]
    for row in rows:
        if row["context_id"] == cid:
            row["context"] = ""


def _empty_question(rows):
    rows[9]["questions"][0]["question"] = "   "


def _invisible_context(rows):
    cid = rows[8]["context_id"]
    for row in rows:
        if row["context_id"] == cid:
            row["context"] = "\u200b\u200b\u200b"


def _invisible_goal(rows):
    rows[3]["goal"] = "\u202e\u00ad "


def _invisible_question(rows):
    rows[9]["questions"][0]["question"] = "\u200d\u0640"


def _invisible_reference(rows):
    rows[5]["gold"][0]["references"].append("\u200b")


def _unknown_column(rows):
    rows[10]["answers"] = ["leak"]


N_GOLD_6 = len(sample_rows()[6]["gold"])
N_REFS_5_0 = len(sample_rows()[5]["gold"][0]["references"])
EMPTY_ROWS = [i for i, r in enumerate(sample_rows()) if r["context_id"] == sample_rows()[8]["context_id"]]

BAD_CASES = {
    "missing column": (_drop_goal, {(2, "goal")}, "missing column"),
    "wrong type": (_int_context_id, {(1, "context_id")}, "must be a string, got int"),
    "duplicate goal_id": (_duplicate_goal_id, {(3, "goal_id")}, "duplicate goal_id, first seen in"),
    "duplicate question_id": (_duplicate_question_id, {(4, "questions")}, "duplicate question_id"),
    "question without references": (_no_references, {(5, "gold[1].references")}, "has no references"),
    "gold for unknown question": (
        _gold_for_unknown_question,
        {(6, f"gold[{N_GOLD_6}].question_id")},
        "'nowhere/q9' is not a question of this goal",
    ),
    "context differs": (_context_differs, {(1, "context")}, "differs from the text of context_id"),
    "empty context": (_empty_context, {(i, "context") for i in EMPTY_ROWS}, "must not be empty"),
    "empty question": (_empty_question, {(9, "questions[0].question")}, "must be a non-empty string"),
    "unknown column": (_unknown_column, {(10, "answers")}, "unknown column"),
    "invisible context": (_invisible_context, {(i, "context") for i in EMPTY_ROWS}, "must not be empty"),
    "invisible goal": (_invisible_goal, {(3, "goal")}, "must not be empty"),
    "invisible question": (_invisible_question, {(9, "questions[0].question")}, "must be a non-empty string"),
    "invisible reference": (_invisible_reference, {(5, f"gold[0].references[{N_REFS_5_0}]")}, "must not be empty"),
}


@pytest.mark.parametrize("case", BAD_CASES)
def test_find_problems_names_exactly_the_row_and_field(case):
    change, expected, message = BAD_CASES[case]
    problems = find_problems(mutated(change))
    assert {(p.row, p.field) for p in problems} == expected
    assert all(message in p.message for p in problems)


def test_references_to_other_rows_name_the_first_row():
    (problem,) = find_problems(mutated(_duplicate_goal_id))
    assert problem.message == "duplicate goal_id, first seen in row 2"
    assert str(problem) == (
        f"row 3 (goal_id={sample_rows()[2]['goal_id']!r}), field 'goal_id': duplicate goal_id, first seen in row 2"
    )


@pytest.mark.parametrize("case", BAD_CASES)
def test_gacc_data_validate_lists_file_row_and_field(case, tmp_path, capsys):
    change, expected, _ = BAD_CASES[case]
    path = write_jsonl(tmp_path / "bad.jsonl", mutated(change))
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(["data", "validate", str(path)]) == 2
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1] == f"{len(expected)} problem(s) in {path}"
    found = {(int(m[1]), m[2]) for line in lines[:-1] if (m := re.search(r"row (\d+).*field '([^']+)'", line))}
    assert found == expected
    assert all(line.startswith(f"{path}: row ") for line in lines[:-1])
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written


@pytest.mark.parametrize("case", BAD_CASES)
def test_run_benchmark_on_a_bad_file_raises_and_writes_nothing(case, tmp_path, hf_cache):
    change, expected, _ = BAD_CASES[case]
    path = write_jsonl(tmp_path / "bad.jsonl", mutated(change))
    with pytest.raises(DataValidationError) as info:
        rules_run(
            str(path),
            cache_dir=str(tmp_path / "cache"),
            compressor="goal-lines",
            ratios=(0.1, 0.2),
            conditions=("own", "none", "cross"),
        )
    assert {(p.row, p.field) for p in info.value.problems} == expected
    assert not (tmp_path / "cache").exists()
    assert not hf_cache.exists()


@pytest.mark.parametrize("case", ["missing column", "duplicate question_id", "empty question"])
def test_gacc_run_on_a_bad_file_exits_2_and_writes_nothing(case, tmp_path, capsys):
    change, expected, _ = BAD_CASES[case]
    path = write_jsonl(tmp_path / "bad.jsonl", mutated(change))
    args = ["run", "--data", str(path), "--cache-dir", str(tmp_path / "c"), "--output-dir", str(tmp_path / "o")]
    assert main([*args, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert all(f"row {row}" in err and f"field {field!r}" in err for row, field in expected)
    assert not (tmp_path / "c").exists() and not (tmp_path / "o").exists()


def test_validate_over_rows_raises_with_every_problem():
    rows = mutated(lambda r: (_drop_goal(r), _empty_question(r)))
    with pytest.raises(DataValidationError) as info:
        validate(rows)
    assert {(p.row, p.field) for p in info.value.problems} == {(2, "goal"), (9, "questions[0].question")}


def test_visible_text_around_format_characters_and_punctuation_only_references_are_accepted():
    def change(rows):
        context = rows[0]["context"]
        for row in rows:
            if row["context"] == context:
                row["context"] = context.replace(" ", " \u200b", 1)
        rows[0]["gold"][0]["references"] += ["。", " "]  # punctuation is compared as itself; a blank one is left out

    rows = mutated(change)
    assert find_problems(rows) == []
    assert validate(rows)[0].questions[0].references[-1] == "。"


def test_parquet_with_a_wrong_column_type_is_reported_per_row(tmp_path, capsys):
    rows = sample_rows()[:3]
    for i, row in enumerate(rows):
        row["goal"] = i
    path = write_parquet(tmp_path / "bad.parquet", rows)
    assert {(p.row, p.field) for p in find_file_problems([path])} == {(0, "goal"), (1, "goal"), (2, "goal")}
    assert main(["data", "validate", str(path)]) == 2
    assert "must be a string, got int" in capsys.readouterr().out


def test_invalid_json_lines_are_named_by_line(tmp_path):
    path = tmp_path / "broken.jsonl"
    lines = write_jsonl(tmp_path / "ok.jsonl", sample_rows()[:3]).read_text().splitlines()
    path.write_text("\n".join([lines[0], "{not json", "", lines[1], "[1, 2"]) + "\n")
    problems = find_file_problems([path])
    assert [p.message.split(":")[0] for p in problems] == ["line 2 is not valid JSON", "line 5 is not valid JSON"]
    assert all(p.file == str(path) for p in problems)


def test_problems_across_files_point_into_each_file(tmp_path):
    rows = sample_rows()
    a = write_jsonl(tmp_path / "a.jsonl", rows[:2])
    b = write_jsonl(tmp_path / "b.jsonl", [rows[1], *rows[2:4]])  # rows[1] again: its ids are duplicates
    problems = find_file_problems([a, b])
    assert {(p.file, p.row, p.field) for p in problems} == {(str(b), 0, "goal_id"), (str(b), 0, "questions")}
    assert all(f"{a} row 1" in p.message for p in problems)


def test_an_empty_file_is_a_problem(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n")
    (problem,) = find_file_problems([path])
    assert problem.message == "the file has no rows"


# --- the gold never reaches a compressor or a reader --------------------------------------------------


def test_through_the_runner_gold_reaches_only_the_judge():
    rows = sample_rows()
    seen: dict[str, list] = {"compressor": [], "reader": [], "judge": []}

    def compressor(item):
        seen["compressor"].append(item)
        return f"{item.goal}\n{item.context}"  # echoes all it got, so a leak would also reach the reader

    def reader(item):
        seen["reader"].append(item)
        return item.memory[:12]

    def judge(item):
        seen["judge"].append(item)
        return False

    result = run_benchmark(
        load_sample("judge"),
        compressor=compressor,
        reader=reader,
        judge=judge,
        ratios=(0.5,),
        conditions=("own", "none", "cross"),
        n_bootstrap=0,
        progress=False,
    )
    assert result.integrity["exposures"] == 0
    contexts = {r["context"] for r in rows}
    goals = {r["goal"] for r in rows} | {""}
    questions = {q["question_id"]: q["question"] for r in rows for q in r["questions"]}
    goal_of = {q["question_id"]: r for r in rows for q in r["questions"]}
    gold = {g["question_id"]: tuple(g["references"]) for r in rows for g in r["gold"]}
    # references written nowhere else: only the gold column could carry them
    gold_only = {
        ref
        for refs in gold.values()
        for ref in refs
        if all(ref not in t for t in [*contexts, *goals, *questions.values()])
    }
    assert len(gold_only) >= 10

    # one memory per (context, shown goal, L): 35 own goals + 15 empty goals ("none", one per context);
    # "cross" shows another goal of the same context, whose own memory is reused
    assert len(seen["compressor"]) == 35 + 15
    for item in seen["compressor"]:
        assert type(item) is CompressorInput
        assert {f.name for f in dataclasses.fields(item)} == {"context", "goal", "token_budget"}
        assert item.context in contexts and item.goal in goals
        assert not any(q in item.context or q in item.goal for q in questions.values())
        assert not any(ref in item.context or ref in item.goal for ref in gold_only)

    assert len(seen["reader"]) == 155 * 3
    for item in seen["reader"]:
        assert type(item) is ReaderInput
        assert {f.name for f in dataclasses.fields(item)} == {"memory", "question"}
        (qid,) = [qid for qid, text in questions.items() if text == item.question]
        siblings = [q["question"] for q in goal_of[qid]["questions"] if q["question_id"] != qid]
        assert not any(s in item.memory for s in siblings)
        assert not any(ref in item.memory or ref in item.question for ref in gold_only)

    for item in seen["judge"]:
        (qid,) = [qid for qid, text in questions.items() if text == item.question]
        assert type(item) is JudgeInput
        assert item.references == gold[qid]
        assert item.source == goal_of[qid]["context"]

    every_input = [x for items in seen.values() for x in items]
    assert {type(x) for x in every_input if hasattr(x, "references")} == {JudgeInput}


def test_the_public_view_gets_one_message_naming_the_judge_view():
    with pytest.raises(DataValidationError) as info:
        rules_run(
            load_sample("public"), compressor="goal-lines", ratios=(0.1, 0.2), conditions=("own", "none", "cross")
        )
    (problem,) = info.value.problems  # one, not one per row (the sample has 35)
    assert problem.field == "gold" and "public view" in problem.message
    assert "load_dataset(repo, 'judge')" in problem.message and "load_sample('judge')" in problem.message


def test_judge_rows_missing_some_gold_are_still_named_row_by_row():
    rows = mutated(lambda rows: [r.pop("gold") for r in rows[:2]])
    problems = find_problems(rows)
    assert [(p.row, p.field, p.message) for p in problems] == [(i, "gold", "missing column") for i in (0, 1)]


def test_validate_checks_a_file_without_gold_as_a_public_view(tmp_path, capsys):
    path = write_jsonl(tmp_path / "public.jsonl", _public_rows())
    assert main(["data", "validate", str(path)]) == 0
    assert "ok: no problems" in capsys.readouterr().out
    assert main(["data", "validate", str(path), "--config", "judge"]) == 2
    out = capsys.readouterr().out
    assert "public view" in out and "1 problem(s)" in out
    rows = _public_rows()
    rows[3]["goal"] = ""
    bad = write_jsonl(tmp_path / "bad.jsonl", rows)
    assert main(["data", "validate", str(bad)]) == 2  # checked as a public view: the real problem is named
    assert "row 3 (goal_id=" in capsys.readouterr().out


def _public_rows():
    return [{k: v for k, v in r.items() if k != "gold"} for r in sample_rows()]


def test_a_datasetdict_of_one_split_is_that_split():
    import datasets

    judge = load_sample("judge")
    assert len(validate(datasets.DatasetDict({"test": judge}))) == 35
    result = rules_run(
        datasets.DatasetDict({"validation": judge.select(range(2))}),
        compressor="truncate",
        ratios=(0.5,),
        conditions=("own",),
        n_bootstrap=0,
    )
    assert len(result.memories) == 2
    with pytest.raises(DataValidationError, match=r"DatasetDict with splits \['a', 'b'\]; pass one split"):
        validate(datasets.DatasetDict({"a": judge, "b": judge}))


# --- stats ---------------------------------------------------------------------------------------------


def test_data_stats_of_the_sample_match_an_independent_count():
    rows = sample_rows()
    lengths = sorted(independent_count(text) for _, text in _contexts(rows).values())
    stats = data_stats(rows)
    assert (stats.contexts, stats.goals, stats.questions) == (15, 35, 155)
    assert stats.context_tokens == tuple(lengths)
    assert sum(stats.sources.values()) == 15 and len(stats.sources) == 7
    assert stats.goals_per_context == (2, 3)
    assert len(stats.answer_tokens) == len(stats.question_tokens) == 155
    hist = stats.histogram()
    assert sum(c for _, _, c in hist) == 15
    assert hist[0][0] <= lengths[0] and lengths[-1] < hist[-1][1]
    assert all(high - low == hist[0][1] - hist[0][0] for low, high, _ in hist) and len(hist) <= 10
    text = stats.text()
    q1, q2, q3 = np.percentile(lengths, [25, 50, 75])
    assert f"min {lengths[0]}, p25 {q1:g}, median {q2:g}, p75 {q3:g}, max {lengths[-1]}" in text
    assert f"mean {statistics.fmean(lengths):.1f}" in text


def test_public_rows_have_no_answer_stats():
    stats = data_stats(load_sample("public"))
    assert stats.answer_tokens == () and "answer tokens" not in stats.text()
