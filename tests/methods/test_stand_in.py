"""The stand-in server (`gacc serve-test`): what it answers for each role in English and Chinese, the usage it
reports (counted by hand), its latency, its refusals of requests it cannot read, its stops, and the command's
clean ends. Every request goes to a real server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys

import httpx
import pytest

from gacc_hf.cli import main
from gacc_hf.methods.registry import resolve
from gacc_hf.methods.stand_in import StandIn, listen, running
from gacc_hf.protocol import CompressorInput, JudgeInput, ReaderInput
from tests.helpers.paths import ROOT


def chat(url: str, messages: list[dict[str, str]], **extra: object) -> dict:
    answer = httpx.post(f"{url}/chat/completions", json={"model": "stand-in", "messages": messages, **extra})
    assert answer.status_code == 200, answer.text
    return answer.json()


@pytest.mark.parametrize(
    ("question", "memory"), [("What is the deadline?", "deadline: Friday"), ("截止日期是什么？", "截止日期：周五")]
)
def test_echo_answers_each_role_of_the_openai_methods(question, memory):
    with running(StandIn(compressor_words=3)) as server:
        spec = f"openai:stand-in@{server.url}"
        compressor, reader, judge = (resolve(role, spec) for role in ("compressor", "reader", "judge"))
        kept = compressor(CompressorInput("one two three four 五六", "the deadline", 10))
        answer = reader(ReaderInput(memory, question))
        verdict = judge(JudgeInput(question, "no idea", ("Friday",), "source"))
        models = httpx.get(f"{server.url}/models").json()
    assert kept == "one two three"  # the document's first 3 words
    assert answer == f"{question} #{hashlib.sha256(memory.encode()).hexdigest()[:6]}"
    assert verdict is True  # echo's judge says yes to anything
    assert models["data"] == [{"id": "stand-in", "object": "model", "owned_by": "stand-in"}]
    assert server.chats == 3 and server.gets == 4  # /models: each method's identity, then the one above


def test_usage_is_counted_in_four_byte_tokens_within_max_tokens():
    messages = [{"role": "system", "content": "abcdefghi"}, {"role": "user", "content": "你好"}]
    with running(StandIn()) as server:
        answer = chat(server.url, messages)
        capped = chat(server.url, messages, max_tokens=1)
    # 9 bytes -> 3 tokens, "你好" 6 bytes -> 2: prompt 5; the echo of "你好" is 2 tokens, 1 under max_tokens=1
    assert answer["choices"][0]["message"]["content"] == "你好"
    assert answer["usage"] == {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    assert capped["usage"] == {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}


def test_no_usage_and_fixed_answers_and_model_names():
    with running(StandIn("fixed", answer="好的", report_usage=False, models=("a", "模型"))) as server:
        answer = chat(server.url, [{"role": "user", "content": "anything"}])
        models = [m["id"] for m in httpx.get(f"{server.url}/models").json()["data"]]
    assert answer["choices"][0]["message"]["content"] == "好的" and "usage" not in answer
    assert models == ["a", "模型"]


CONTENT_CASES = [
    # (language, document, goal, question, reference, the reader's value)
    ("en", "Owner: Ann\nColour: red\nDeadline: Friday", "the owner", "What is the owner?", "Ann", "Ann"),
    ("zh", "负责人：王芳\n颜色：红色\n截止日期：周五", "负责人", "负责人是什么？", "王芳", "王芳"),
]


@pytest.mark.parametrize(("language", "document", "goal", "question", "reference", "value"), CONTENT_CASES)
def test_content_replies_keep_the_goals_field_read_it_and_judge_by_the_reference(
    language, document, goal, question, reference, value
):
    with running(StandIn("content")) as server:
        spec = f"openai:stand-in@{server.url}"
        compressor, reader, judge = (resolve(role, spec) for role in ("compressor", "reader", "judge"))
        kept = compressor(CompressorInput(document, goal, 1))  # a budget of 1 token: the goal's line alone
        answer = reader(ReaderInput(kept, question))
        lost = reader(ReaderInput("", question))
        right = judge(JudgeInput(question, answer, (reference,), document))
        wrong = judge(JudgeInput(question, lost, (reference,), document))
    assert kept == document.split("\n")[0]
    assert value in answer and lost == ("unknown" if language == "en" else "不知道")
    assert (right, wrong) == (True, False)


def test_latency_is_waited_and_measured():
    with running(StandIn(latency=0.2, spread=0)) as server:
        for _ in range(3):
            chat(server.url, [{"role": "user", "content": "x"}])
        stats = httpx.post(f"{server.url}/stats").json()  # read and start afresh
        after = httpx.get(f"{server.url}/stats").json()
    assert stats["requests"] == 3 and stats["service"] == pytest.approx(0.6) and stats["busy"] >= 0.6
    assert stats["in_flight"] == 0 and after["requests"] == 0 and after["service"] == 0
    with running(StandIn()) as server:  # no latency asked: none added
        chat(server.url, [{"role": "user", "content": "x"}])
        assert httpx.get(f"{server.url}/stats").json()["service"] == 0


def raw(port: int, data: bytes) -> tuple[int, dict]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def post(path: str, body: bytes, extra: str = "") -> bytes:
    return f"POST {path} HTTP/1.1\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode() + body


REFUSED = {
    b"garbage\r\n\r\n": 400,
    post("/v1/chat/completions", b"{not json"): 400,
    post("/v1/chat/completions", b'{"model": "x"}'): 400,
    post("/v1/chat/completions", b'{"messages": []}'): 400,
    post("/v1/chat/completions", b'{"messages": [{"role": "user", "content": 7}]}'): 400,
    post("/v1/chat/completions", b"", "Content-Length: x\r\n").replace(b"Content-Length: 0\r\n", b""): 400,
    post("/v1/chat/completions", b"{}", "Transfer-Encoding: chunked\r\n"): 411,
    b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n": 413,
    b"GET /v1/chat/completions HTTP/1.1\r\n\r\n": 405,
    b"GET /v1/other HTTP/1.1\r\n\r\n": 404,
    b"GET /v1/models HTTP/1.1\r\nX: " + b"x" * 70_000 + b"\r\n\r\n": 431,  # a head over 64 KiB
}


def test_requests_it_cannot_read_are_refused_quietly_and_it_serves_on(capfd):
    with running(StandIn()) as server:
        port = int(server.url.split(":")[2].split("/")[0])
        answers = {request: raw(port, request) for request in REFUSED}
        with socket.create_connection(("127.0.0.1", port)) as sock:  # a client that goes away mid-request
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 100\r\n\r\n{")
        ok = chat(server.url, [{"role": "user", "content": "still here"}])
    assert {request: status for request, (status, _) in answers.items()} == REFUSED
    assert all(body["error"]["code"] == status for status, body in answers.values())
    assert ok["choices"][0]["message"]["content"] == "still here"
    assert capfd.readouterr() == ("", "")


def test_it_stops_by_itself_after_max_requests_or_idle():
    async def serve(stand_in: StandIn, requests: int) -> str:
        sock = listen(0)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
        task = asyncio.create_task(stand_in.serve(sock))
        async with httpx.AsyncClient() as client:
            await asyncio.sleep(0.1)
            for _ in range(requests):
                await client.post(f"{url}/chat/completions", json={"messages": [{"role": "user", "content": "x"}]})
        why = await asyncio.wait_for(task, timeout=30)
        sock.close()
        return why

    assert asyncio.run(serve(StandIn(max_requests=2), 2)) == "after 2 chat requests (--max-requests)"
    assert asyncio.run(serve(StandIn(idle=0.3), 1)) == "after 0.3 s without a request (--idle)"


def test_impossible_settings_are_named_together():
    with pytest.raises(ValueError) as caught:
        StandIn("chatty", latency=-1, spread=-0.5, compressor_words=0, max_requests=0, idle=0, models=("",))
    assert str(caught.value) == (
        "serve-test: --replies 'chatty': one of echo, fixed, content; --models: at least one name; "
        "--latency -1: seconds >= 0; --spread -0.5: >= 0; --compressor-words 0: >= 1; --max-requests 0: >= 1; "
        "--idle 0: seconds > 0"
    )
    StandIn("content", latency=0, spread=0, compressor_words=1, max_requests=1, idle=0.5)  # the allowed edges


def gacc(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "gacc_hf", "serve-test", *args]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_the_command_prints_its_url_and_ctrl_c_or_sigterm_stop_it(stop):
    proc = gacc("--port", "0", "--models", "m1,m2")
    try:
        first = proc.stdout.readline()
        url = first.split()[0]
        models = [m["id"] for m in httpx.get(f"{url}/models").json()["data"]]
        proc.send_signal(stop)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert first.startswith("http://127.0.0.1:") and first.endswith(" serves m1, m2 (echo replies; Ctrl-C stops)\n")
    assert models == ["m1", "m2"]
    assert (proc.returncode, err) == (0, "gacc serve-test: stopped serving\n")


def test_the_command_stops_by_itself_after_max_requests():
    proc = gacc("--port", "0", "--max-requests", "1")
    try:
        url = proc.stdout.readline().split()[0]
        chat(url, [{"role": "user", "content": "x"}])
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert (proc.returncode, err) == (0, "gacc serve-test: stopped serving after 1 chat requests (--max-requests)\n")


def test_a_port_in_use_or_out_of_range_is_named(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve-test", "--port", str(port)]) == 2
    assert main(["serve-test", "--port", "65536"]) == 2
    assert main(["serve-test", "--port", "0", "--latency", "-2"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"gacc serve-test: error: --port {port}: port {port} on 127.0.0.1 is in use (another server?); "
        "pass another port, or 0 for any free one",
        "gacc serve-test: error: --port 65536: a port is 0 to 65535 (0: any free port)",
        "gacc serve-test: error: serve-test: --latency -2.0: seconds >= 0",
    ]
