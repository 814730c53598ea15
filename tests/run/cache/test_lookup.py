"""`Cache.get_many` scans a kind when asked for at least half its entries, probes keys otherwise: same values."""

from __future__ import annotations

import sqlite3

import pytest

from gacc_hf.run.cache import CACHE_FILENAME, Cache

STORED = {f"k{i}": {"answer": f"a{i}"} for i in range(8)}  # 8 answers, and a damaged one beside them


@pytest.fixture
def cache(tmp_path):
    with Cache(tmp_path) as c:
        c.put_many("answer", STORED)
        c.put_many("verdict", {"k0": {"correct": True}})  # another kind: never counted or scanned with answers
    db = sqlite3.connect(tmp_path / CACHE_FILENAME)
    db.execute("INSERT INTO entries VALUES ('answer', 'k9', 'not json', 0)")
    db.commit()
    db.close()
    with Cache(tmp_path) as c:
        statements: list[str] = []
        c._db.set_trace_callback(statements.append)
        yield c, statements


@pytest.mark.parametrize(
    ("asked", "scan"),
    [
        (["k7", "k1", "k3", "k5", "k6", "absent"], True),  # 6 of 9 stored answers: one scan of the kind
        (["k7", "k1", "k3", "absent"], False),  # 4 of 9: a probe per key
        ([], False),
    ],
)
def test_scan_or_probe_give_the_stored_values_in_key_order(cache, asked, scan):
    c, statements = cache
    found = c.get_many("answer", asked)
    expected = sorted(k for k in asked if k in STORED)
    assert list(found) == expected and all(found[k] == STORED[k] for k in expected)
    assert (
        any(s.startswith("SELECT key, value FROM entries WHERE kind=") and " IN (" not in s for s in statements) is scan
    )
    assert any(" IN (" in s for s in statements) is (not scan and bool(asked))
    assert c.rejected == []  # the damaged entry was not asked for, so it is never read


@pytest.mark.parametrize("asked", [["k9"], ["k9", *STORED]])
def test_a_damaged_entry_asked_for_is_rejected_either_way(cache, asked):
    c, _ = cache
    assert "k9" not in c.get_many("answer", asked)
    assert [r.split(":")[0] for r in c.rejected] == ["answer/k9"]
