"""The one networked step of publishing, and the pure pieces before it.

Everything up to `commit` is a pure function of local files (an upload plan of
`CommitOperationAdd`s), so it is tested offline; `commit` takes its `HfApi` as an argument and is the
only place that writes to the Hub.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from huggingface_hub import CommitOperationAdd, HfApi

from gacc_hf.online import OfflineError, require_online
from gacc_hf.redaction import redact

_TEXT_SUFFIXES = (".md", ".html", ".json", ".yaml", ".yml", ".txt")

# the longest text file a dry run prints in full (a card, `.eval_results`, eval.yaml); a longer one (the Space's
# page) is listed by size, and `--dry-run-dir` writes every file for reading
SHOWN_MAX_CHARS = 20_000

# how long `require_reachable` waits for the Hub's TCP port: a reachable Hub answers in well under a second
REACH_TIMEOUT_S = 4.0


class PublishError(ValueError):
    """A run that must not be published as it is; the message says why and what to do."""


@dataclass(frozen=True)
class RepoPlan:
    """What one commit to one Hub repo would add; `pr` opens it as a pull request instead."""

    repo_id: str
    repo_type: str
    operations: list[CommitOperationAdd]
    message: str
    pr: bool = False
    notes: tuple[str, ...] = ()  # one line each, shown under the plan (what it leaves out, and why)

    def describe(self) -> str:
        plan = describe_plan(self.repo_id, self.repo_type, self.operations, pr=self.pr)
        return "\n".join([plan, *(f"  {note}" for note in self.notes)])


def check_repo_id(flag: str, repo_id: str, kind: str = "repo") -> None:
    """Refuse a repo id the Hub would refuse (huggingface_hub's own rules) or one without an owner, before anything
    is read or planned, so that a dry run refuses what a real publish would."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(repo_id)
    except HFValidationError as exc:
        reason = str(exc).split(": '", 1)[0]
        raise PublishError(f"{flag} {repo_id!r}: not a Hub repo id ({reason}); a {kind} is named OWNER/NAME") from None
    if "/" not in repo_id:
        raise PublishError(f"{flag} {repo_id!r}: a {kind} is named OWNER/NAME (for example me/gacc-results)")


def hub_endpoint() -> str:
    """The Hub's address as huggingface_hub reads it (`HF_ENDPOINT`, else huggingface.co)."""
    from huggingface_hub import constants

    return constants.ENDPOINT


def require_reachable(action: str, endpoint: str | None = None, timeout: float = REACH_TIMEOUT_S) -> None:
    """Fail in at most `timeout` seconds, with one line, when the Hub's host does not accept a connection;
    huggingface_hub would otherwise retry for half a minute and end in a traceback."""
    url = urlsplit(endpoint or hub_endpoint())
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((url.hostname or "", port), timeout=timeout).close()
    except (OSError, UnicodeError) as exc:
        raise OfflineError(
            f"cannot {action}: the Hub at {url.scheme}://{url.netloc} is unreachable ({exc.strerror or exc}); "
            "check the network (or HF_ENDPOINT) and rerun"
        ) from None


@contextmanager
def reaching_hub(action: str) -> Iterator[None]:
    """Guard a networked step: refuse it offline or when the Hub's host is unreachable, and say a network lost
    during it in one line, so that `gacc publish` and `gacc data push` fail alike (exit 2, no traceback)."""
    require_online(action)
    require_reachable(action)
    try:
        yield
    except Exception as exc:
        if not connection_error(exc):
            raise
        raise OfflineError(
            f"cannot {action}: the Hub at {hub_endpoint()} stopped answering ({type(exc).__name__}: {exc}); "
            "nothing or part was pushed: rerun when the network is back"
        ) from None


def connection_error(exc: BaseException) -> bool:
    """Whether an exception raised while talking to the Hub is the network failing (not a refusal by the Hub)."""
    import httpx2
    from huggingface_hub.errors import LocalEntryNotFoundError  # a download the network failed

    return isinstance(exc, httpx2.TransportError | LocalEntryNotFoundError | ConnectionError | TimeoutError)


def folder_operations(folder: str | Path, path_in_repo: str = "") -> list[CommitOperationAdd]:
    """One upload operation per file under `folder`, in sorted order (hidden files skipped)."""
    root = Path(folder)
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a folder")
    ops = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        target = f"{path_in_repo.strip('/')}/{rel.as_posix()}" if path_in_repo else rel.as_posix()
        ops.append(CommitOperationAdd(path_in_repo=target, path_or_fileobj=str(path)))
    return ops


def describe_plan(repo_id: str, repo_type: str, operations: Sequence[CommitOperationAdd], pr: bool = False) -> str:
    """A human-readable upload plan (what `--dry-run` prints)."""
    how = ", opened as a pull request" if pr else ""
    lines = [f"repo: {repo_id} ({repo_type}), {len(operations)} file(s){how}:"]
    for op in operations:
        size = os.path.getsize(op.path_or_fileobj) if isinstance(op.path_or_fileobj, str) else len(op.path_or_fileobj)
        lines.append(f"  + {op.path_in_repo}  ({size:,} bytes)")
    return "\n".join(lines)


def operation_text(op: CommitOperationAdd) -> str | None:
    """The text an upload carries (generated, or a text file by its suffix); None for binary files."""
    if isinstance(op.path_or_fileobj, bytes):
        return op.path_or_fileobj.decode("utf-8")
    if isinstance(op.path_or_fileobj, str) and op.path_or_fileobj.endswith(_TEXT_SUFFIXES):
        return Path(op.path_or_fileobj).read_text(encoding="utf-8", errors="replace")
    return None


def shown_file(label: str, text: str) -> str:
    """One generated file as a dry run prints it: a `==> label <==` line, then the text in full, or one line
    giving its size when it is longer than `SHOWN_MAX_CHARS`."""
    if len(text) > SHOWN_MAX_CHARS:
        return f"\n==> {label} <==\n({len(text):,} characters, not shown: --dry-run-dir DIR writes it)\n"
    return f"\n==> {label} <==\n{text}" + ("" if text.endswith("\n") else "\n")


def check_dry_run_dir(folder: str | Path) -> Path:
    """Refuse a `--dry-run-dir` that holds anything (a dry run never overwrites a file), before any work."""
    root = Path(folder)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise PublishError(f"--dry-run-dir {root}: exists and is not an empty folder; name a new or empty one")
    return root


def write_plans(plans: Sequence[RepoPlan], folder: str | Path) -> list[Path]:
    """Write every file of the plans under `folder` as `<models|datasets|spaces>/OWNER/NAME/<path in repo>` (the
    Hub's own URL layout), for a dry run to be read; `folder` must be new or empty. Returns the files written."""
    root = check_dry_run_dir(folder)
    written = []
    for plan in plans:
        for op in plan.operations:
            path = root / f"{plan.repo_type}s" / plan.repo_id / op.path_in_repo
            path.parent.mkdir(parents=True, exist_ok=True)
            data = op.path_or_fileobj
            path.write_bytes(data if isinstance(data, bytes) else Path(str(data)).read_bytes())
            written.append(path)
    return written


def check_no_secrets(plans: Sequence[RepoPlan]) -> None:
    """Refuse a plan whose text files hold anything `redact` would hide (a URL's credentials, a key)."""
    for plan in plans:
        for op in plan.operations:
            text = operation_text(op)
            if text is not None and redact(text) != text:
                raise PublishError(
                    f"{plan.repo_id}:{op.path_in_repo} holds a credential-shaped value (a key or a URL's "
                    "user-info); nothing is published: remove it from the results folder and run `gacc report`"
                )


def commit(
    api: HfApi, repo_id: str, repo_type: str, operations: Sequence[CommitOperationAdd], message: str, pr: bool = False
) -> str:
    """Push the operations in one commit (creating the repo if needed; a Space as a static one), or open them
    as one pull request on an existing repo when `pr`; returns the commit or pull-request URL."""
    require_online(f"push to {repo_id}")
    if not pr:
        sdk = {"space_sdk": "static"} if repo_type == "space" else {}
        api.create_repo(repo_id, repo_type=repo_type, exist_ok=True, **sdk)
    info = api.create_commit(repo_id, list(operations), commit_message=message, repo_type=repo_type, create_pr=pr)
    return str(info.pr_url if pr else info.commit_url)
