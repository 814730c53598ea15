import json
import logging
import multiprocessing as mp
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from gacc_hf.run.cache.store import (
    CACHE_FILENAME,
    JOURNAL_ENV,
    Cache,
    CacheError,
    _parse,
    check_cache,
    filesystem_type,
    journal_mode,
    merge_caches,
)
from tests.helpers.fs import run_read_only


def test_roundtrip_and_first_write_wins(tmp_path):
    with Cache(tmp_path) as c:
        c.put_many("memory", {"k1": {"memory": "a"}, "k2": {"memory": "ü🙂"}})
        c.put_many("memory", {"k1": {"memory": "changed"}})
        assert c.get_many("memory", ["k1", "k2", "missing"]) == {"k1": {"memory": "a"}, "k2": {"memory": "ü🙂"}}
        assert c.get_many("answer", ["k1"]) == {}
        assert c.count("memory") == 2 and c.check() == []
    with Cache(tmp_path) as c:  # persisted
        assert c.count() == 2


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


def _sql(folder, *statements):
    db = sqlite3.connect(folder / CACHE_FILENAME)
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()


def test_another_schema_is_refused_with_the_remedy(tmp_path):
    Cache(tmp_path).close()
    _sql(tmp_path, "UPDATE meta SET value='999' WHERE name='schema_version'")
    with pytest.raises(CacheError, match=r"schema version 999, this gacc-hf reads 1: pass another --cache-dir"):
        Cache(tmp_path)
    assert check_cache(tmp_path) == [
        f"cache {tmp_path / CACHE_FILENAME} has schema version 999, "
        + ("this gacc-hf reads 1: pass another --cache-dir (or move this one aside)")
    ]


# One bad entry: never used, reported, recomputed (replaced by the next write of its key).
BAD_VALUES = {
    "not JSON": ("memory", "{not json"),
    "JSON of the wrong kind": ("memory", '"just a string"'),
    "memory not a string": ("memory", '{"memory": 5}'),
    "ledger field mistyped": ("memory", '{"memory": "m", "retained_tokens": "3"}'),
    "answer not a string": ("answer", '{"answer": ["a"]}'),
    "verdict not a bool": ("verdict", '{"correct": "yes"}'),
    "negative count": ("count", "-1"),
    "a stored failure": ("answer", '{"error": "reader failed"}'),
    "an answer with a failure beside it": ("answer", '{"answer": "a", "error": "reader failed"}'),
    "verdict an int": ("verdict", '{"correct": 1}'),
    "an answer with data after it": ("answer", '{"answer": "a"}x'),
    "evidence flags not 0 and 1": ("matches", '{"evidence": "1x", "exposed": []}'),
    "evidence flags as a list": ("matches", '{"evidence": [true], "exposed": []}'),
    "an exposed pair of an unknown kind": ("matches", '{"evidence": "1", "exposed": [["answer", "x"]]}'),
    "matches without exposed": ("matches", '{"evidence": "1"}'),
}
GOOD = {
    "memory": {"memory": "fine", "retained_tokens": 1},
    "answer": {"answer": "a"},
    "verdict": {"correct": True},
    "matches": {"evidence": "10", "exposed": [["question", "How long?"]]},
}


@pytest.mark.parametrize("case", BAD_VALUES)
def test_a_bad_entry_is_reported_and_recomputed_never_used(case, tmp_path, caplog):
    kind, text = BAD_VALUES[case]
    Cache(tmp_path).close()
    _sql(tmp_path, f"INSERT INTO entries VALUES ('{kind}', 'bad', '{text}', 0)")
    good = GOOD.get(kind, 7)
    with Cache(tmp_path) as c:
        (problem,) = c.check()
        assert problem.startswith(f"{kind}/bad: ")
        with caplog.at_level(logging.WARNING, logger="gacc_hf.run.cache.store"):
            assert c.get_many(kind, ["bad"]) == {}  # treated as missing: the runner recomputes it
        assert c.rejected == [problem]
        assert f"entry {kind}/bad is unusable" in caplog.text
        c.put_many(kind, {"bad": good})  # the recomputed value replaces the bad one
        assert c.get_many(kind, ["bad"]) == {"bad": good}
        assert c.check() == []


def test_good_entries_are_not_rewritten(tmp_path):
    with Cache(tmp_path) as c:
        c.put_many("answer", {"k": {"answer": "first"}})
        assert c.get_many("answer", ["k"]) == {"k": {"answer": "first"}}
        c.put_many("answer", {"k": {"answer": "second"}})
        assert c.get_many("answer", ["k"]) == {"k": {"answer": "first"}} and c.rejected == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"answer": "a\ud800"}, "holds a lone surrogate U+D800"),
        ({"answer": 3}, "answer value needs a str 'answer'"),
        ({"error": "x"}, "failures are never cached"),
        ({"answer": object()}, "not JSON-serialisable"),
    ],
)
def test_a_value_that_could_not_be_read_back_is_refused_and_nothing_is_stored(tmp_path, value, message):
    with Cache(tmp_path) as c:
        with pytest.raises(ValueError, match=f"cannot store answer/k2: .*{re.escape(message)}"):
            c.put_many("answer", {"k1": {"answer": "fine"}, "k2": value})
        assert c.count() == 0


