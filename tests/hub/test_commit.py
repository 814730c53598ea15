"""The one networked step, against a recording stand-in for HfApi: a commit, a pull request, a static Space;
offline it stops before any call; a plan holding a credential never gets that far."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from huggingface_hub import CommitOperationAdd

from gacc_hf.hub.commit import OfflineError, PublishError, RepoPlan, check_no_secrets, commit, describe_plan

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
