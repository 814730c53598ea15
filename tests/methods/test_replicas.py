"""Replicas asked at the start: one that does not answer is left out while another does."""

from __future__ import annotations

import logging

import pytest

from gacc_hf.methods.replicas import ReplicaSet


class Down(Exception):
    pass


def _ask(down: set[str], calls: list[tuple[str, bool]]):
    def ask(replica, once):
        calls.append((replica.url, once))
        if replica.url in down:
            raise Down(f"{replica.url} refused")
        return {"id": "m"}

    return ask


def test_a_replica_that_does_not_answer_is_left_out_with_one_warning(caplog):
    replicas = ReplicaSet(("http://a/v1", "http://b/v1", "http://c/v1"), {}, 5.0)
    calls: list[tuple[str, bool]] = []
    with caplog.at_level(logging.WARNING, logger="gacc_hf"):
        answers = replicas.answers(_ask({"http://b/v1"}, calls), Down)
    assert answers == {"http://a/v1": {"id": "m"}, "http://c/v1": {"id": "m"}}
    assert calls == [("http://a/v1", True), ("http://b/v1", True), ("http://c/v1", True)]  # each asked once
    assert [r.url for r in replicas.replicas] == ["http://a/v1", "http://c/v1"]
    assert [r.getMessage() for r in caplog.records] == [
        "openai: replica http://b/v1 does not answer (http://b/v1 refused); running on the other 2"
    ]


def test_all_answering_warns_of_nothing_and_none_answering_gets_the_usual_retries(caplog):
    replicas = ReplicaSet(("http://a/v1", "http://b/v1"), {}, 5.0)
    with caplog.at_level(logging.WARNING, logger="gacc_hf"):
        assert len(replicas.answers(_ask(set(), []), Down)) == 2
    assert caplog.records == [] and len(replicas.replicas) == 2
    calls: list[tuple[str, bool]] = []
    with pytest.raises(Down, match="http://a/v1 refused"):
        replicas.answers(_ask({"http://a/v1", "http://b/v1"}, calls), Down)
    assert calls == [("http://a/v1", True), ("http://b/v1", True), ("http://a/v1", False)]
    assert len(replicas.replicas) == 2  # nothing left out when nothing answers


def test_a_single_server_is_asked_with_its_retries_and_never_left_out():
    replicas = ReplicaSet(("http://a/v1",), {}, 5.0)
    calls: list[tuple[str, bool]] = []
    with pytest.raises(Down):
        replicas.answers(_ask({"http://a/v1"}, calls), Down)
    assert calls == [("http://a/v1", False)]
