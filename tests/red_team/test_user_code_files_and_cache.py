"""Red-team cases of issue 23, items 7-16: errors in the user's own `import:` code; files, folders and the cache.

Each test reproduces its case through the command line (or the library call the case names) and checks the
one meaning of the exit code: 2 for bad input or environment, 3 for a model failure.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gacc_hf.cli import main
from gacc_hf.run.cache import CACHE_FILENAME, Cache, check_cache
from tests.helpers.cli import outcome, run_args


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """Write a module of the user's own beside the test and make it importable (a fresh name per test)."""
    folder = tmp_path / "usercode"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    made: list[str] = []

    def write(source: str) -> tuple[str, Path]:
        name = f"user_mod_{os.getpid()}_{len(made)}_{tmp_path.name}".replace("-", "_")
        path = folder / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        made.append(name)
        return name, path

    yield write
    for name in made:
        sys.modules.pop(name, None)


def _refused(tmp_path, capsys, spec: str, *extra: str) -> str:
    """Run with `spec` as compressor; assert one line, exit 2, nothing computed; the error line."""
    code, _out, err = outcome(run_args(tmp_path, "--compressors", spec, *extra), capsys)
    assert code == 2, err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()
    return err


# item 7
@pytest.mark.parametrize(
    ("source", "line", "says"),
    [
        ("import os\nraise RuntimeError('no GPU here')\n", 2, "raised RuntimeError: no GPU here"),
        ("def f(item):\n    return item.context[\n", 2, "syntax error in"),
        ("x = 1\nresult = {}['missing']\n", 2, "raised KeyError: 'missing'"),
    ],
)
def test_7_a_user_module_that_fails_at_import_is_bad_input_naming_spec_file_and_line(
    source, line, says, tmp_path, capsys, user_module
):
    name, path = user_module(source)
    err = _refused(tmp_path, capsys, f"import:{name}:f")
    assert f"import:{name}:f" in err and says in err and f"{path} line {line}" in err
    assert "unexpected" not in err


# item 7
def test_7_a_class_whose_constructor_needs_arguments_is_bad_input(tmp_path, capsys, user_module):
    name, path = user_module(
        """
        class Needs:
            def __init__(self, model_path):
                self.model_path = model_path

            def __call__(self, item):
                return item.context
        """
    )
    err = _refused(tmp_path, capsys, f"import:{name}:Needs")
    assert f"class Needs ({path} line 2) cannot be built without arguments" in err and "model_path" in err


# item 7: stays quiet for a class whose parameters all have defaults
def test_7_a_class_with_default_arguments_is_built(tmp_path, capsys, user_module):
    name, _ = user_module(
        """
        class Defaults:
            def __init__(self, keep=0.5):
                self.keep = keep

            def __call__(self, item):
                return item.context
        """
    )
    code, _out, err = outcome(run_args(tmp_path, "--compressors", f"import:{name}:Defaults"), capsys)
    assert code == 0, err


# item 8
def test_8_sys_exit_in_an_imported_module_is_refused_not_a_silent_exit_0(tmp_path, capsys, user_module):
    name, path = user_module("import sys\nsys.exit(0)\n")
    err = _refused(tmp_path, capsys, f"import:{name}:f")
    assert "called sys.exit(0)" in err and f"{path} line 2" in err


# item 8
def test_8_system_exit_inside_a_compressor_fails_the_item(tmp_path, capsys, user_module):
    name, _ = user_module(
        """
        def quits(item):
            raise SystemExit(0)

        quits.revision = "quits-1"
        """
    )
    code, _out, err = outcome(run_args(tmp_path, "--compressors", f"import:{name}:quits"), capsys)
    assert code == 3 and "compressor 'quits' failed on goal_id=" in err and "SystemExit: 0" in err
    code, out, err = outcome(
        run_args(
            tmp_path,
            "--compressors",
            f"import:{name}:quits",
            "--on-error",
            "record",
            "--output-dir",
            str(tmp_path / "o2"),
        ),
        capsys,
    )
    assert code == 3 and "2 model failure(s) recorded" in err and "results:" in out


# item 8: the same through a method with a window (threads), like the served methods
def test_8_system_exit_inside_a_windowed_method_fails_the_item(tmp_path, capsys, user_module):
    name, _ = user_module(
        """
        class Quits:
            revision = "quits-window-1"
            concurrency = 2

            def __call__(self, item):
                raise SystemExit(0)
        """
    )
    code, _out, err = outcome(run_args(tmp_path, "--reader", f"import:{name}:Quits"), capsys)
    assert code == 3 and "reader 'Quits' failed on" in err and "SystemExit: 0" in err


