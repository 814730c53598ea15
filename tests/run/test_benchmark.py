"""End-to-end protocol tests with rule methods (no model): the seed's diagnostic, caching, bad input."""

from __future__ import annotations

import dataclasses
import threading
from typing import ClassVar

import pytest

import gacc_hf.run.benchmark as runner_module
from gacc_hf import get_codec, run_benchmark, synthetic
from gacc_hf.data.schema import DataValidationError
from gacc_hf.methods.rules import FieldsReader, content_words
from gacc_hf.protocol import CompressorInput, ReaderInput
from gacc_hf.run.benchmark import MethodError
from tests.helpers.runs import rules_run

FILLER = [f"Note {i}: the weekly review discussed backlog item number {i} without any decision." for i in range(40)]


def _context(fields: dict[str, str]) -> str:
    lines = list(FILLER)
    for k, (key, value) in enumerate(fields.items()):
        lines.insert(5 + 12 * k, f"{key}: {value}")
    return "\n".join(lines)


def _group(cid, source, context, gid, goal, fields, answers):
    qs = [{"question_id": f"{gid}/q{k}", "question": f"What is the {f}?"} for k, f in enumerate(fields)]
    gold = [{"question_id": q["question_id"], "references": [answers[f]]} for q, f in zip(qs, fields, strict=True)]
    return {
        "context_id": cid,
        "source": source,
        "context": context,
        "goal_id": gid,
        "goal": goal,
        "questions": qs,
        "gold": gold,
    }


# each goal's third field is long: one budget keeps two whole fields and cuts into the third everywhere
A = {
    "owner": "Alice Moreau",
    "severity": "SEV-2",
    "region": "eu-west-1 zone b behind the shared load balancer",
    "start": "09:14 UTC",
    "detection": "09:31 UTC",
    "resolution": "11:02 UTC on the following Tuesday morning",
}
B = {
    "supplier": "Northwind Parts",
    "term": "24 months",
    "law": "the courts of England and Wales in London",
    "price": "EUR 40,000",
    "discount": "7 percent",
    "deadline": "the first of March in the year 2026",
}


def diagnostic_rows() -> list[dict]:
    """2 sources, 4 goals, 12 questions; each goal names its three fields."""
    ca, cb = _context(A), _context(B)
    return [
        _group(
            "ctx-a", "incident-reports", ca, "a/people", "owner severity region", ["owner", "severity", "region"], A
        ),
        _group(
            "ctx-a",
            "incident-reports",
            ca,
            "a/timing",
            "start detection resolution",
            ["start", "detection", "resolution"],
            A,
        ),
        _group("ctx-b", "supplier-contracts", cb, "b/legal", "supplier term law", ["supplier", "term", "law"], B),
        _group(
            "ctx-b",
            "supplier-contracts",
            cb,
            "b/money",
            "price discount deadline",
            ["price", "discount", "deadline"],
            B,
        ),
    ]


class GoalLinePicker:
    """The seed's rule compressor: the lines that contain a goal word, in source order (no packing)."""

    name = "line-picker"
    revision = "line-picker-v1"

    def __init__(self) -> None:
        self.inputs: list[CompressorInput] = []

    def __call__(self, item: CompressorInput) -> str:
        self.inputs.append(item)
        words = content_words(item.goal)
        return "\n".join(ln for ln in item.context.splitlines() if words & content_words(ln.split(":")[0]))


def cutting_ratio(rows) -> float:
    """A ratio whose budget keeps each goal's first two field lines whole and cuts into the third."""
    codec = get_codec()
    picker = GoalLinePicker()
    for milli in range(1, 400):
        r = milli / 1000
        ok = True
        for row in rows:
            n = len(codec.encode(row["context"]))
            lines = picker(CompressorInput(row["context"], row["goal"], 0)).splitlines()
            two = len(codec.encode("\n".join(lines[:2]) + "\n"))
            three = len(codec.encode("\n".join(lines)))
            ok &= two + 1 <= (n * milli) // 1000 < three
        if ok:
            return r
    raise AssertionError("fixture has no cutting ratio")


