"""Publishing without a network: one line, exit 2, in seconds; a network lost midway is said as such."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx2
import pytest
from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

import gacc_hf.cli.results as results_cli
from gacc_hf.cli import main
from gacc_hf.hub import commit
from gacc_hf.hub.commit import OfflineError, connection_error, require_reachable
from gacc_hf.hub.model_card import fetch_card
from tests.helpers.paths import ROOT

PUBLISH = ["publish", str(ROOT / "docs" / "results" / "main"), "--repo-id", "me/m", "--compressor", "truncate"]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _gacc(env: dict[str, str]) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "gacc_hf", *PUBLISH],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "HF_TOKEN": "hf_" + "x" * 34, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc, time.monotonic() - start


@pytest.mark.parametrize("offline", ["HF_ENDPOINT", "HF_HUB_OFFLINE"])
def test_publish_without_the_hub_exits_2_with_one_line_in_seconds(offline):
    port = _closed_port()
    env = {"HF_ENDPOINT": f"http://127.0.0.1:{port}"} if offline == "HF_ENDPOINT" else {"HF_HUB_OFFLINE": "1"}
    if offline == "HF_ENDPOINT":
        env["HF_HUB_OFFLINE"] = "0"
    proc, seconds = _gacc(env)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("gacc publish: error: cannot publish to me/m: ")
    assert (f"127.0.0.1:{port} is unreachable" if offline == "HF_ENDPOINT" else "HF_HUB_OFFLINE") in proc.stderr
    assert seconds < 10


def test_a_host_that_does_not_answer_is_given_up_after_the_timeout(monkeypatch):
    def silent(address, timeout):
        assert timeout == commit.REACH_TIMEOUT_S
        raise TimeoutError("timed out")

    monkeypatch.setattr(commit.socket, "create_connection", silent)
    with pytest.raises(OfflineError, match=r"the Hub at https://hub.example is unreachable \(timed out\)"):
        require_reachable("publish to me/m", "https://hub.example")


def test_a_listening_hub_is_reachable():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        require_reachable("publish", f"http://127.0.0.1:{server.getsockname()[1]}")  # no error


def test_a_network_lost_midway_is_one_line_and_a_refusal_by_the_hub_is_not_called_that(monkeypatch, capsys):
    monkeypatch.setattr(commit, "require_reachable", lambda *a: None)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    lost = httpx2.ConnectError("[Errno 111] Connection refused")
    monkeypatch.setattr(results_cli, "_publish", lambda args: (_ for _ in ()).throw(lost))
    assert main(PUBLISH) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "stopped answering (ConnectError: [Errno 111] Connection refused)" in err
    assert connection_error(LocalEntryNotFoundError("no network")) and connection_error(TimeoutError())
    refused = HfHubHTTPError("404 Not Found", response=httpx2.Response(404, request=httpx2.Request("GET", "http://h")))
    assert not connection_error(refused) and not connection_error(FileNotFoundError("x"))


def test_a_card_the_network_kept_from_us_is_not_taken_for_no_card():
    class Api:
        def hf_hub_download(self, *_args):
            raise LocalEntryNotFoundError("outgoing traffic failed")

    with pytest.raises(LocalEntryNotFoundError):
        fetch_card(Api(), "me/m")
