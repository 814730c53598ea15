import hashlib
import inspect
import json
import sqlite3
import sys
import textwrap
from pathlib import Path

import pytest

import gacc_hf.run.cache.matches as matches_module
from gacc_hf.data.schema import SAMPLE_PATH, Group, Question
from gacc_hf.run.aside import Aside
from gacc_hf.run.cache import CACHE_FILENAME, Cache
from gacc_hf.run.cache.matches import (
    KIND,
    Matched,
    find_matches,
    finish_matches,
    matches_revision,
    plan_matches,
    seal,
)
from gacc_hf.scoring import evidence, integrity
from gacc_hf.scoring.evidence import evidence_flags
from gacc_hf.scoring.integrity import find_exposures
from gacc_hf.text import hygiene, matching, screen
from tests.helpers.fs import run_read_only
from tests.helpers.runs import rules_run

FIXTURES = Path(__file__).parents[2] / "fixtures"
ZH_ROWS = [json.loads(line) for line in (FIXTURES / "zh_fixture.jsonl").read_text().splitlines()]
EN_ROWS = [json.loads(line) for line in SAMPLE_PATH.read_text().splitlines()[:6]]


QUESTION_OF = {r["context"]: r["questions"][0]["question"] for r in EN_ROWS + ZH_ROWS}


def _leaky(item):
    """Writes a question of its context that it was never shown, so the leak audit has something to find."""
    return item.context[:40] + " " + QUESTION_OF[item.context]


def _ledger_row(memory_key, goal_id, shown="", context_id="c"):
    return {"memory_key": memory_key, "context_id": context_id, "goal_id": goal_id, "shown_goal_id": shown,
            "condition": "own", "compressor": "x", "ratio": 1.0}  # fmt: skip


def test_the_revision_is_the_hash_of_the_matcher_and_audit_sources():
    code = "".join(inspect.getsource(m) for m in (hygiene, matching, screen, evidence, integrity))
    assert matches_revision() == "matches-v3@" + hashlib.sha256(code.encode()).hexdigest()[:16]


@pytest.mark.parametrize("rows", [EN_ROWS, ZH_ROWS], ids=["en", "zh"])
def test_a_warm_rerun_reads_what_the_matcher_found_from_the_cache(rows, tmp_path, monkeypatch):
    cold = rules_run(rows, compressor=["goal-lines", _leaky], ratios=[0.2, 1.0], cache_dir=str(tmp_path))
    assert cold.exposures  # the leaky compressor is caught ...
    with Cache(tmp_path) as c:
        stored = c.count(KIND)
    assert stored > 0

    normalised = []
    monkeypatch.setattr(
        matches_module, "memory_form", lambda text: normalised.append(text) or matching.normalized(text)
    )
    warm = rules_run(rows, compressor=["goal-lines", _leaky], ratios=[0.2, 1.0], cache_dir=str(tmp_path))
    assert warm.exposures == cold.exposures  # ... and still caught
    exposing = {m["memory"] for m in cold.memories if m["memory_key"] in {e["memory_key"] for e in cold.exposures}}
    assert set(normalised) == exposing  # only the memories whose entries claim an exposure are matched again
    assert [r["evidence"] for r in warm.answers] == [r["evidence"] for r in cold.answers]
    assert [r["evidence_hits"] for r in warm.memories] == [r["evidence_hits"] for r in cold.memories]
    with Cache(tmp_path) as c:
        assert c.count(KIND) == stored  # nothing new to store


def test_what_is_found_equals_the_audits_computed_directly():
    """Hand-made rows: evidence flags and exposures as `evidence_flags` and `find_exposures` give them."""
    context = "The ledger node ledger-pg-02 stayed read-only for 45 minutes. 账本只读了四十五分钟。"
    qs = (
        Question("c/g/q1", "How long was it read-only?", ("45 minutes",)),
        Question("c/g/q2", "Which node?", ("ledger-pg-02",)),
        Question("c/g/q3", "主库停写了多久？", ("四十五分钟",)),
    )
    group = Group("c", "test", context, "c/g", "Why did writes stop?", qs)
    memories = {
        "m1": {"memory": "ledger-pg-02 for 145 minutes"},
        "m2": {"memory": "How long was it read-only? 四十五分钟"},
        "m3": {"error": "compressor failed"},
    }
    ledger = [_ledger_row("m1", "c/g"), _ledger_row("m2", "c/g", shown="c/g"), _ledger_row("m3", "c/g")]
    shown = {"": "", "c/g": group.goal}
    with Cache(None) as cache:
        plan = plan_matches(ledger, memories, [group], [group], shown, cache)
        found = finish_matches(plan, ledger, {"c/g": group}, find_matches(plan.todo, {"c/g": group}, plan.held), cache)
    assert found[0] == Matched([False, True, False], [])  # `45 minutes` is not in `145 minutes`
    assert found[1] == Matched([False, False, True], [("question", "How long was it read-only?")])
    assert found[2] == Matched([False, False, False], [])  # a failed memory finds nothing
    assert [m.evidence for m in found[:2]] == [evidence_flags(memories[k]["memory"], qs) for k in ("m1", "m2")]
    direct = find_exposures(ledger, memories, [group], shown)
    assert [(e["memory_key"], e["kind"], e["text"]) for e in direct] == [("m2", "question", qs[0].question)]