def test_seed_diagnostic_micro_two_thirds_macro_zero_and_warm_rerun(cache_dir):
    rows = diagnostic_rows()
    ratio = cutting_ratio(rows)
    picker = GoalLinePicker()
    kwargs = dict(
        reader="fields", judge="exact", ratios=[ratio], conditions=["own"], cache_dir=cache_dir, progress=False
    )
    first = run_benchmark(rows, compressor=picker, **kwargs)
    assert len(picker.inputs) == 4 and first.calls == {"compressor": 4, "reader": 12, "judge": 12}
    (s,) = first.scores
    assert s["n_questions"] == 12 and s["n_goals"] == 4
    assert s["micro"] == pytest.approx(2 / 3)
    assert s["macro"] == 0.0  # mean per-goal accuracy would be 2/3: Macro is all-correct
    assert first.integrity == {"budget_violations": 0, "count_errors": 0, "exposures": 0}
    wrong = [a for a in first.answers if not a["correct"]]
    assert sorted(a["question_id"] for a in wrong) == ["a/people/q2", "a/timing/q2", "b/legal/q2", "b/money/q2"]
    for m in first.memories:
        assert m["truncated"] and m["reencoded_tokens"] <= m["budget"] and m["padding_tokens"] == 0
        assert m["unused_budget"] == m["budget"] - m["retained_tokens"] and m["compressor_called"]
    second = run_benchmark(rows, compressor=GoalLinePicker(), **kwargs)
    assert second.calls == {"compressor": 0, "reader": 0, "judge": 0}
    assert second.scores == first.scores and second.answers == first.answers
    assert second.integrity == first.integrity
    assert all(m["cached"] for m in second.memories)


def test_compressor_never_sees_questions_or_gold_and_reader_one_question(cache_dir):
    rows = diagnostic_rows()
    picker = GoalLinePicker()
    seen: list[ReaderInput] = []

    def reader(item: ReaderInput) -> str:
        seen.append(item)
        return "x"

    result = run_benchmark(
        rows,
        compressor=picker,
        reader=reader,
        judge="exact",
        ratios=[0.2],
        conditions=["own", "none", "cross"],
        cache_dir=cache_dir,
        progress=False,
    )
    questions = [q["question"] for r in rows for q in r["questions"]]
    for item in picker.inputs:
        assert type(item) is CompressorInput
        assert not any(q in item.goal or q in item.context for q in questions)
    for item in seen:
        assert type(item) is ReaderInput and item.question in questions
        assert sum(q in item.question for q in questions) == 1
    assert result.integrity["exposures"] == 0


def test_memory_computed_once_across_conditions(cache_dir):
    rows = diagnostic_rows()
    picker = GoalLinePicker()
    result = rules_run(
        rows, compressor=picker, ratios=[0.1, 0.2], conditions=["own", "none", "cross"], cache_dir=cache_dir
    )
    # own: 4 goals; none: 2 contexts (shared by their goals); cross reuses the sibling goal's own memory
    assert result.calls["compressor"] == (4 + 2) * 2 == len(picker.inputs)
    assert len({(i.context, i.goal, i.token_budget) for i in picker.inputs}) == len(picker.inputs)
    assert len(result.memories) == 4 * 3 * 2


def _rerun_calls(rows, cache_dir, compressor, ratios=(0.2,)):
    result = rules_run(rows, compressor=compressor, ratios=list(ratios), conditions=["own"], cache_dir=cache_dir)
    return result.calls["compressor"]


def test_cache_hits_only_when_nothing_changes(cache_dir, monkeypatch):
    rows = diagnostic_rows()
    assert _rerun_calls(rows, cache_dir, GoalLinePicker()) == 4
    assert _rerun_calls(rows, cache_dir, GoalLinePicker()) == 0  # nothing changed: hit

    bumped = GoalLinePicker()
    bumped.revision = "line-picker-v2"
    assert _rerun_calls(rows, cache_dir, bumped) == 4  # compressor revision

    assert _rerun_calls(rows, cache_dir, GoalLinePicker(), ratios=(0.25,)) == 4  # L

    edited = [dict(r) for r in rows]
    edited[0]["goal"] = "owner severity region, please"
    assert _rerun_calls(edited, cache_dir, GoalLinePicker()) == 1  # goal text of one group

    other = dataclasses.replace(get_codec(), revision="0" * 64)
    monkeypatch.setattr(runner_module, "get_codec", lambda: other)
    assert _rerun_calls(rows, cache_dir, GoalLinePicker()) == 4  # tokenizer revision


