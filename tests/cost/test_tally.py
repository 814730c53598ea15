"""The usage tally: each value once, this run's calls apart, sources in one word, shards added up."""

from __future__ import annotations

from gacc_hf.cost.tally import UsageTally, merge_usage, source_of
from gacc_hf.cost.usage import usage


def test_each_key_counts_once_and_only_fresh_keys_count_as_sent() -> None:
    tally = UsageTally()
    values = {
        "a": {"answer": "x", "usage": usage(10, 2, "server")},
        "b": {"answer": "y", "usage": usage(5, 1, "local")},
        "c": {"error": "failed"},
    }
    tally.add("reader", "openai:m", values, fresh={"a"})
    tally.add("reader", "openai:m", {"a": values["a"]}, fresh={"a"})  # the same key again: not counted twice
    tally.add("judge", "exact", {"v": {"correct": True}}, fresh={"v"})
    doc = tally.document()
    # by hand: a + b = 15 prompt, 3 completion over 2 calls; sent: a alone
    assert doc["roles"]["reader"]["openai:m"] == {
        "calls": 2,
        "prompt_tokens": 15,
        "completion_tokens": 3,
        "source": "server+local",
    }
    assert doc["sent"]["reader"]["openai:m"] == {
        "calls": 1,
        "prompt_tokens": 10,
        "completion_tokens": 2,
        "source": "server",
    }
    assert doc["roles"]["judge"]["exact"] == {"calls": 1, "prompt_tokens": 0, "completion_tokens": 0, "source": "none"}


def test_a_warm_rerun_sends_nothing() -> None:
    tally = UsageTally()
    tally.add("reader", "m", {"a": {"answer": "x", "usage": usage(10, 2, "server")}}, fresh=set())
    assert tally.document()["sent"]["reader"] == {}
    assert tally.document()["roles"]["reader"]["m"]["prompt_tokens"] == 10


def test_sources_and_shards() -> None:
    assert (source_of({"server"}), source_of({"local"}), source_of(set())) == ("server", "local", "none")
    one = {"roles": {"reader": {"m": {"calls": 1, "prompt_tokens": 4, "completion_tokens": 1, "source": "server"}}}}
    two = {"roles": {"reader": {"m": {"calls": 2, "prompt_tokens": 6, "completion_tokens": 2, "source": "local"}}}}
    merged = merge_usage([one, two])["roles"]["reader"]["m"]
    assert merged == {"calls": 3, "prompt_tokens": 10, "completion_tokens": 3, "source": "server+local"}