def _big_cache(folder):
    with Cache(folder) as c:
        c.put_many("answer", {f"k{i:05d}": {"answer": "x" * 200} for i in range(3000)})
    return folder / CACHE_FILENAME


DAMAGE = {
    "random bytes": lambda data: os.urandom(len(data)),
    "random header page": lambda data: os.urandom(4096) + data[4096:],
    "corrupt pages": lambda data: data[:8192] + os.urandom(4096) + data[12288:],
    "truncated file": lambda data: data[:10000],
    "empty pages at the end": lambda data: data[: len(data) - 8 * 4096] + b"\xff" * (4 * 4096) + data[-4 * 4096 :],
}


@pytest.mark.parametrize("case", DAMAGE)
def test_a_damaged_file_is_one_clear_cache_error_and_check_never_raises(case, tmp_path):
    path = _big_cache(tmp_path)
    path.write_bytes(DAMAGE[case](path.read_bytes()))
    remedy = f"cache {path} is damaged or not a gacc cache"
    try:
        c = Cache(tmp_path)
    except CacheError as exc:  # found at open
        assert str(exc).startswith(remedy) and str(exc).endswith(
            "move it aside or delete it and rerun (its entries are recomputed)"
        )
    else:  # found when the damaged pages are read
        with c:
            problems = c.check()
            assert problems and all(remedy in p or p.startswith("sqlite: ") for p in problems)
            with pytest.raises(CacheError, match="move it aside or delete it"):
                c.get_many("answer", [f"k{i:05d}" for i in range(3000)])
    problems = check_cache(tmp_path)
    assert problems and any(remedy in p or p.startswith("sqlite: ") for p in problems)
    path.unlink()  # the stated remedy works: a fresh cache
    with Cache(tmp_path) as c:
        assert c.count() == 0 and c.check() == []


def test_a_cache_folder_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(CacheError, match=r"cache folder .*/f is a file, not a folder: pass another --cache-dir"):
        Cache(tmp_path / "f")


def test_a_read_only_cache_serves_a_warm_rerun_and_refuses_to_store(tmp_path):
    folder = tmp_path / "ro"
    with Cache(folder) as c:
        c.put_many("answer", {"k": {"answer": "stored"}})
    script = textwrap.dedent(
        f"""
        from gacc_hf.run.cache import Cache, CacheError
        with Cache({str(folder)!r}) as c:
            print(c.read_only, c.get_many("answer", ["k"]), c.check())
            try:
                c.put_many("answer", {{"new": {{"answer": "x"}}}})
            except CacheError as exc:
                print(exc)
        """
    )
    proc = run_read_only(folder, [sys.executable, "-c", script])
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.splitlines()
    assert first == "True {'k': {'answer': 'stored'}} []"
    assert second.startswith(f"cache {folder / CACHE_FILENAME} is read-only: cannot store 1 new answer entries")
    with Cache(folder) as c:
        assert c.count() == 1  # nothing was written


def test_a_read_only_cache_given_by_a_relative_path_is_read_by_the_cache_and_its_check(tmp_path, monkeypatch):
    with Cache(tmp_path / "ro") as c:
        c.put_many("answer", {"k": {"answer": "存了 stored"}})
    monkeypatch.chdir(tmp_path)  # "ro" names the folder from here on, as a user types it
    script = (
        "from gacc_hf.run.cache import Cache\nwith Cache('ro') as c: print(c.read_only, c.get_many('answer', ['k']))"
    )
    proc = run_read_only(tmp_path / "ro", [sys.executable, "-c", script])
    assert proc.returncode == 0 and proc.stdout == "True {'k': {'answer': '存了 stored'}}\n", proc.stderr
    proc = run_read_only(tmp_path / "ro", [sys.executable, "-m", "gacc_hf", "cache", "check", "ro"])
    assert proc.returncode == 0 and proc.stdout.endswith("ok: no problems in ro\n"), proc.stderr


MOUNTS = "srv:/export /shared nfs4 rw 0 0\n/dev/sda1 / ext4 rw 0 0\nlfs@tcp:/fs /lustre lustre rw 0 0\n"


def test_filesystem_type_takes_the_longest_mount_point():
    assert filesystem_type("/shared/team/cache", MOUNTS) == "nfs4"
    assert filesystem_type("/sharedx/cache", MOUNTS) == "ext4"  # a prefix of the name is not a mount point
    assert filesystem_type("/lustre", MOUNTS) == "lustre"
    assert filesystem_type("/home/me", MOUNTS) == "ext4"


def test_journal_mode_is_wal_locally_and_the_variable_overrides(tmp_path):
    assert filesystem_type(tmp_path) not in ("nfs", "nfs4", "lustre")
    assert journal_mode(tmp_path, {}) == "wal"
    assert journal_mode(tmp_path, {JOURNAL_ENV: "DELETE"}) == "delete"
    with pytest.raises(CacheError, match="GACC_CACHE_JOURNAL='memory': use one of wal, delete"):
        journal_mode(tmp_path, {JOURNAL_ENV: "memory"})