def test_zero_budget_calls_nothing_and_full_condition_is_the_source(cache_dir):
    rows = diagnostic_rows()
    picker = GoalLinePicker()
    result = rules_run(rows, compressor=picker, ratios=[0.0], conditions=["own", "full"], cache_dir=cache_dir)
    assert picker.inputs == [] and result.calls["compressor"] == 0
    own = [m for m in result.memories if m["condition"] == "own"]
    assert all(m["budget"] == 0 and not m["compressor_called"] and m["reencoded_tokens"] == 0 for m in own)
    full = {s["compressor"]: s for s in result.scores if s["condition"] == "full"}
    assert full["full-context"]["micro"] == 1.0 and full["full-context"]["macro"] == 1.0


def test_batch_is_used_when_offered(cache_dir):
    class Batched(GoalLinePicker):
        name = "batched"
        batches = 0

        def batch(self, items):
            Batched.batches += 1
            return [GoalLinePicker.__call__(self, i) for i in items]

    comp = Batched()
    rules_run(diagnostic_rows(), compressor=comp, ratios=[0.2], conditions=["own"], cache_dir=cache_dir, batch_size=2)
    assert Batched.batches == 2 and len(comp.inputs) == 4


def test_a_method_asking_for_larger_chunks_gets_them(cache_dir):
    class Chunked(GoalLinePicker):
        name = "chunked"
        chunk_size = 3  # the run's batch_size of 2 is the least, 3 items per call here
        sizes: ClassVar[list[int]] = []

        def batch(self, items):
            Chunked.sizes.append(len(items))
            return [GoalLinePicker.__call__(self, i) for i in items]

    comp = Chunked()
    rules_run(diagnostic_rows(), compressor=comp, ratios=[0.2], conditions=["own"], cache_dir=cache_dir, batch_size=2)
    assert Chunked.sizes == [3, 1]  # 4 memories (hand count: one per goal of the diagnostic rows)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "8"])
def test_a_method_declaring_a_bad_chunk_size_is_refused_before_any_call(bad, cache_dir):
    class Chunked(GoalLinePicker):
        name = "chunked"
        chunk_size = bad

    comp = Chunked()
    with pytest.raises(ValueError, match=rf"compressor 'chunked': chunk_size must be an integer >= 1, got {bad!r}"):
        rules_run(diagnostic_rows(), compressor=comp, ratios=[0.2], conditions=["own"], cache_dir=cache_dir)
    assert comp.inputs == []


@pytest.mark.parametrize(
    ("mutate", "where"),
    [
        (lambda rows: rows[1].update(goal_id="a/people"), "row 1 (goal_id='a/people'), field 'goal_id'"),
        (lambda rows: rows[1]["questions"][0].update(question_id="a/people/q0"), "row 1"),
        (lambda rows: rows[2]["gold"][0].update(references=[]), "field 'gold[0].references'"),
        (
            lambda rows: rows[3]["gold"].append({"question_id": "zz", "references": ["x"]}),
            "field 'gold[3].question_id'",
        ),
        (lambda rows: rows[0].update(context=""), "row 0 (goal_id='a/people'), field 'context'"),
        (lambda rows: rows[1].update(context="different text"), "field 'context': differs"),
        (lambda rows: rows[0]["questions"][1].update(question=" "), "field 'questions[1].question'"),
    ],
)
def test_bad_input_names_row_and_field_before_any_call(mutate, where, cache_dir):
    rows = diagnostic_rows()
    mutate(rows)
    picker = GoalLinePicker()
    with pytest.raises(DataValidationError) as err:
        rules_run(rows, compressor=picker, ratios=[0.2], cache_dir=cache_dir, conditions=("own", "none", "cross"))
    assert where in str(err.value)
    assert picker.inputs == []


@pytest.mark.parametrize("ratio", [1.5, float("nan"), -0.2])
def test_bad_ratio_fails_before_any_call(ratio, cache_dir):
    picker = GoalLinePicker()
    with pytest.raises(ValueError, match="ratio"):
        rules_run(
            diagnostic_rows(),
            compressor=picker,
            ratios=[0.2, ratio],
            cache_dir=cache_dir,
            conditions=("own", "none", "cross"),
        )
    assert picker.inputs == []