def _entries(folder):
    with sqlite3.connect(folder / CACHE_FILENAME) as db:
        return db.execute("SELECT key, value FROM entries WHERE kind=?", (KIND,)).fetchall()


def test_a_damaged_entry_is_not_used_and_is_replaced(tmp_path):
    cold = rules_run(ZH_ROWS, compressor=_leaky, ratios=[1.0], cache_dir=str(tmp_path))
    key, value = next((k, v) for k, v in _entries(tmp_path) if json.loads(v)["exposed"])
    with sqlite3.connect(tmp_path / CACHE_FILENAME) as db:  # an entry claiming the memory exposes nothing
        db.execute("UPDATE entries SET value=? WHERE kind=? AND key=?", ('{"evidence": 7, "exposed": []}', KIND, key))
    warm = rules_run(ZH_ROWS, compressor=_leaky, ratios=[1.0], cache_dir=str(tmp_path))
    assert warm.exposures == cold.exposures
    assert dict(_entries(tmp_path))[key] == value  # the recomputed value replaced the damaged one


@pytest.mark.parametrize("rows", [EN_ROWS, ZH_ROWS], ids=["en", "zh"])
def test_an_invented_exposure_in_the_cache_is_recomputed_not_reported(rows, tmp_path):
    cold = rules_run(rows, compressor="goal-lines", ratios=[1.0], cache_dir=str(tmp_path))
    assert not cold.exposures
    key, value = _entries(tmp_path)[0]
    forged = {**json.loads(value), "exposed": [["question", "an invented question 编造的问题？"]]}
    forged["seal"] = seal(key, forged)  # even a forger who seals the entry again is not believed
    with sqlite3.connect(tmp_path / CACHE_FILENAME) as db:
        db.execute("UPDATE entries SET value=? WHERE kind=? AND key=?", (json.dumps(forged), KIND, key))
    warm = rules_run(rows, compressor="goal-lines", ratios=[1.0], cache_dir=str(tmp_path))
    assert warm.exposures == [] and warm.integrity["exposures"] == 0
    assert dict(_entries(tmp_path))[key] == value  # the recomputed value replaced the forged one


def test_an_entry_whose_flags_do_not_fit_its_goal_is_not_used(tmp_path):
    cold = rules_run(EN_ROWS, compressor="goal-lines", ratios=[1.0], cache_dir=str(tmp_path))
    forged = {"evidence": "1", "exposed": []}  # well formed and sealed, but one flag for several questions
    with sqlite3.connect(tmp_path / CACHE_FILENAME) as db:
        for key, _ in _entries(tmp_path):
            value = json.dumps({**forged, "seal": seal(key, forged)})
            db.execute("UPDATE entries SET value=? WHERE kind=? AND key=?", (value, KIND, key))
    warm = rules_run(EN_ROWS, compressor="goal-lines", ratios=[1.0], cache_dir=str(tmp_path))
    assert [r["evidence"] for r in warm.answers] == [r["evidence"] for r in cold.answers]
    assert all(len(json.loads(v)["evidence"]) == 1 for _, v in _entries(tmp_path))  # left, never used


def test_a_read_only_cache_without_these_entries_still_serves_a_warm_rerun(tmp_path):
    """A cache written before `matches` entries existed: read, not written; the audits are worked out again."""
    folder = tmp_path / "ro"
    rules_run(EN_ROWS, compressor="goal-lines", ratios=[0.5], cache_dir=str(folder))
    with sqlite3.connect(folder / CACHE_FILENAME) as db:
        db.execute("DELETE FROM entries WHERE kind=?", (KIND,))
    script = textwrap.dedent(
        f"""
        import json, sys
        sys.path.insert(0, {str(Path(__file__).parents[3])!r})
        from tests.helpers.runs import rules_run
        rows = [json.loads(line) for line in open({str(SAMPLE_PATH)!r}).read().splitlines()[:6]]
        r = rules_run(rows, compressor="goal-lines", ratios=[0.5], cache_dir={str(folder)!r})
        print(r.calls, r.integrity["exposures"], sum(m["evidence_hits"] for m in r.memories))
        """
    )
    proc = run_read_only(folder, [sys.executable, "-c", script])
    assert proc.returncode == 0, proc.stderr
    fresh = rules_run(EN_ROWS, compressor="goal-lines", ratios=[0.5])
    hits = sum(m["evidence_hits"] for m in fresh.memories)
    assert proc.stdout.strip() == f"{{'compressor': 0, 'reader': 0, 'judge': 0}} 0 {hits}"
    assert _entries(folder) == []  # nothing was stored


