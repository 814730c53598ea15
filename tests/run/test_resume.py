"""Crash-resume and config changes: a SIGKILLed `gacc run` rerun by the same command ends as an uninterrupted
run, recomputing only what was not stored; a changed reader or judge never reuses the old outputs."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gacc_hf.data.synthetic import synthetic_rows
from gacc_hf.methods.rules import FieldsReader
from gacc_hf.protocol import JudgeInput, ReaderInput
from gacc_hf.results.folder import read_folder
from gacc_hf.results.layout import RunResults
from gacc_hf.run.benchmark import run_benchmark
from gacc_hf.run.cache import CACHE_FILENAME, Cache
from tests.helpers.paths import ROOT

ARGS = [
    "--compressors",
    "import:tests.helpers.methods:SlowTruncate",
    "--reader",
    "import:tests.helpers.methods:SlowFields",
    "--ratios",
    "0.1,0.3",
    "--conditions",
    "own,none,cross",
    "--batch-size",
    "2",
    "--bootstrap",
    "100",
    "--no-progress",
]


def _command(data: Path) -> list[str]:
    return [sys.executable, "-m", "gacc_hf", "run", "--data", str(data), *ARGS, "--cache-dir", "cache"]


def _env() -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "GACC_TEST_DELAY": "0.03", "HF_HUB_OFFLINE": "1"}


def _stored(cwd: Path) -> dict[str, int]:
    """Entries per kind, read from the file as another process would (read-only)."""
    path = cwd / "cache" / CACHE_FILENAME
    if not path.exists():
        return {}
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    try:
        return dict(db.execute("SELECT kind, COUNT(*) FROM entries GROUP BY kind").fetchall())
    except sqlite3.OperationalError:  # the table is not created yet
        return {}
    finally:
        db.close()


def _results(cwd: Path) -> RunResults:
    return read_folder(cwd / "runs" / "latest")


def _comparable(run: RunResults) -> dict:
    """A results folder without what legitimately differs after a resume: call counts, time, tokens (the usage
    of each run's own calls among them) and cache hits (and so the checksum of the ledger file, which records
    the hits), and the commit of the code."""
    volatile = ("calls", "files", "git_revision", "seconds", "method_seconds", "generated_tokens")
    payload = {k: v for k, v in run.payload.items() if k not in volatile}
    payload["usage"] = {k: v for k, v in payload["usage"].items() if k != "sent"}  # this run's own calls
    payload["config"] = {k: v for k, v in payload["config"].items() if k not in ("started_at", "finished_at")}
    memories = [{k: v for k, v in row.items() if k != "cached"} for row in run.memories]
    return {"payload": payload, "answers": run.answers, "memories": memories}


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """The data file and an uninterrupted run of it."""
    root = tmp_path_factory.mktemp("resume")
    data = root / "data.jsonl"
    rows = synthetic_rows(seed=5, contexts=4, goals_per_context=2, questions_per_goal=3)
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    cwd = root / "uninterrupted"
    cwd.mkdir()
    done = subprocess.run(_command(data), cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return data, _results(cwd)


# kill when this many entries of a kind are stored: early and mid-way in compression, late in reading
KILL_POINTS = [("memory", 1), ("memory", 12), ("answer", 30)]


@pytest.mark.parametrize(("kind", "at_least"), KILL_POINTS)
def test_sigkill_then_rerun_equals_an_uninterrupted_run(baseline, tmp_path, kind, at_least):
    data, expected = baseline
    total = expected.payload["calls"]  # with a fresh cache every distinct call is made once
    assert total["compressor"] > 12 and total["reader"] > 30  # the kill points lie inside the run

    proc = subprocess.Popen(_command(data), cwd=tmp_path, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _stored(tmp_path).get(kind, 0) < at_least:
        assert proc.poll() is None, f"the run ended before the kill point: {proc.stderr.read().decode()[-2000:]}"
        assert time.monotonic() < deadline, "kill point not reached"
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stderr.close()

    assert proc.returncode == -signal.SIGKILL
    assert not (tmp_path / "runs" / "latest" / "results.json").exists()  # killed before it finished
    with Cache(tmp_path / "cache") as cache:
        assert cache.check() == []
    stored = _stored(tmp_path)
    assert stored.get(kind, 0) >= at_least
    assert stored.get("verdict", 0) < total["judge"]  # it was stopped mid-way, not after the work

    rerun = subprocess.run(_command(data), cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    got = _results(tmp_path)
    assert _comparable(got) == _comparable(expected)
    # only what was not stored is recomputed
    assert got.payload["calls"] == {
        "compressor": total["compressor"] - stored.get("memory", 0),
        "reader": total["reader"] - stored.get("answer", 0),
        "judge": total["judge"] - stored.get("verdict", 0),
    }
    with Cache(tmp_path / "cache") as cache:
        assert cache.check() == []


class Reader(FieldsReader):
    """A reader whose setting is part of its revision, as the model readers' settings are."""

    name = "settable-reader"

    def __init__(self, prefix: str = "") -> None:
        self.prefix, self.revision, self.calls = prefix, f"settable-reader-v1@prefix={prefix!r}", 0

    def __call__(self, item: ReaderInput) -> str:
        self.calls += 1
        return self.prefix + super().__call__(item)


class Judge:
    name = "settable-judge"

    def __init__(self, strict: bool) -> None:
        self.strict, self.revision, self.calls = strict, f"settable-judge-v1@strict={strict}", 0

    def __call__(self, item: JudgeInput) -> bool:
        self.calls += 1
        refs = item.references if self.strict else [r.lower() for r in item.references]
        return (item.answer if self.strict else item.answer.lower()) in refs


def test_changed_reader_or_judge_settings_are_keyed_apart(cache_dir):
    rows = synthetic_rows(seed=6, contexts=3, goals_per_context=2, questions_per_goal=2)
    kwargs = dict(compressor="goal-lines", ratios=[0.3], conditions=["own"], cache_dir=cache_dir, progress=False)
    first = run_benchmark(rows, reader=Reader(), judge=Judge(strict=True), **kwargs)
    n_questions = first.scores[0]["n_questions"]
    assert first.calls == {"compressor": 6, "reader": n_questions, "judge": n_questions}

    # a reader setting changes every answer: all answers recomputed, memories reused, none of the old answers kept
    reader = Reader(prefix="answer: ")
    second = run_benchmark(rows, reader=reader, judge=Judge(strict=True), **kwargs)
    assert second.calls["compressor"] == 0 and reader.calls == n_questions
    assert all(a["answer"].startswith("answer: ") for a in second.answers)
    assert second.scores[0]["micro"] == 0.0 < first.scores[0]["micro"]  # the prefixed answers never match

    # a judge setting: verdicts recomputed, answers reused
    judge = Judge(strict=False)
    third = run_benchmark(rows, reader=Reader(), judge=judge, **kwargs)
    assert third.calls == {"compressor": 0, "reader": 0, "judge": n_questions} and judge.calls == n_questions

    # back to the first configuration: everything is a hit, and the result is the first one
    again = run_benchmark(rows, reader=Reader(), judge=Judge(strict=True), **kwargs)
    assert again.calls == {"compressor": 0, "reader": 0, "judge": 0}
    assert again.answers == first.answers and again.scores == first.scores
