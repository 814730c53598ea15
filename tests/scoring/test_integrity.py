"""Every integrity counter fires on a planted fault and reads 0 on honest work."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from gacc_hf import run_benchmark, synthetic
from gacc_hf.data.jsonl import load_sample
from gacc_hf.data.schema import Group, Question, validate
from gacc_hf.run.cache import Cache
from gacc_hf.scoring.integrity import (
    MIN_REFERENCE_CHARS,
    budget_violations,
    count_errors,
    find_exposures,
    independent_budget,
)
from gacc_hf.text.matching import normalize_answer
from gacc_hf.tokenizer import get_codec
from tests.helpers.paths import FIXTURES
from tests.helpers.runs import rules_run

SAMPLE = load_sample("judge")


@pytest.mark.parametrize(
    ("n", "ratio", "expected"),
    [
        (3, Fraction(1, 3), 1),  # 1/3 * 3 = 1 exactly (a float recount gives 0)
        (100, 0.29, 29),  # 0.29 * 100 = 29 (binary floating point gives 28.999...)
        (7, Fraction(1, 7), 1),
        (700, Fraction(1, 7), 100),
        (10, "0.10", 1),
        (57, 0.57, 32),  # 0.57 * 57 = 32.49
        (1000, 1, 1000),
        (1000, 0, 0),
    ],
)
def test_independent_budget_is_exact_for_rationals(n, ratio, expected):
    assert independent_budget(n, ratio) == expected


def test_ratio_one_third_gives_no_count_error(cache_dir):
    result = rules_run(
        synthetic(seed=0, contexts=3),
        ratios=[Fraction(1, 3), Fraction(1, 7)],
        compressor="goal-lines",
        conditions=("own", "none", "cross"),
    )
    assert result.integrity["count_errors"] == 0


def test_count_errors_fires_on_a_wrong_primary_count(tmp_path):
    groups = validate(SAMPLE.select(range(2)))
    codec = get_codec()
    true_n = {g.context: len(codec.encode(g.context)) for g in groups}
    with Cache(str(tmp_path / "c")) as cache:
        assert count_errors(groups, true_n, [0.1], cache) == 0
        off = {t: n + 1 for t, n in true_n.items()}  # an N the independent BPE cannot agree with
        # each distinct context: one N disagreement (the L recount of the same N agrees)
        assert count_errors(groups, off, [0.1], cache) == len(true_n)


def test_budget_violations_fires_on_an_over_budget_memory():
    codec = get_codec()
    ledger = [{"memory_key": "k1", "budget": 2}, {"memory_key": "k2", "budget": 2}, {"memory_key": "k3", "budget": 0}]
    memories = {
        "k1": {"memory": "hello world"},  # 2 tokens: [15339, 1917]
        "k2": {"memory": "hello world again"},  # 3 tokens > 2
        "k3": {"error": "failed"},  # failures have no memory to check
    }
    assert budget_violations(ledger, memories, codec) == 1


def _cheater(rows):
    """A compressor that closes over the dataset and writes the held-out questions and gold into its memory."""
    leaks: dict[str, list[str]] = {}
    for r in rows:
        leaks.setdefault(r["context"], []).extend(q["question"] for q in r["questions"])
        leaks[r["context"]].extend(ref for g in r["gold"] for ref in g["references"])

    def cheat(item):
        return " ".join(leaks[item.context])

    return cheat


def test_a_cheating_compressor_is_caught_and_its_rows_listed():
    rows = SAMPLE.select(range(3)).to_list()
    result = rules_run(rows, compressor=_cheater(rows), ratios=[1.0], conditions=["own"], n_bootstrap=0)
    assert result.integrity["exposures"] > 0
    assert result.integrity["exposures"] == len(result.exposures)
    kinds = {e["kind"] for e in result.exposures}
    assert "question" in kinds
    first = rows[0]["questions"][0]["question"]
    assert any(e["text"] == first and e["goal_id"] == rows[0]["goal_id"] for e in result.exposures)


def test_questions_of_a_sibling_goal_count_too():
    rows = SAMPLE.select(range(3)).to_list()
    assert rows[0]["context_id"] == rows[1]["context_id"]  # two goals of one context
    sibling = rows[1]["questions"][0]["question"]

    def writes_sibling(item):
        return item.context[:200] + " " + sibling

    result = rules_run(rows[:2], compressor=writes_sibling, ratios=[1.0], conditions=["own"])
    leaked = [e for e in result.exposures if e["text"] == sibling]
    assert {e["goal_id"] for e in leaked} == {rows[0]["goal_id"], rows[1]["goal_id"]}


def _kinds(row):
    """The gold references of a row absent from its source, sorted into the detector's three kinds by hand rules."""
    text = normalize_answer(row["context"] + " " + row["goal"])
    words = set(text.split())
    words |= {w + "s" for w in words}
    absent = [r for g in row["gold"] for r in g["references"] if f" {normalize_answer(r)} " not in f" {text} "]
    short = [r for r in absent if len(normalize_answer(r)) < MIN_REFERENCE_CHARS]
    long = [r for r in absent if r not in short]
    novel = [r for r in long if set(normalize_answer(r).split()) - words]
    return short, [r for r in long if r not in novel], novel