@pytest.mark.parametrize("rows", [EN_ROWS, ZH_ROWS], ids=["en", "zh"])
def test_memories_are_matched_without_filling_the_matchers_memo(rows, tmp_path):
    matching.normalized.cache_clear()
    run = rules_run(rows, compressor=["goal-lines"], ratios=[0.2, 0.5], cache_dir=str(tmp_path))
    long_memories = {m["memory"] for m in run.memories if m["condition"] == "own" and len(m["memory"]) > 200}
    assert long_memories
    for memory in long_memories:
        hits = matching.normalized.cache_info().hits
        matching.normalized(memory)
        assert matching.normalized.cache_info().hits == hits  # worked out again: the run did not keep it
    assert matches_module.memory_form(EN_ROWS[0]["context"]) == matching.normalized(EN_ROWS[0]["context"])


def test_the_matcher_in_a_process_of_its_own_finds_what_it_finds_here(tmp_path, monkeypatch):
    import gacc_hf.run.benchmark as benchmark_module

    rows, kwargs = EN_ROWS + ZH_ROWS, {"compressor": ["goal-lines", _leaky], "ratios": [0.2, 1.0]}
    here = rules_run(rows, cache_dir=str(tmp_path / "here"), **kwargs)
    monkeypatch.setattr(benchmark_module, "APART_FROM", 0)
    spawned = []
    monkeypatch.setattr(benchmark_module, "Aside", lambda *a, apart: spawned.append(apart) or Aside(*a, apart=apart))
    apart = rules_run(rows, cache_dir=str(tmp_path / "apart"), **kwargs)
    assert spawned == [True] and here.exposures  # the leaky compressor gives the audit something to find
    assert (apart.exposures, apart.memories, apart.answers) == (here.exposures, here.memories, here.answers)
    assert _entries(tmp_path / "apart") == _entries(tmp_path / "here")  # the same entries stored


@pytest.mark.parametrize("rows", [EN_ROWS, ZH_ROWS], ids=["en", "zh"])
def test_hand_edited_flags_are_said_and_recomputed_before_the_run_uses_them(rows, tmp_path, caplog):
    cold = rules_run(rows, compressor="goal-lines", ratios=[0.2, 1.0], cache_dir=str(tmp_path))
    entries = _entries(tmp_path)
    key, value = next((k, v) for k, v in entries if "1" in json.loads(v)["evidence"])  # a row with evidence
    edited = {**json.loads(value), "evidence": json.loads(value)["evidence"].replace("1", "0")}
    with sqlite3.connect(tmp_path / CACHE_FILENAME) as db:  # flags that move outcomes and evidence recall
        db.execute("UPDATE entries SET value=? WHERE kind=? AND key=?", (json.dumps(edited), KIND, key))
    with caplog.at_level("WARNING", logger="gacc_hf.run.cache.store"):
        warm = rules_run(rows, compressor="goal-lines", ratios=[0.2, 1.0], cache_dir=str(tmp_path))
    assert [r["evidence"] for r in warm.answers] == [r["evidence"] for r in cold.answers]
    assert [r["outcome"] for r in warm.answers] == [r["outcome"] for r in cold.answers]
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and f"matches/{key[:16]} is unusable (edited: its seal does not fit" in said[0]
    assert dict(_entries(tmp_path))[key] == value  # the recomputed value replaced the edited one
    caplog.clear()
    with caplog.at_level("WARNING", logger="gacc_hf.run.cache.store"):  # quiet: an untouched cache
        rules_run(rows, compressor="goal-lines", ratios=[0.2, 1.0], cache_dir=str(tmp_path))
    assert caplog.records == []


def test_a_hidden_exposure_is_found_again(tmp_path):
    cold = rules_run(ZH_ROWS, compressor=_leaky, ratios=[1.0], cache_dir=str(tmp_path))
    assert cold.exposures
    with sqlite3.connect(tmp_path / CACHE_FILENAME) as db:  # every entry edited to expose nothing
        for key, value in _entries(tmp_path):
            hidden = json.dumps({**json.loads(value), "exposed": []})
            db.execute("UPDATE entries SET value=? WHERE kind=? AND key=?", (hidden, KIND, key))
    warm = rules_run(ZH_ROWS, compressor=_leaky, ratios=[1.0], cache_dir=str(tmp_path))
    assert warm.exposures == cold.exposures and warm.integrity["exposures"] == cold.integrity["exposures"]