def test_delete_journal_for_network_file_systems_is_safe_for_several_writers(tmp_path, monkeypatch):
    monkeypatch.setenv(JOURNAL_ENV, "delete")
    with Cache(tmp_path) as c:
        assert c._db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w, 100)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    assert not (tmp_path / (CACHE_FILENAME + "-wal")).exists()  # no shared-memory WAL index was used
    with Cache(tmp_path) as c:
        assert c.count("answer") == 3 * 100 + 1 and c.check() == []


def test_one_cache_per_machine_then_merged(tmp_path):
    """The multi-machine layout of the README: each machine (here: each rank) keeps a local cache; its
    rerun finds its own entries; the merged cache serves a single-process rerun with no call at all."""
    from gacc_hf.data.synthetic import synthetic_rows
    from gacc_hf.run.benchmark import run_benchmark
    from gacc_hf.run.distributed import ContextShard, Topology, merge

    rows = synthetic_rows(seed=3, contexts=4, goals_per_context=2, questions_per_goal=2)
    kwargs = dict(
        compressor="goal-lines", reader="fields", judge="exact", ratios=[0.3], conditions=["own", "none", "cross"]
    )
    kwargs |= dict(n_bootstrap=0, progress=False)
    single = run_benchmark(rows, cache_dir=str(tmp_path / "single"), **kwargs)
    shards = [ContextShard(Topology(rank, 2, 0)) for rank in range(2)]
    parts = [run_benchmark(rows, cache_dir=str(tmp_path / f"m{r}"), shard=s, **kwargs) for r, s in enumerate(shards)]
    merged = merge(parts, shards[0].goal_order)
    assert merged.scores == single.scores and merged.answers == single.answers
    assert all(p.calls["compressor"] > 0 for p in parts)
    again = [run_benchmark(rows, cache_dir=str(tmp_path / f"m{r}"), shard=s, **kwargs) for r, s in enumerate(shards)]
    assert [a.calls for a in again] == [{"compressor": 0, "reader": 0, "judge": 0}] * 2
    added = merge_caches(tmp_path / "all", [tmp_path / "m0", tmp_path / "m1"])
    with Cache(tmp_path / "single") as one:
        assert added == one.count()  # the union of the shards' caches is the single run's cache
    whole = run_benchmark(rows, cache_dir=str(tmp_path / "all"), **kwargs)
    assert whole.calls == {"compressor": 0, "reader": 0, "judge": 0} and whole.answers == single.answers


def test_a_cache_on_a_network_file_system_uses_delete_and_warns(tmp_path, monkeypatch, caplog):
    import gacc_hf.run.cache.store as cache_module

    with caplog.at_level(logging.WARNING, logger="gacc_hf.run.cache.store"), Cache(tmp_path / "local") as c:
        assert c._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert caplog.text == ""
    monkeypatch.setattr(cache_module, "filesystem_type", lambda path, mounts=None: "nfs4")  # no NFS mount here
    with caplog.at_level(logging.WARNING, logger="gacc_hf.run.cache.store"), Cache(tmp_path / "shared") as c:
        assert c._db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert "is on a network file system (nfs4), journal_mode=DELETE: never share it between machines" in caplog.text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"answer": "a"}', {"answer": "a"}),
        ('  {"answer": "a"}\n', {"answer": "a"}),  # whitespace around a value is JSON too
        ('{"answer": "a", "answer": "b"}', {"answer": "b"}),  # the last of a repeated name, as json.loads
        ('{"answer": "\\u00e9\\ud83d\\ude42"}', {"answer": "é🙂"}),
        ("7", 7),
    ],
)
def test_stored_values_read_as_json_loads_reads_them(text, expected):
    value, _ = _parse("answer", text)
    assert value == expected == json.loads(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"answer": "a"}',
        '  {"answer": "a"}\n',
        '{"answer": "a", "answer": "b"}',
        '{"answer": "\\u00e9"}',
        '{"answer": ""}',
    ],
)
def test_get_many_reads_a_usual_answer_as_json_loads_does(text, tmp_path):
    """`get_many` accepts the usual shape in line and sends the rest to `_parse`: the same values either way."""
    Cache(tmp_path).close()
    _sql(tmp_path, f"INSERT INTO entries VALUES ('answer', 'k', '{text}', 0)")
    with Cache(tmp_path) as c:
        assert c.get_many("answer", ["k"]) == {"k": json.loads(text)}
        assert c.rejected == []


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"answer": "a"}x', "not valid JSON"),  # extra data after the value
        ('{"answer": "a"} {}', "not valid JSON"),
        ('\ufeff{"answer": "a"}', "not valid JSON"),  # a byte-order mark, refused by json.loads
        ('{"answer": "a"', "not valid JSON"),
        ("", "not valid JSON"),
        ("[" * 200_000 + "]" * 200_000, "nested too deeply"),
    ],
)
def test_stored_values_json_loads_refuses_are_refused(text, problem):
    value, found = _parse("answer", text)
    assert value is None and problem in found
