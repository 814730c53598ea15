"""The one networked step. Against a recording stand-in for HfApi: a commit, a pull request, a static Space;
offline it stops before any call; a plan holding a credential never gets that far. Without a network: one line,
exit 2, in seconds; a network lost midway is said as such."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from types import SimpleNamespace

import httpx2
import pytest
from huggingface_hub import CommitOperationAdd
from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

import gacc_hf.cli.results as results_cli
from gacc_hf.cli import main
from gacc_hf.hub import commit as hub_commit
from gacc_hf.hub.benchmark_yaml import framework_warning
from gacc_hf.hub.commit import (
    OfflineError,
    PublishError,
    RepoPlan,
    check_no_secrets,
    commit,
    connection_error,
    describe_plan,
    require_reachable,
)
from gacc_hf.hub.model_card import fetch_card
from tests.helpers.paths import ROOT

OPS = [CommitOperationAdd("README.md", b"# card\n")]


class RecordingApi:
    """Records every call; answers like HfApi's create_commit."""

    def __init__(self):
        self.calls = []

    def create_repo(self, repo_id, **kw):
        self.calls.append(("create_repo", repo_id, kw))

    def create_commit(self, repo_id, operations, **kw):
        self.calls.append(("create_commit", repo_id, kw))
        return SimpleNamespace(commit_url=f"https://hf.co/{repo_id}/commit/1", pr_url=f"https://hf.co/{repo_id}/pr/1")


def test_a_commit_creates_the_repo_and_a_space_as_a_static_one(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)  # the stand-in reaches no network
    api = RecordingApi()
    assert commit(api, "me/m", "model", OPS, "msg") == "https://hf.co/me/m/commit/1"
    assert commit(api, "me/page", "space", OPS, "msg") == "https://hf.co/me/page/commit/1"
    assert api.calls[0] == ("create_repo", "me/m", {"repo_type": "model", "exist_ok": True})
    assert api.calls[2] == ("create_repo", "me/page", {"repo_type": "space", "exist_ok": True, "space_sdk": "static"})
    assert api.calls[3][2]["create_pr"] is False


