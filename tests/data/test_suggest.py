"""The mapping suggested for data in neither layout names only the columns whose role their name tells (IDs,
text, answers, ...), never an ID column for a text or the reverse, offers every other column named for a role it
filled, and lists the columns it could not place."""

from __future__ import annotations

import pytest

from gacc_hf.data.loading import load_any
from gacc_hf.data.schema import DataSourceError
from gacc_hf.data.suggest import FLAT, layout_error, other_candidates, role, suggested_mapping, words
from tests.helpers.data import flat_rows, write_jsonl


def test_words_split_names_the_way_people_write_them():
    assert words("gold_answers") == ["gold", "answer"]
    assert words("passageText") == ["passage", "text"]
    assert words("QuestionID") == ["question", "id"]
    assert words("contextid") == ["context", "id"]
    assert words("valid") == ["valid"]  # "va" is no role: not cut


def test_roles_by_hand():
    told = {
        "doc_id": "context_id",
        "contextId": "context_id",
        "task_id": "goal_id",
        "qid": "question_id",
        "id": "question_id",  # one row per question: a bare id is the question's
        "passage": "context",
        "context_text": "context",
        "user_goal": "goal",
        "query": "question",
        "answer_text": "references",
        "label": "references",
        "domain": "source",
        "lang": "language",
    }
    assert {name: role(name, flat=True) for name in told} == told
    assert role("id", flat=False) is None  # one row per group: which ID is it?
    assert role("answer_id", flat=True) is None  # an ID, but of nothing the schema has
    assert role("notes", flat=True) is None and role("score", flat=True) is None


def test_an_id_column_is_never_the_text_and_the_answer_column_is_found():
    mapping, untold = suggested_mapping(["id", "context_text", "question", "answer_text", "notes"], FLAT)
    assert mapping == {"context": "context_text", "question_id": "id", "references": "answer_text"}
    assert untold == ["notes"]
    mapping, untold = suggested_mapping(["contextId", "doc", "question", "label"], FLAT)
    assert mapping == {"context_id": "contextId", "context": "doc", "references": "label"} and untold == []


def test_the_message_names_what_it_could_not_tell_and_says_nothing_more_when_all_is_told():
    message = str(layout_error(["id", "context_text", "question", "answer_text", "notes", "domain"]))
    fix = message.split("--columns ")[1].split(" ")[0]
    # the IDs are optional (derived from the content): only a column named for one is offered, no hole
    assert fix == "context=context_text,goal=<column>,question_id=id,references=answer_text"
    assert "; optional: source=domain" in message
    assert message.endswith("could not tell the role of notes from the name: map by hand or leave out")
    clear = str(layout_error(["doc_id", "passage", "task_id", "intent", "qid", "query", "answers"]))
    assert "could not tell" not in clear and "<column>" not in clear
    assert "one row per (context, goal) group" in str(layout_error(["a", "b"]))
    assert all(f"{t}=<column>" in str(layout_error(["a", "b"])) for t in ("context", "goal", "questions", "gold"))
    assert not any(f"{t}=<column>" in str(layout_error(["a", "b"])) for t in ("context_id", "goal_id", "source"))


def test_a_second_column_named_for_a_filled_role_is_offered_not_dropped():
    # the columns of the CSV example in docs/data.md: doc and passage both say context, task and intent goal
    message = str(layout_error(["doc", "passage", "task", "intent", "qid", "query", "answer"]))
    fix = message.split("--columns ")[1].split(" ")[0]
    assert fix == "context=doc,goal=task,question_id=qid,question=query,references=answer"
    assert "; other candidates: context=passage, goal=intent (their names say so too: pick" in message
    assert other_candidates(["doc", "passage", "备注"], FLAT, {"context": "doc"}) == ["context=passage"]
    mixed = str(layout_error(["doc_id", "passage", "task_id", "intent", "qid", "query", "answers", "问题"]))
    assert "other candidates" not in mixed and "could not tell the role of 问题 from the name" in mixed


def test_a_chinese_release_gets_the_mapping_that_loads_it(tmp_path):
    rows = flat_rows(context_id="passage_id", context="passage", goal="intent", references="answers")
    path = write_jsonl(tmp_path / "release.jsonl", rows)
    with pytest.raises(DataSourceError) as err:
        load_any(path)
    fix = str(err.value).split("--columns ")[1].split(" ")[0]
    assert fix == "context_id=passage_id,context=passage,goal=intent,references=answers"
    columns = dict(part.split("=") for part in fix.split(","))
    assert len(load_any(path, columns=columns)) == 2  # the suggestion works
