"""Served methods kept busy (marker `server`: real local HTTP servers on 127.0.0.1, stopped by the tests):
a SIGKILL mid-run and its rerun, replicas (one going down mid-run, bad lists), concurrency checks."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from gacc_hf.data.synthetic import synthetic_rows
from gacc_hf.methods.openai_server import OpenAIReader, ServerError, Settings
from gacc_hf.run.benchmark import run_benchmark
from gacc_hf.run.cache import CACHE_FILENAME
from tests.helpers.peer import JsonPeer
from tests.methods.test_openai_server import KEY, _assert_key_not_written
from tests.run.test_resume import _comparable, _results, _stored

pytestmark = pytest.mark.server


class _Handler(JsonPeer):
    """Chat: the reader gets its question back, the judge "yes", after `delay` s; a server marked `down`
    drops every request without an answer (as a crashed replica would)."""

    server: _Server

    def do_GET(self) -> None:
        self._send({"object": "list", "data": [self.server.entry]})

    def do_POST(self) -> None:
        srv = self.server
        messages = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["messages"]
        judge = messages[0]["content"].startswith("You grade")
        question = messages[-1]["content"].split("Question: ", 1)[1].split("\n", 1)[0]
        with srv.lock:
            srv.active += 1
        try:
            if not srv.down:
                time.sleep(srv.delay)
            if srv.down:
                self.close_connection = True
                return
            with srv.lock:
                srv.log.append(("judge" if judge else "reader", question, time.monotonic()))
        finally:
            with srv.lock:
                srv.active -= 1
        self._send({"choices": [{"message": {"role": "assistant", "content": "yes" if judge else question}}]})


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a reply to a killed client fails to go out, as it should

    def __init__(self, delay: float, entry: dict[str, Any] | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.delay, self.entry, self.down = delay, entry or {"id": "echo", "owned_by": "tests"}, False
        self.active = 0  # chat requests being handled now
        self.log: list[tuple[str, str, float]] = []  # (role, question, time the reply went out)
        self.lock = threading.Lock()
        self.url = f"http://127.0.0.1:{self.server_address[1]}/v1"
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def requests(self, role: str) -> list[str]:
        with self.lock:
            return [q for r, q, _ in self.log if r == role]

    def stop(self) -> None:
        self.down = True
        self.shutdown()
        self.server_close()


@pytest.fixture
def servers():
    started: list[_Server] = []

    def start(delay: float = 0.02, entry: dict[str, Any] | None = None) -> _Server:
        started.append(_Server(delay, entry))
        return started[-1]

    yield start
    for server in started:
        if not server.down:
            server.stop()


def _command(data: Path, spec: str) -> list[str]:
    cmd = [sys.executable, "-m", "gacc_hf", "run", "--data", str(data), "--compressors", "goal-lines"]
    cmd += ["--reader", spec, "--judge", spec, "--ratios", "0.5", "--conditions", "own", "--bootstrap", "100"]
    return [*cmd, "--no-progress", "--cache-dir", "cache"]


def _stored_answers(cwd: Path) -> Counter[str]:
    """The stored answers (each the question it answers: the server echoes it), with repeats."""
    db = sqlite3.connect(f"file:{cwd / 'cache' / CACHE_FILENAME}?mode=ro", uri=True, timeout=10)
    try:
        return Counter(json.loads(v)["answer"] for (v,) in db.execute("SELECT value FROM entries WHERE kind='answer'"))
    finally:
        db.close()


def test_sigkill_mid_served_run_then_rerun_requests_only_the_missing_items(servers, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server = servers(delay=0.2)
    spec = f"openai:echo@{server.url}?concurrency=4&max_tokens=8"
    data = tmp_path / "data.jsonl"
    rows = synthetic_rows(seed=5, contexts=8, goals_per_context=2, questions_per_goal=3)
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    questions = Counter(q["question"] for r in rows for q in r["questions"])  # one reader item each (own memory)
    (whole := tmp_path / "uninterrupted").mkdir()
    done = subprocess.run(_command(data, spec), cwd=whole, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    expected = _results(whole)
    total = expected.payload["calls"]
    assert total["reader"] == total["judge"] == questions.total() == 48  # 8 contexts x 2 goals x 3 questions

    server.log.clear()
    (cwd := tmp_path / "killed").mkdir()
    proc = subprocess.Popen(_command(data, spec), cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _stored(cwd).get("answer", 0) < 12:
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        assert time.monotonic() < deadline, "kill point not reached"
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    killed_at = time.monotonic()
    proc.wait()
    proc.stderr.close()
    stored, answered = _stored(cwd), _stored_answers(cwd)
    assert 12 <= stored["answer"] < 48 and stored.get("verdict", 0) < 48
    # what a crash loses: the requests in flight and the replies of the last half second (1 s of slack)
    replied_well_before = sum(1 for _, _, t in server.log if t < killed_at - 1.5)
    assert stored["answer"] + stored.get("verdict", 0) >= replied_well_before

    while server.active:  # the killed run's last requests end at the server
        time.sleep(0.01)
    server.log.clear()
    rerun = subprocess.run(_command(data, spec), cwd=cwd, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert Counter(server.requests("reader")) == questions - answered  # only the missing answers
    assert len(server.requests("judge")) == 48 - stored.get("verdict", 0)
    got = _results(cwd)
    assert got.payload["calls"] == {"compressor": 0, "reader": 48 - answered.total(), "judge": 48 - stored["verdict"]}
    assert _comparable(got) == _comparable(expected)
    _assert_key_not_written(tmp_path, done.stdout, done.stderr, rerun.stdout, rerun.stderr)


def test_a_replica_going_down_mid_run_leaves_the_run_to_the_other(servers, cache_dir):
    a, b = servers(delay=0.05), servers(delay=0.05)
    rows = synthetic_rows(seed=3, contexts=8, goals_per_context=2, questions_per_goal=3)

    def stop_b() -> None:
        while len(b.requests("reader")) < 6:
            time.sleep(0.002)
        b.stop()  # requests it holds now are dropped unanswered, new ones refused

    threading.Thread(target=stop_b, daemon=True).start()
    spec = f"openai:echo@{a.url}|{b.url}?concurrency=4&retries=2&backoff=0.05&timeout=10"
    result = run_benchmark(rows, compressor="goal-lines", reader=spec, judge="exact", ratios=[0.5],
                           conditions=["own"], cache_dir=cache_dir, progress=False, on_error="record")  # fmt: skip
    assert result.errors == []
    assert all(row["answer"] == row["question"] for row in result.answers)  # every question answered
    served_a, served_b = len(a.requests("reader")), len(b.requests("reader"))
    assert served_b >= 6 and served_a >= 48 - served_b and served_a + served_b == 48
    assert result.calls["reader"] == 48  # one call per item: the retries happened inside the client
    again = run_benchmark(rows, compressor="goal-lines", reader=spec, judge="exact", ratios=[0.5],
                          conditions=["own"], cache_dir=cache_dir, progress=False)  # fmt: skip
    assert again.calls["reader"] == 0 and again.scores == result.scores  # the dead URL still listed


def test_a_replica_down_from_the_start_is_left_out_with_a_warning(servers, cache_dir, caplog):
    a, b = servers(), servers()
    b.stop()
    rows = synthetic_rows(seed=3, contexts=2, goals_per_context=1, questions_per_goal=3)
    spec = f"openai:echo@{b.url}|{a.url}?retries=2&backoff=0.05&timeout=10"
    with caplog.at_level("WARNING", logger="gacc_hf"):
        result = run_benchmark(rows, compressor="goal-lines", reader=spec, judge="exact", ratios=[0.5],
                               conditions=["own"], cache_dir=cache_dir, progress=False)  # fmt: skip
    assert result.errors == [] and len(a.requests("reader")) == 6  # every question, all on the live one
    warned = [r.getMessage() for r in caplog.records if "does not answer" in r.getMessage()]
    assert len(warned) == 1 and warned[0].startswith(f"openai: replica {b.url} does not answer (GET ")
    assert warned[0].endswith("); running on the other 1")


def test_no_replica_answering_is_an_error_after_the_usual_retries(servers, cache_dir):
    a, b = servers(), servers()
    a.stop(), b.stop()
    spec = f"openai:echo@{a.url}|{b.url}?retries=1&backoff=0.01&timeout=5"
    rows = synthetic_rows(seed=3, contexts=1, goals_per_context=1, questions_per_goal=2)
    with pytest.raises(ServerError, match=r"GET .*/models failed after 2 attempts"):
        run_benchmark(rows, compressor="goal-lines", reader=spec, judge="exact", ratios=[0.5], conditions=["own"],
                      cache_dir=cache_dir, progress=False)  # fmt: skip


def test_replica_revision_ignores_the_urls_and_replicas_of_different_models_are_refused(servers):
    a, b = servers(), servers()
    one = OpenAIReader(Settings("echo", a.url))
    both = OpenAIReader(Settings("echo", f"{b.url}|{a.url}"))
    assert both.revision == one.revision and both.concurrency == 8
    other = servers(entry={"id": "echo", "owned_by": "tests", "root": "/models/other.gguf"})
    with pytest.raises(ServerError, match=r"replicas of 'echo' serve different models \(.*other\.gguf") as info:
        OpenAIReader(Settings("echo", f"{a.url}|{other.url}"))
    assert a.url in str(info.value) and other.url in str(info.value)
    with pytest.raises(ServerError, match=f"{other.url} does not serve model 'nope'"):
        OpenAIReader(Settings("nope", f"{other.url}|{a.url}"))
    assert a.log == b.log == other.log == []  # identity checks only: no chat request was made


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        ("|", r"replica 2 of 2 in .* is empty"),
        ("||{a}", r"replica 2 of 3 in .* is empty"),
        ("|http://u:pw-secret@127.0.0.1:9/v1", r"the server URL http://\*\*\*@127.0.0.1:9/v1 holds credentials"),
        ("|{a}", "a server URL is given twice"),
        ("?concurrency=0", r"concurrency must be >= 1 \(requests in flight at once\), got 0"),
    ],
)
def test_bad_replica_lists_and_concurrency_fail_before_any_work(servers, cache_dir, tail, message):
    a = servers()
    spec = f"openai:echo@{a.url}{tail.format(a=a.url)}"
    rows = synthetic_rows(seed=3, contexts=1, goals_per_context=1, questions_per_goal=2)
    with pytest.raises(ValueError, match=message) as info:
        run_benchmark(rows, compressor="goal-lines", reader=spec, judge="exact", ratios=[0.5], conditions=["own"],
                      cache_dir=cache_dir, progress=False)  # fmt: skip
    assert "pw-secret" not in str(info.value)
    assert a.log == [] and not Path(cache_dir).exists()  # no request, nothing written


def test_a_max_cost_run_stops_before_passing_it_and_the_same_command_goes_on_to_the_same_results(servers, tmp_path):
    from gacc_hf.cost.limits import LimitReached, SpendingLimits
    from gacc_hf.cost.prices import Price, Prices

    server = servers(delay=0.01)
    spec = f"openai:echo@{server.url}?concurrency=4&max_tokens=8"
    rows = synthetic_rows(seed=6, contexts=4, goals_per_context=2, questions_per_goal=3)  # 24 answers, 24 verdicts
    kwargs = {"compressor": "goal-lines", "reader": spec, "judge": spec, "ratios": [0.5], "conditions": ["own"]}
    kwargs |= {"n_bootstrap": 0, "progress": False}
    expected = run_benchmark(rows, cache_dir=str(tmp_path / "whole"), **kwargs)
    assert len(server.requests("reader")) == len(server.requests("judge")) == 24
    # a completion token costs 1 and a call may generate 8, so each call is counted at >= 8 until it is back
    limits = SpendingLimits(max_cost=100, prices=Prices({"echo": Price(prompt=0, completion=1_000_000)}))
    server.log.clear()
    stops = 0
    while True:
        try:
            got = run_benchmark(rows, cache_dir=str(tmp_path / "limited"), limits=limits, **kwargs)
            break
        except LimitReached as exc:
            stops += 1
            made = "20 calls" if stops == 1 else "12 calls"  # the first run also made the 8 (free) memories
            assert f"stopped at --max-cost 100: this run made {made} (cost at most 96)" in str(exc)
        assert stops < 10
    # no server sends usage: every call counts at its bound, 8, so 12 calls (96) fit in 100 and 13 do not
    assert stops == 3 and got.calls == {"compressor": 0, "reader": 0, "judge": 48 - 12 * 3}
    assert len(server.requests("reader")) == len(server.requests("judge")) == 24  # nothing was asked twice
    assert got.answers == expected.answers and got.scores == expected.scores