def test_a_reference_absent_from_the_source_counts_only_when_long_and_novel():
    # a group of the sample that has all three kinds, e.g. "twenty-four months" for a source saying
    # "24 months" (novel), a phrase made of the source's own words (assembled), "6 months" (short)
    row = next(r for r in SAMPLE.to_list() if all(_kinds(r)))
    short, assembled, novel = _kinds(row)

    def paraphrase(item):
        return " ".join(short + assembled)

    quiet = rules_run([row], compressor=paraphrase, ratios=[1.0], conditions=["own"])
    assert quiet.integrity["exposures"] == 0

    def leak(item):
        return novel[0]

    loud = rules_run([row], compressor=leak, ratios=[1.0], conditions=["own"])
    assert [(e["kind"], e["text"]) for e in loud.exposures] == [("reference", novel[0])]


def test_text_that_the_source_or_shown_goal_holds_is_no_exposure():
    groups = validate(SAMPLE.select(range(1)))
    g = groups[0]
    ledger = [{"memory_key": "m", "context_id": g.context_id, "goal_id": g.goal_id, "shown_goal_id": "x",
               "condition": "own", "compressor": "c", "ratio": 1.0}]  # fmt: skip
    question = g.questions[0].question
    memories = {"m": {"memory": question}}
    assert len(find_exposures(ledger, memories, groups, {"x": ""})) == 1
    assert find_exposures(ledger, memories, groups, {"x": "Please answer: " + question}) == []


@pytest.mark.parametrize("compressor", ["truncate", "goal-lines"])
def test_built_in_rule_compressors_expose_nothing(compressor):
    for data in (SAMPLE, synthetic(seed=0, contexts=20)):
        result = rules_run(
            data,
            compressor=compressor,
            ratios=[0.1, 0.5, 1.0],
            conditions=["own", "none", "cross", "oracle", "full"],
            n_bootstrap=0,
        )
        assert result.integrity == {"budget_violations": 0, "count_errors": 0, "exposures": 0}


ZH_ROWS = [json.loads(line) for line in (FIXTURES / "zh_fixture.jsonl").read_text().splitlines()]


def test_a_compressor_writing_chinese_questions_or_gold_is_caught():
    first = ZH_ROWS[0]["questions"][0]["question"]

    def writes_question(item):
        return item.context[:50] + first

    caught = run_benchmark(
        ZH_ROWS, compressor=writes_question, ratios=[1.0], conditions=["own"], progress=False, reader="fields",
        judge="contains"
    )  # fmt: skip
    assert {e["text"] for e in caught.exposures} == {first}
    novel = "凭据轮换流水线的签名密钥"  # 11 Han characters, bigrams the fixture never shows

    def writes_gold(item):
        return item.context[:50] + novel

    rows = [dict(r, gold=[dict(r["gold"][0], references=[*r["gold"][0]["references"], novel]), *r["gold"][1:]])
            for r in ZH_ROWS[:1]]  # fmt: skip
    loud = run_benchmark(
        rows,
        compressor=writes_gold,
        ratios=[1.0],
        conditions=["own"],
        progress=False,
        reader="fields",
        judge="contains",
    )
    assert [(e["kind"], e["text"]) for e in loud.exposures] == [("reference", novel)]


@pytest.mark.parametrize(
    ("reference", "counts"),
    [
        ("签名密钥轮换流水线", True),  # 9 Han characters, bigrams never shown
        ("签名密钥", False),  # 4 Han characters: weighs 8 < 12, a short form
        ("失败告警发往邮件组停用", True),  # one new bigram ("组停")
        ("失败告警发往邮件组已经停用", False),  # long and not in the source, but every bigram is: assembled
        ("a rotating signing key", True),  # English rule unchanged: 18 characters, new words
    ],
)
def test_the_cjk_false_alarm_rule(reference, counts):
    context = "失败告警发往邮件组。那个邮件组已经停用。"
    group = Group("c", "test", context, "c/g", "", (Question("c/g/q", "发往哪里？", (reference,)),))
    ledger = [{"memory_key": "m", "context_id": "c", "goal_id": "c/g", "shown_goal_id": "", "condition": "own",
               "compressor": "x", "ratio": 1.0}]  # fmt: skip
    found = find_exposures(ledger, {"m": {"memory": reference}}, [group], {"": ""})
    assert [e["text"] for e in found if e["kind"] == "reference"] == ([reference] if counts else [])


@pytest.mark.parametrize("compressor", ["truncate", "goal-lines", "bm25"])
def test_built_in_compressors_expose_nothing_on_chinese_data(compressor):
    result = run_benchmark(
        ZH_ROWS, compressor=compressor, ratios=[0.1, 0.2, 1.0], conditions=["own", "none", "cross", "oracle", "full"],
        progress=False, n_bootstrap=0, reader="fields", judge="contains"
    )  # fmt: skip
    assert result.integrity == {"budget_violations": 0, "count_errors": 0, "exposures": 0}


@pytest.mark.parametrize(
    ("question", "hidden"),
    [
        ("Which gateway certificate expired first?", "Which gate\u200bway certi\u00adficate ex\u202epired first?"),
        ("哪个网关的证书最先过期？", "哪个网\u200d关的证\u200b书最先过\u0640期？"),
    ],
)
def test_format_characters_in_a_memory_never_hide_an_exposed_question(question, hidden):
    group = Group("c", "test", "Nothing to see. 没有内容。", "c/g", "", (Question("c/g/q", question, ("x",)),))
    ledger = [{"memory_key": "m", "context_id": "c", "goal_id": "c/g", "shown_goal_id": "", "condition": "own",
               "compressor": "x", "ratio": 1.0}]  # fmt: skip
    for memory in (question, hidden):
        assert [e["text"] for e in find_exposures(ledger, {"m": {"memory": memory}}, [group], {"": ""})] == [question]
    assert find_exposures(ledger, {"m": {"memory": "Nothing to see."}}, [group], {"": ""}) == []
