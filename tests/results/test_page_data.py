"""The data the results page embeds: sources from `full` rows, kept spans, outcomes read or derived."""

from __future__ import annotations

from gacc_hf.results.layout import RunResults
from gacc_hf.results.page_data import js_spans, page_data, row_outcome

SOURCE = "First line.\nThe key is K-7.\n最后一行。"


def _memory(condition: str, compressor: str, text: str, ratio: float = 0.5, **extra) -> dict:
    return {
        "context_id": "c1",
        "goal_id": "c1/g1",
        "condition": condition,
        "compressor": compressor,
        "ratio": ratio,
        "memory": text,
        "memory_sha256": f"sha-{text}",
        "retained_tokens": 3,
        "budget": 4,
        "error": None,
        **extra,
    }


def _answer(compressor: str, condition: str, correct, evidence, ratio: float = 0.5, **extra) -> dict:
    return {
        "compressor": compressor,
        "condition": condition,
        "ratio": ratio,
        "context_id": "c1",
        "goal_id": "c1/g1",
        "question_id": "c1/g1/q1",
        "question": "What is the key?",
        "references": ["k-7"],
        "answer": "K-7",
        "correct": correct,
        "evidence": evidence,
        "error": None,
        **extra,
    }


def _run(memories: list[dict], answers: list[dict]) -> RunResults:
    return RunResults({"config": {}, "scores": []}, answers, memories)


def test_the_source_is_the_full_memory_and_a_method_memory_is_spans_of_it():
    memories = [
        _memory("full", "full-context", SOURCE, 1.0, ceiling=True),
        _memory("own", "lines", "The key is K-7.\n最后一行。\nA summary line."),
    ]
    data = page_data(_run(memories, [_answer("lines", "own", True, True)]))
    assert data["sources"] == {"c1": SOURCE}
    (goal,) = data["goals"]
    assert goal["memories"] == {"0": [0, 3, 4], "1": [1, 3, 4]}
    start, end = data["kept"][1]["s"]
    assert SOURCE[start:end] == "The key is K-7.\n最后一行。" and data["kept"][1]["o"] == "A summary line."
    assert data["kept"][0] == {"s": [0, len(SOURCE)]}
    assert goal["questions"][0]["marks"] == [SOURCE.index("K-7"), SOURCE.index("K-7") + 3]
    assert data["cells"] == [["full-context", "full", 1.0, True], ["lines", "own", 0.5, False]]


def test_without_a_full_row_a_memory_is_shown_as_text():
    data = page_data(_run([_memory("own", "lines", "The key is K-7.")], [_answer("lines", "own", True, True)]))
    assert data["sources"] == {} and data["kept"] == [{"s": [], "o": "The key is K-7."}]
    assert data["goals"][0]["questions"][0]["marks"] == []


def test_one_memory_text_of_a_context_is_stored_once_and_errors_are_kept():
    memories = [
        _memory("full", "full-context", SOURCE, 1.0),
        _memory("none", "lines", "First line."),
        {**_memory("none", "lines", "First line."), "goal_id": "c1/g2"},
        {**_memory("own", "lines", "", error="compressor failed"), "memory": None},
    ]
    answers = [_answer("lines", "none", True, True), {**_answer("lines", "none", True, True), "goal_id": "c1/g2"}]
    data = page_data(_run(memories, answers))
    assert data["kept"] == [{"s": [0, len(SOURCE)]}, {"s": [0, 11]}, {"s": []}]
    assert [g["memories"]["1"] for g in data["goals"]] == [[1, 3, 4], [1, 3, 4]]
    assert data["goals"][0]["memories"]["2"] == [2, 3, 4, "compressor failed"]


def test_one_memory_text_under_two_hashes_keeps_two_entries_of_the_same_spans():
    memories = [
        _memory("full", "full-context", SOURCE, 1.0),
        _memory("none", "lines", "First line."),
        {**_memory("own", "lines", "First line."), "memory_sha256": "another"},
    ]
    data = page_data(_run(memories, [_answer("lines", "none", True, True)]))
    assert data["kept"] == [{"s": [0, len(SOURCE)]}, {"s": [0, 11]}, {"s": [0, 11]}]
    assert data["goals"][0]["memories"] == {"0": [0, 3, 4], "1": [1, 3, 4], "2": [2, 3, 4]}


