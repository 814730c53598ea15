import multiprocessing as mp
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from gacc_hf.cache import CACHE_FILENAME, Cache, CacheError, make_key, text_hash


def test_roundtrip_and_first_write_wins(tmp_path):
    with Cache(tmp_path) as c:
        c.put_many("memory", {"k1": {"memory": "a"}, "k2": {"memory": "ü🙂"}})
        c.put_many("memory", {"k1": {"memory": "changed"}})
        assert c.get_many("memory", ["k1", "k2", "missing"]) == {"k1": {"memory": "a"}, "k2": {"memory": "ü🙂"}}
        assert c.get_many("answer", ["k1"]) == {}
        assert c.count("memory") == 2 and c.check() == []
    with Cache(tmp_path) as c:  # persisted
        assert c.count() == 2


def test_keys_bind_every_part():
    base = dict(context=text_hash("c"), goal=text_hash("g"), budget=10, tokenizer="t@1", compressor="x", revision="1")
    key = make_key(**base)
    assert key == make_key(**dict(reversed(base.items())))  # order-free
    for part, other in [("goal", text_hash("g2")), ("budget", 11), ("tokenizer", "t@2"), ("revision", "2")]:
        assert make_key(**{**base, part: other}) != key
    assert make_key(budget=1) != make_key(budget="1")  # types are part of the key


def _writer(path, worker, n):
    with Cache(path) as c:
        for i in range(n):
            c.put_many("answer", {f"w{worker}-{i}": {"answer": str(i)}, "shared": {"answer": "same"}})


def test_several_processes_share_one_file(tmp_path):
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w, 150)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with Cache(tmp_path) as c:
        assert c.count("answer") == 3 * 150 + 1
        assert c.check() == []


def test_process_killed_mid_transaction_leaves_no_entry(tmp_path):
    Cache(tmp_path).close()
    script = textwrap.dedent(
        f"""
        import os, signal, sqlite3
        db = sqlite3.connect({str(tmp_path / CACHE_FILENAME)!r}, isolation_level=None)
        db.execute("BEGIN IMMEDIATE")
        rows = [(f"k{{i}}", '{{"memory": "x"}}') for i in range(500)]
        db.executemany("INSERT INTO entries VALUES ('memory', ?, ?, 0)", rows)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], check=False)
    assert proc.returncode == -signal.SIGKILL
    with Cache(tmp_path) as c:
        assert c.count() == 0 and c.check() == []
        c.put_many("memory", {"after": {"memory": "y"}})  # the file is writable again
        assert c.count() == 1


def test_corrupt_value_is_reported_and_bad_schema_refused(tmp_path):
    Cache(tmp_path).close()
    db = sqlite3.connect(tmp_path / CACHE_FILENAME)
    db.execute("INSERT INTO entries VALUES ('memory', 'bad', '{not json', 0)")
    db.execute("UPDATE meta SET value='999' WHERE name='schema_version'")
    db.commit()
    db.close()
    with pytest.raises(CacheError, match="schema version 999"):
        Cache(tmp_path)
    db = sqlite3.connect(tmp_path / CACHE_FILENAME)
    db.execute("UPDATE meta SET value='1' WHERE name='schema_version'")
    db.commit()
    db.close()
    with Cache(tmp_path) as c:
        assert c.check() == ["memory/bad: value is not valid JSON"]


def test_not_a_database(tmp_path):
    (tmp_path / CACHE_FILENAME).write_bytes(os.urandom(4096))
    with pytest.raises(CacheError, match="cannot open"):
        Cache(tmp_path)