# item 9
def test_9_a_value_that_is_not_callable_is_refused_before_any_work(tmp_path, capsys, user_module):
    name, _ = user_module("not_callable = 15\n")
    err = _refused(tmp_path, capsys, f"import:{name}:not_callable")
    assert f"method 'import:{name}:not_callable' is a int (15), not a method" in err


# item 9
def test_9_batch_returning_none_is_a_contract_error_without_traceback(tmp_path, capsys, user_module):
    name, _ = user_module(
        """
        class NoBatch:
            revision = "nobatch-1"

            def __call__(self, item):
                return item.context

            def batch(self, items):
                return None
        """
    )
    code, _out, err = outcome(run_args(tmp_path, "--compressors", f"import:{name}:NoBatch"), capsys)
    assert code == 3 and "Traceback" not in err and len(err.splitlines()) == 1, err
    assert "compressor 'NoBatch': batch() returned NoneType for 2 inputs" in err


# item 9
def test_9_a_str_subclass_output_is_stored_as_plain_text(tmp_path, capsys, user_module):
    name, _ = user_module(
        """
        class Text(str):
            pass

        def fancy(item):
            return Text(item.context[:40])

        fancy.revision = "fancy-1"
        """
    )
    code, _out, err = outcome(run_args(tmp_path, "--compressors", f"import:{name}:fancy"), capsys)
    assert code == 0, err
    memories = [v for k, _, v in Cache(tmp_path / "cache").entries() if k == "memory"]
    assert len(memories) == 2 and all(type(v["memory"]) is str and v["memory"] for v in memories)


# item 9
@pytest.mark.parametrize("revision", ["7", "''", "None"])
def test_9_a_revision_that_is_not_a_nonempty_string_is_refused(revision, tmp_path, capsys, user_module):
    name, _ = user_module(f"def cut(item):\n    return item.context\n\ncut.revision = {revision}\n")
    if revision == "None":  # stays quiet: no revision given, one is derived from the code
        code, _out, err = outcome(run_args(tmp_path, "--compressors", f"import:{name}:cut"), capsys)
        assert code == 0, err
        return
    err = _refused(tmp_path, capsys, f"import:{name}:cut")
    assert f"method 'cut' has revision {revision}" in err and "must be a non-empty str" in err


# item 10
@pytest.mark.parametrize("inside", ["cache", ""])
def test_10_a_cache_inside_the_results_folder_is_refused_before_any_work(inside, tmp_path, capsys):
    out = tmp_path / "X"
    assert main(run_args(tmp_path, "--output-dir", str(out))) == 0  # X holds a run
    capsys.readouterr()
    before = sorted(p.name for p in out.iterdir())
    cache = out / inside if inside else out
    code, _o, err = outcome(
        run_args(tmp_path, "--output-dir", str(out), "--cache-dir", str(cache), "--overwrite"), capsys
    )
    assert code == 2 and f"--cache-dir {cache} is inside the results folder --output-dir {out}" in err
    assert sorted(p.name for p in out.iterdir()) == before  # nothing computed, nothing replaced
    fresh = tmp_path / "fresh"
    code, _o, err = outcome(run_args(tmp_path, "--output-dir", str(fresh), "--cache-dir", str(fresh / "c")), capsys)
    assert code == 2 and "is inside the results folder" in err and not fresh.exists()


# item 10: stays quiet for a cache beside the results folder, and for a results folder inside the cache's parent
def test_10_a_cache_beside_the_results_folder_is_fine(tmp_path, capsys):
    args = run_args(tmp_path, "--output-dir", str(tmp_path / "X"), "--cache-dir", str(tmp_path / "X-cache"))
    assert main(args) == 0 and main([*args, "--overwrite"]) == 0
    assert Cache(tmp_path / "X-cache").count("memory") == 2