def test_unknown_method_lists_known_ones():
    with pytest.raises(ValueError, match=r"known compressors: .*goal-lines"):
        rules_run(diagnostic_rows(), compressor="nope", ratios=(0.1, 0.2), conditions=("own", "none", "cross"))


class Flaky:
    """Fails on one goal until `healed`; returns a non-string for another when `wrong_type`."""

    name = "flaky"
    revision = "flaky-v1"

    def __init__(self, fail_goal: str, wrong_type: bool = False) -> None:
        self.fail_goal, self.wrong_type, self.healed, self.calls = fail_goal, wrong_type, False, 0

    def __call__(self, item: CompressorInput):
        self.calls += 1
        if self.fail_goal in item.goal and not self.healed:
            if self.wrong_type:
                return 42
            raise RuntimeError("backend exploded")
        return item.context[:200]


@pytest.mark.parametrize("wrong_type", [False, True])
def test_failure_names_the_group_and_keeps_finished_work(wrong_type, cache_dir):
    rows = diagnostic_rows()
    comp = Flaky("price", wrong_type)
    with pytest.raises(MethodError, match=r"goal_id='b/money'.*(backend exploded|returned int)"):
        rules_run(rows, compressor=comp, ratios=[0.2], conditions=["own"], cache_dir=cache_dir, batch_size=1)
    comp.healed, comp.calls = True, 0
    result = rules_run(rows, compressor=comp, ratios=[0.2], conditions=["own"], cache_dir=cache_dir)
    assert comp.calls == 1  # only the failed group is recomputed
    assert result.scores[0]["n_errors"] == 0


def test_record_policy_keeps_going_and_retries_next_run(cache_dir):
    rows = diagnostic_rows()
    comp = Flaky("price")
    kwargs = dict(reader="fields", judge="exact", ratios=[0.2], conditions=["own"], cache_dir=cache_dir)
    kwargs |= dict(progress=False, on_error="record")
    result = run_benchmark(rows, compressor=comp, **kwargs)
    assert result.scores[0]["n_errors"] == 3 and len(result.errors) == 1
    assert "b/money" in result.errors[0]["item"]
    errored = [a for a in result.answers if a["error"]]
    assert {a["goal_id"] for a in errored} == {"b/money"} and not any(a["correct"] for a in errored)
    comp.healed, comp.calls = True, 0
    again = run_benchmark(rows, compressor=comp, **kwargs)
    assert comp.calls == 1 and again.scores[0]["n_errors"] == 0 and again.errors == []


def _head(item, n=10):
    return item.context[: n * 4]


def test_stateful_methods_never_share_a_cache_entry(cache_dir):
    """partial / closure / instance with other settings on one cache: fresh scores; equal state: 0 calls."""
    import functools

    from tests.test_protocol import Head, make_head

    rows = synthetic(seed=0, contexts=4)
    kw = dict(reader="fields", judge="exact", ratios=[1.0], conditions=["own"], cache_dir=cache_dir, progress=False)
    for build in (lambda n: functools.partial(_head, n=n), make_head, Head):
        fresh_large = run_benchmark(rows, compressor=build(100000), **{**kw, "cache_dir": None})
        run_benchmark(rows, compressor=build(2), **kw)
        after_small = run_benchmark(rows, compressor=build(100000), **kw)
        assert after_small.calls["compressor"] == len(rows)  # not served from the small one's entries
        assert after_small.scores[0]["micro"] == fresh_large.scores[0]["micro"] > 0
        again = run_benchmark(rows, compressor=build(100000), **kw)  # a new object with equal state
        assert again.calls == {"compressor": 0, "reader": 0, "judge": 0}