def test_a_pull_request_creates_no_repo_and_returns_its_url(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    api = RecordingApi()
    assert commit(api, "someone/model", "model", OPS, "msg", pr=True) == "https://hf.co/someone/model/pr/1"
    assert api.calls == [
        ("create_commit", "someone/model", {"commit_message": "msg", "repo_type": "model", "create_pr": True})
    ]
    assert describe_plan("someone/model", "model", OPS, pr=True).startswith(
        "repo: someone/model (model), 1 file(s), opened as a pull request:"
    )


def test_offline_stops_before_any_call(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    api = RecordingApi()
    for pr in (False, True):
        with pytest.raises(OfflineError, match="HF_HUB_OFFLINE"):
            commit(api, "me/m", "model", OPS, "msg", pr=pr)
    assert api.calls == []


@pytest.mark.parametrize(
    "leak", ["token hf_" + "a1B2c3D4e5F6g7H8i9J0", "http://user:pw@10.0.0.1:8000/v1", "key sk-" + "abcdefgh12345"]
)
def test_a_plan_holding_a_credential_is_refused_naming_the_file(tmp_path, leak):
    report = tmp_path / "report.md"
    report.write_text("# 结果 results\n", encoding="utf-8")
    clean = [RepoPlan("me/m", "model", [*OPS, CommitOperationAdd("report.md", str(report))], "msg")]
    check_no_secrets(clean)  # quiet
    report.write_text(f"# 结果 results\n{leak}\n", encoding="utf-8")
    with pytest.raises(PublishError, match=r"^me/m:report\.md holds a credential-shaped value") as caught:
        check_no_secrets(clean)
    assert leak.split()[-1] not in str(caught.value)
    generated = [RepoPlan("me/page", "space", [CommitOperationAdd("index.html", leak.encode())], "msg")]
    with pytest.raises(PublishError, match=r"^me/page:index\.html holds"):
        check_no_secrets(generated)


PUBLISH = ["publish", str(ROOT / "docs" / "results" / "main"), "--repo-id", "me/m", "--compressor", "truncate"]
PUSH = ["data", "push", str(ROOT / "dataset_scripts" / "gacc_bench"), "me/d"]
# the line a push of the shipped folder prints first: its eval.yaml names a framework the Hub does not list yet
FRAMEWORK_LINE = framework_warning("gacc-hf", str(ROOT / "dataset_scripts" / "gacc_bench" / "eval.yaml")) + "\n"
# what each command says it cannot do, after `gacc <prog>: error: `
REFUSED = {"publish": ("publish", "publish to me/m"), "data push": ("data", "push to me/d")}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _gacc(argv: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "gacc_hf", *argv],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "HF_TOKEN": "hf_" + "x" * 34, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc, time.monotonic() - start


@pytest.mark.parametrize("command", ["publish", "data push"])
@pytest.mark.parametrize("offline", ["HF_ENDPOINT", "HF_HUB_OFFLINE"])
def test_publish_and_push_without_the_hub_exit_2_with_one_line_in_seconds(command, offline):
    port = _closed_port()
    env = {"HF_ENDPOINT": f"http://127.0.0.1:{port}"} if offline == "HF_ENDPOINT" else {"HF_HUB_OFFLINE": "1"}
    if offline == "HF_ENDPOINT":
        env["HF_HUB_OFFLINE"] = "0"
    proc, seconds = _gacc(PUBLISH if command == "publish" else PUSH, env)
    prog, action = REFUSED[command]
    assert proc.returncode == 2
    assert proc.stdout == "" if command == "publish" else proc.stdout.startswith("repo: me/d (dataset), 4 file(s):")
    stderr = proc.stderr.removeprefix(FRAMEWORK_LINE) if command == "data push" else proc.stderr
    assert stderr.count("\n") == 1 and stderr.startswith(f"gacc {prog}: error: cannot {action}: ")
    assert (f"127.0.0.1:{port} is unreachable" if offline == "HF_ENDPOINT" else "HF_HUB_OFFLINE") in proc.stderr
    assert seconds < 20  # the interpreter's start on a loaded machine included; the retries it spares take 30 s


def test_a_host_that_does_not_answer_is_given_up_after_the_timeout(monkeypatch):
    def silent(address, timeout):
        assert timeout == hub_commit.REACH_TIMEOUT_S
        raise TimeoutError("timed out")

    monkeypatch.setattr(hub_commit.socket, "create_connection", silent)
    with pytest.raises(OfflineError, match=r"the Hub at https://hub.example is unreachable \(timed out\)"):
        require_reachable("publish to me/m", "https://hub.example")


def test_a_listening_hub_is_reachable():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        require_reachable("publish", f"http://127.0.0.1:{server.getsockname()[1]}")  # no error


def test_a_network_lost_midway_is_one_line_and_a_refusal_by_the_hub_is_not_called_that(monkeypatch, capsys):
    monkeypatch.setattr(hub_commit, "require_reachable", lambda *a: None)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    lost = httpx2.ConnectError("[Errno 111] Connection refused")
    monkeypatch.setattr(results_cli, "_publish", lambda args: (_ for _ in ()).throw(lost))
    assert main(PUBLISH) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "stopped answering (ConnectError: [Errno 111] Connection refused)" in err
    assert connection_error(LocalEntryNotFoundError("no network")) and connection_error(TimeoutError())
    refused = HfHubHTTPError("404 Not Found", response=httpx2.Response(404, request=httpx2.Request("GET", "http://h")))
    assert not connection_error(refused) and not connection_error(FileNotFoundError("x"))


def test_a_push_that_loses_the_network_midway_is_one_line_and_one_that_reaches_it_prints_its_commit(
    monkeypatch, capsys
):
    monkeypatch.setattr(hub_commit, "require_reachable", lambda *a: None)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    lost = httpx2.ConnectError("[Errno -2] Name or service not known")
    monkeypatch.setattr(hub_commit, "commit", lambda *a: (_ for _ in ()).throw(lost))
    assert main(PUSH) == 2
    err = capsys.readouterr().err.removeprefix(FRAMEWORK_LINE)
    assert err.count("\n") == 1 and err.startswith("gacc data: error: cannot push to me/d: the Hub at ")
    assert "stopped answering (ConnectError: [Errno -2] Name or service not known)" in err
    monkeypatch.setattr(hub_commit, "commit", lambda api, repo_id, *a: f"https://hf.co/datasets/{repo_id}/commit/1")
    assert main(PUSH) == 0
    out, err = capsys.readouterr()
    assert out.endswith("\nhttps://hf.co/datasets/me/d/commit/1\n") and err == FRAMEWORK_LINE


def test_a_card_the_network_kept_from_us_is_not_taken_for_no_card():
    class Api:
        def hf_hub_download(self, *_args, **_kwargs):
            raise LocalEntryNotFoundError("outgoing traffic failed")

    with pytest.raises(LocalEntryNotFoundError):
        fetch_card(Api(), "me/m")