def test_answers_stay_in_row_order_per_goal_with_their_settings():
    one, other = {"reader": "m", "judge": "a"}, {"reader": "m", "judge": "b"}
    answers = [
        _answer("lines", "own", True, True, **one),
        _answer("lines", "own", False, True, goal_id="c1/g2", question_id="c1/g2/q1", **one),
        _answer("lines", "own", True, False, question_id="c1/g1/q2", **other),
        _answer("lines", "none", None, None, answer=None, error="reader failed", **other),
    ]
    data = page_data(_run([], answers))
    assert data["settings"] == ["reader m, judge a", "reader m, judge b"] and data["roles"] == [["m", "a"], ["m", "b"]]
    first, second = data["goals"]
    assert (first["id"], second["id"]) == ("c1/g1", "c1/g2")
    assert [q["id"] for q in first["questions"]] == ["c1/g1/q1", "c1/g1/q2"]
    assert first["answers"] == [[0, 0, "K-7", 1, 0], [1, 0, "K-7", 1, 1], [0, 1, None, None, None, "reader failed"]]
    assert first["settings"] == [0, 1, 1]
    assert second["answers"] == [[0, 0, "K-7", 0, 2]] and second["settings"] == [0]


def test_a_ratio_written_whole_and_as_a_float_is_one_cell():
    answers = [_answer("lines", "own", True, True, ratio=1), _answer("lines", "own", True, True, ratio=1.0)]
    data = page_data(_run([], answers))
    assert data["cells"] == [["lines", "own", 1.0, False]]
    assert [a[1] for a in data["goals"][0]["answers"]] == [0, 0]


def test_outcomes_are_read_where_recorded_and_derived_where_not():
    assert row_outcome({"correct": True, "evidence": False}) == "guessed"
    assert row_outcome({"correct": False, "evidence": True, "outcome": "missed"}) == "missed"
    assert row_outcome({"correct": False}) == "lost"  # an older row without the evidence flag
    assert row_outcome({"correct": None, "evidence": True}) is None


def test_answer_rows_carry_verdict_outcome_and_error():
    answers = [
        _answer("lines", "own", True, True),
        _answer("lines", "own", False, False, ratio=0.2),
        _answer("lines", "none", None, True, answer=None, error="reader failed"),
        _answer("lines", "cross", False, True, outcome="missed"),
    ]
    rows = page_data(_run([], answers))["goals"][0]["answers"]
    assert rows == [
        [0, 0, "K-7", 1, 0],
        [0, 1, "K-7", 0, 3],
        [0, 2, None, None, None, "reader failed"],
        [0, 3, "K-7", 0, 2],
    ]


def test_an_older_row_without_language_or_ceiling_reads():
    answers = [{k: v for k, v in _answer("full-context", "full", True, True, ratio=1.0).items() if k != "evidence"}]
    data = page_data(_run([], answers))
    assert data["goals"][0]["language"] == "" and data["cells"] == [["full-context", "full", 1.0, True]]


def test_spans_count_utf16_units_past_the_basic_plane():
    assert js_spans("a😀b", [(2, 3)]) == [3, 4]
    assert js_spans("😀😀中", [(2, 3), (0, 1)]) == [4, 5, 0, 2]
    assert js_spans("数据 ab", [(3, 5)]) == [3, 5] and js_spans(None, [(0, 1)]) == [0, 1]


def test_the_run_key_binds_what_makes_the_run_and_not_where_or_when_it_ran():
    from gacc_hf.results.folder import read_folder
    from gacc_hf.results.page_data import run_key
    from tests.helpers.paths import ROOT

    config = read_folder(ROOT / "docs" / "results" / "main").config
    key = run_key(config)
    assert len(key) == 16 and int(key, 16) >= 0
    moved = {**config, "cache_dir": "/elsewhere", "started_at": "2030-01-01T00:00:00Z", "batch_size": 1}
    assert run_key(moved) == key
    other_data = {**config, "data": {**config["data"], "fingerprint": "sha256:" + "0" * 64}}
    other_judge = {**config, "judge": {**config["judge"], "revision": "contains-v3"}}
    for changed in (other_data, other_judge, {**config, "ratios": [0.5]}, {**config, "limit": 3}):
        assert run_key(changed) != key