def test_a_method_without_usable_revision_is_refused_with_a_cache_before_any_call(cache_dir):
    from gacc_hf.protocol import MethodIdentityError
    from tests.test_protocol import HoldsModel

    with pytest.raises(MethodIdentityError, match="compressor: cannot derive a revision for method 'HoldsModel'"):
        rules_run(
            synthetic(seed=0, contexts=2),
            compressor=HoldsModel(),
            cache_dir=cache_dir,
            ratios=(0.1, 0.2),
            conditions=("own", "none", "cross"),
        )
    # without a cache nothing can be reused: it runs
    rules_run(
        synthetic(seed=0, contexts=2),
        compressor=HoldsModel(),
        n_bootstrap=0,
        ratios=(0.1, 0.2),
        conditions=("own", "none", "cross"),
    )


@pytest.mark.parametrize("ratios", [(0.1, 0.1), (0.1, "0.10"), (0.25, 0.5, 0.250)])
def test_duplicate_ratios_are_refused_before_any_call(ratios, cache_dir):
    calls = []

    def spy(item):
        calls.append(item)
        return ""

    with pytest.raises(ValueError, match="given twice"):
        rules_run(synthetic(seed=0, contexts=2), compressor=spy, ratios=ratios, conditions=("own", "none", "cross"))
    assert calls == []


def test_a_single_ratio_may_be_a_number():
    result = rules_run(
        synthetic(seed=0, contexts=2),
        ratios=0.25,
        n_bootstrap=0,
        compressor="goal-lines",
        conditions=("own", "none", "cross"),
    )
    assert {s["ratio"] for s in result.scores} == {0.25}


def test_protocol_version_enters_the_memory_key(cache_dir, monkeypatch):
    import gacc_hf.run.plan as planning

    rows = synthetic(seed=0, contexts=2)
    kw = dict(compressor="goal-lines", reader="fields", judge="exact", ratios=(0.1, 0.2), n_bootstrap=0)
    first = run_benchmark(rows, cache_dir=cache_dir, progress=False, conditions=("own", "none"), **kw)
    monkeypatch.setattr(planning, "PROTOCOL_VERSION", "gacc-next")
    second = run_benchmark(rows, cache_dir=cache_dir, progress=False, conditions=("own", "none"), **kw)
    assert second.calls["compressor"] == first.calls["compressor"] > 0


def test_data_identity_is_recorded_and_independent_of_row_order():
    import random

    rows = synthetic(seed=0, contexts=3).to_list()
    shuffled = rows[:]
    random.Random(1).shuffle(shuffled)
    a = rules_run(
        rows,
        n_bootstrap=0,
        data_spec="synthetic:contexts=3",
        split="test",
        compressor="goal-lines",
        ratios=(0.1, 0.2),
        conditions=("own", "none", "cross"),
    )
    b = rules_run(
        shuffled, n_bootstrap=0, compressor="goal-lines", ratios=(0.1, 0.2), conditions=("own", "none", "cross")
    )
    assert a.config["data"]["fingerprint"] == b.config["data"]["fingerprint"]
    assert a.config["data"]["fingerprint"].startswith("sha256:")
    assert a.config["data"]["spec"] == "synthetic:contexts=3" and a.config["data"]["split"] == "test"
    assert a.config["data"]["n_groups"] == len(rows)
    assert a.config["data"]["n_questions"] == sum(len(r["questions"]) for r in rows)
    edited = [dict(rows[0], goal=rows[0]["goal"] + "!"), *rows[1:]]
    c = rules_run(
        edited, n_bootstrap=0, compressor="goal-lines", ratios=(0.1, 0.2), conditions=("own", "none", "cross")
    )
    assert c.config["data"]["fingerprint"] != a.config["data"]["fingerprint"]
    assert a.config["methods"] == {"compressors": ["goal-lines"], "reader": "fields", "judge": "exact"}
    assert a.config["started_at"].endswith("Z") and a.config["gacc_hf_version"]


class _Counted:
    """A batched compressor that counts every item it is handed."""

    name = "counted"
    revision = "counted-v1"

    def __init__(self, mode: str) -> None:
        self.mode, self.seen = mode, 0

    def __call__(self, item):
        self.seen += 1
        return item.context[:20]

    def batch(self, items):
        self.seen += len(items)
        if self.mode == "raise":
            raise RuntimeError("backend down")
        outs = [i.context[:20] for i in items]
        return outs[:-1] if self.mode == "short" else outs


