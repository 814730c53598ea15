"""The one networked step of publishing, and the pure pieces before it.

Everything up to `commit` is a pure function of local files (an upload plan of
`CommitOperationAdd`s), so it is tested offline; `commit` takes its `HfApi` as an argument and is the
only place that talks to the Hub.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from huggingface_hub import CommitOperationAdd, HfApi

# how long `require_reachable` waits for the Hub's TCP port: a reachable Hub answers in well under a second
REACH_TIMEOUT_S = 4.0


class OfflineError(RuntimeError):
    """Publishing was asked for while the Hub is unreachable by configuration or by the network."""


def require_online(action: str) -> None:
    """Fail before doing anything when HF_HUB_OFFLINE is set."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        raise OfflineError(f"cannot {action}: HF_HUB_OFFLINE is set; unset it (and log in) to reach the Hub")


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


def describe_plan(repo_id: str, repo_type: str, operations: Sequence[CommitOperationAdd]) -> str:
    """A human-readable upload plan (what `--dry-run` prints)."""
    lines = [f"repo: {repo_id} ({repo_type}), {len(operations)} file(s):"]
    for op in operations:
        size = os.path.getsize(op.path_or_fileobj) if isinstance(op.path_or_fileobj, str) else len(op.path_or_fileobj)
        lines.append(f"  + {op.path_in_repo}  ({size:,} bytes)")
    return "\n".join(lines)


def commit(api: HfApi, repo_id: str, repo_type: str, operations: Sequence[CommitOperationAdd], message: str) -> str:
    """Create the repo if needed and push the operations in one commit; returns the commit URL."""
    require_online(f"push to {repo_id}")
    api.create_repo(repo_id, repo_type=repo_type, exist_ok=True)
    info = api.create_commit(repo_id, list(operations), commit_message=message, repo_type=repo_type)
    return str(info.commit_url)