@contextlib.contextmanager
def _tmpfs(folder: Path, size: str):
    """A small tmpfs at `folder` (needs root); skips the test where it cannot be mounted."""
    folder.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def _fill(folder: Path) -> None:
    """Fill the file system of `folder` to the last byte."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, b"\0" * 512)
    finally:
        os.close(fd)


# item 11
def test_11_a_full_disk_says_so_and_that_the_entries_are_intact(tmp_path):
    with _tmpfs(tmp_path / "small", "1m") as disk:
        cache = Cache(disk / "cache")
        cache.put_many("count", {f"k{i}": i for i in range(50)})
        _fill(disk)
        with pytest.raises(RuntimeError) as info:
            for n in range(200):  # until the WAL needs a page the disk does not have
                cache.put_many("answer", {f"a{n}-{i}": {"answer": "x" * 2000} for i in range(20)})
        message = str(info.value)
        assert "the disk is full (SQLITE_FULL" in message and "entries stored before it are intact" in message
        assert "damaged" not in message and "delete" not in message
        cache.close()
        (disk / "filler").unlink()
        assert check_cache(disk / "cache") == []  # `gacc cache check` agrees: the entries are fine
        with Cache(disk / "cache") as again:
            assert again.count("count") == 50


# item 11
def test_11_a_wal_file_deleted_under_a_writer_is_an_io_error_not_damage(tmp_path):
    first = Cache(tmp_path / "c")
    first.put_many("count", {"k1": 1})
    (tmp_path / "c" / f"{CACHE_FILENAME}-wal").unlink()
    with pytest.raises(RuntimeError) as info:
        Cache(tmp_path / "c").put_many("count", {"k2": 2})
    message = str(info.value)
    assert "an I/O error (SQLITE_IOERR" in message and "-wal/-shm files" in message and "damaged" not in message
    first.close()


# item 11: stays quiet about disk faults for a damaged file
def test_11_random_bytes_are_still_called_damaged(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / CACHE_FILENAME).write_bytes(os.urandom(4096))
    with pytest.raises(RuntimeError, match="is damaged or not a gacc cache"):
        Cache(tmp_path / "c")


# item 12
def test_12_a_foreign_sqlite_file_is_refused_and_left_untouched(tmp_path, capsys):
    folder = tmp_path / "cache"
    folder.mkdir()
    db = sqlite3.connect(folder / CACHE_FILENAME)
    db.execute("CREATE TABLE users (name TEXT)")
    db.execute("INSERT INTO users VALUES ('ada')")
    db.commit()
    db.close()
    before = (folder / CACHE_FILENAME).read_bytes()
    code, _out, err = outcome(run_args(tmp_path), capsys)
    assert (
        code == 2 and f"cache {folder / CACHE_FILENAME} is not a gacc cache (a SQLite database with tables users" in err
    )
    assert (folder / CACHE_FILENAME).read_bytes() == before and not (tmp_path / "out").exists()
    db = sqlite3.connect(folder / "other.sqlite3")
    db.execute("PRAGMA application_id=1234")  # another application's mark, no tables yet
    db.commit()
    db.close()
    os.replace(folder / "other.sqlite3", folder / CACHE_FILENAME)
    with pytest.raises(RuntimeError, match="application_id 1234"):
        Cache(folder)


# item 12: stays quiet for a new cache (marked) and a cache written before the mark (readable as it is)
def test_12_new_and_unmarked_gacc_caches_are_accepted(tmp_path):
    with Cache(tmp_path / "new") as cache:
        cache.put_many("count", {"k": 1})
    db = sqlite3.connect(tmp_path / "new" / CACHE_FILENAME)
    assert db.execute("PRAGMA application_id").fetchone()[0] == int.from_bytes(b"gacc", "big")
    db.execute("PRAGMA application_id=0")  # as a cache written by an earlier gacc-hf
    db.commit()
    db.close()
    with Cache(tmp_path / "new") as cache:
        assert cache.get_many("count", ["k"]) == {"k": 1}


# item 13
def test_13_a_fifo_or_a_device_as_data_is_named_for_what_it_is(tmp_path, capsys):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    for data, what in ((fifo, "a named pipe (FIFO)"), (Path("/dev/zero"), "a character device")):
        code, _out, err = outcome(run_args(tmp_path, "--data", str(data)), capsys)
        assert code == 2 and f"{data}: {what}, not a data file or folder" in err, err
        assert "no such file" not in err
    code, _out, err = outcome(run_args(tmp_path, "--data", str(tmp_path / "nope.jsonl")), capsys)
    assert code == 2 and "no such file or folder" in err  # stays as it was for a missing path


# item 14
def test_14_a_full_disk_while_writing_the_results_names_the_file(tmp_path, capsys):
    assert main(run_args(tmp_path, "--output-dir", str(tmp_path / "warm"))) == 0  # the cache is warm: no disk needed
    capsys.readouterr()
    with _tmpfs(tmp_path / "small", "1m") as disk:
        _fill(disk)
        code, _out, err = outcome(run_args(tmp_path, "--output-dir", str(disk / "run"), "--verbose"), capsys)
        assert code == 2 and "No space left on device" in err, err
        assert err.splitlines()[-1] == (
            f"gacc run: error: {disk}/run/answers.parquet: No space left on device: check the path, its "
            "permissions and the free space"
        )
        assert [p.name for p in disk.iterdir()] == ["filler"]  # no half-written folder left


# item 14
def test_14_an_empty_output_dir_is_refused(tmp_path, capsys):
    code, _out, err = outcome(run_args(tmp_path, "--output-dir", ""), capsys)
    assert code == 2 and err == "gacc run: error: --output-dir is empty; name a results folder " + (
        "(or leave the option out for runs/<time>-...)\n"
    )


# item 14
@pytest.mark.parametrize(
    ("name", "text", "says"),
    [
        ("deep.yaml", "seed: " + "[" * 50_000 + "]" * 50_000 + "\n", "deep.yaml: nested too deeply to read"),
        ("deep.toml", "seed = " + "[" * 50_000 + "]" * 50_000 + "\n", "deep.toml: nested too deeply to read"),
        ("big.toml", "bootstrap = 0\nseed = " + "7" * 5000 + "\n", "big.toml: line 2, key 'seed': a number of more"),
        ("big.yaml", "seed: " + "7" * 5000 + "\n", "big.yaml: line 1, key 'seed': a number of more than 4300 digits"),
    ],
)
def test_14_config_files_beyond_pythons_limits_name_file_and_key(name, text, says, tmp_path, capsys):
    path = tmp_path / name
    path.write_text(text)
    code, _out, err = outcome(run_args(tmp_path, "--config", str(path)), capsys)
    assert code == 2 and says in err and "Traceback" not in err and len(err.splitlines()) == 1, err


# item 15
def test_15_a_second_run_on_the_same_output_dir_is_refused_while_the_first_runs(tmp_path, user_module):
    name, _ = user_module(
        """
        import time

        def slow(item):
            time.sleep(0.5)
            return item.context

        slow.revision = "slow-1"
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "usercode"), *sys.path])}
    first = subprocess.Popen(
        [sys.executable, "-m", "gacc_hf", *run_args(tmp_path, "--compressors", f"import:{name}:slow")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lock = tmp_path / ".out.lock"
    deadline = time.monotonic() + 60
    while not lock.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    second = subprocess.run(
        [sys.executable, "-m", "gacc_hf", *run_args(tmp_path, "--overwrite", "--cache-dir", str(tmp_path / "c2"))],
        env=env,
        capture_output=True,
        text=True,
    )
    _out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert second.returncode == 2 and second.stderr == (
        f"gacc run: error: {tmp_path / 'out'}: another gacc run (pid {first.pid}) is writing this results folder "
        "now; wait for it to finish, or choose another --output-dir\n"
    )
    assert not (tmp_path / "c2").exists()  # refused before any work
    assert f"import:{name}:slow" in (tmp_path / "out" / "results.json").read_text()  # the first run's folder
    assert not lock.exists()  # cleaned on exit


# item 15: a lock left by a killed run is stale and taken over
def test_15_a_stale_lock_of_a_killed_run_is_recovered(tmp_path, user_module, capsys):
    name, _ = user_module("import time\n\ndef slow(item):\n    time.sleep(5)\n    return item.context\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "usercode"), *sys.path])}
    args = run_args(tmp_path, "--compressors", f"import:{name}:slow")
    proc = subprocess.Popen([sys.executable, "-m", "gacc_hf", *args], env=env, stderr=subprocess.DEVNULL)
    lock = tmp_path / ".out.lock"
    deadline = time.monotonic() + 60
    while not (lock.exists() and lock.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert lock.read_text().strip() == str(proc.pid)  # left behind by the killed run
    code, _out, err = outcome(run_args(tmp_path), capsys)
    assert code == 0, err
    assert not lock.exists()


# item 16
def test_16_read_folder_in_a_bare_script_exits_cleanly(tmp_path):
    assert main(run_args(tmp_path)) == 0
    script = textwrap.dedent(
        f"""
        import os
        from gacc_hf.results.folder import read_folder

        before = len(os.listdir("/proc/self/task"))
        run = read_folder({str(tmp_path / "out")!r})
        assert len(run.answers) == 4, len(run.answers)
        started = len(os.listdir("/proc/self/task")) - before
        print(started)
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for _ in range(10):
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
        assert proc.returncode == 0 and "terminate called" not in proc.stderr, proc.stderr
        assert proc.stdout.strip() == "0"  # no native thread left running by the read