def test_batch_returning_the_wrong_number_of_outputs_is_a_contract_error(cache_dir):
    with pytest.raises(MethodError, match=r"compressor 'counted': batch\(\) returned 3 outputs for 4 inputs"):
        rules_run(
            diagnostic_rows(),
            compressor=_Counted("short"),
            ratios=[0.2],
            conditions=["own"],
            batch_size=4,
            cache_dir=cache_dir,
        )


def test_a_raising_batch_fails_its_items_once_each_and_counts_real_calls(cache_dir, caplog):
    comp = _Counted("raise")
    result = rules_run(
        diagnostic_rows(),
        compressor=comp,
        ratios=[0.2],
        conditions=["own"],
        batch_size=4,
        on_error="record",
        cache_dir=cache_dir,
    )
    assert comp.seen == 4  # each item handed over once: no item-by-item retry behind the batch
    assert result.calls["compressor"] == 4
    assert len(result.errors) == 4 and all("backend down" in e["error"] for e in result.errors)
    assert "batch() raised" in caplog.text  # logged with its traceback, not swallowed
    ok = _Counted("ok")
    healthy = rules_run(
        diagnostic_rows(), compressor=ok, ratios=[0.2], conditions=["own"], batch_size=4, cache_dir=cache_dir
    )
    assert ok.seen == 4 and healthy.errors == []  # failures were not cached: all retried


def test_an_output_with_a_lone_surrogate_is_that_items_failure(cache_dir):
    def bad(item):
        return "ok \ud800" if item.goal else "fine"  # only the goal-conditioned memories are bad

    kw = dict(reader="fields", judge="exact", ratios=[0.2], conditions=["own", "none"], on_error="record")
    result = run_benchmark(diagnostic_rows(), compressor=bad, cache_dir=cache_dir, progress=False, **kw)
    assert result.errors and all("lone surrogate" in e["error"] for e in result.errors)
    assert all(m["error"] is None for m in result.memories if m["condition"] == "none")  # the rest stored


def test_time_is_recorded_per_role_and_per_method_and_a_warm_rerun_spends_none(cache_dir):
    import time

    def slow(item):  # 20 ms a call: at least 20 ms × calls of compressor time, whatever the machine
        time.sleep(0.02)
        return item.context[:40]

    kw = dict(reader="fields", judge="exact", ratios=[0.2], conditions=["own", "none"], progress=False)
    cold = run_benchmark(diagnostic_rows(), compressor=[slow, "truncate"], cache_dir=cache_dir, **kw)
    by_method = cold.method_seconds["compressor"]
    name = cold.config["compressors"][0]["name"]  # the function's qualified name
    assert list(by_method) == [name, "truncate"]
    n_slow = len({m["memory_key"] for m in cold.memories if m["compressor"] == name})
    assert n_slow == 6  # 4 goals under own, 2 contexts under none
    assert by_method[name] >= 0.02 * n_slow > by_method["truncate"]
    assert cold.seconds["compressor"] == pytest.approx(sum(by_method.values()), abs=0.002)
    assert list(cold.method_seconds["reader"]) == ["fields"] and list(cold.method_seconds["judge"]) == ["exact"]
    warm = run_benchmark(diagnostic_rows(), compressor=[slow, "truncate"], cache_dir=cache_dir, **kw)
    assert warm.method_seconds == {"compressor": {}, "reader": {}, "judge": {}}  # nothing was called


def test_the_budget_check_runs_beside_the_readers_calls(cache_dir, monkeypatch):
    """The memories' recount (tiktoken, GIL released) overlaps the reading instead of delaying it."""
    read, seen = threading.Event(), {}
    real = runner_module.budget_violations

    def check(*args):  # type: ignore[no-untyped-def]
        seen["thread"] = threading.current_thread().name
        seen["reader_called_meanwhile"] = read.wait(timeout=10)  # never set if the check ran before the reading
        return real(*args)

    class Reader(FieldsReader):
        def __call__(self, item: ReaderInput) -> str:
            read.set()
            return super().__call__(item)

    monkeypatch.setattr(runner_module, "budget_violations", check)
    got = rules_run(synthetic(seed=3, contexts=2), reader=Reader(), cache_dir=cache_dir)
    assert seen == {"thread": "gacc-budget_0", "reader_called_meanwhile": True}
    assert got.integrity["budget_violations"] == 0
