"""Run a command where a folder cannot be written, also as root (who writes through any chmod)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def run_read_only(folder: Path, cmd: list[str]) -> subprocess.CompletedProcess:
    """Run `cmd` with `folder` read-only: chmod for a normal user; for root, a read-only bind mount in a
    private mount namespace (`unshare`). Skips the test where neither is possible."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    if os.geteuid() != 0:
        paths = [folder, *folder.rglob("*")]
        for path in paths:
            path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            return subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        finally:
            for path in paths:
                path.chmod(0o755 if path.is_dir() else 0o644)
    if shutil.which("unshare") is None:
        pytest.skip("root without unshare: no way to make a folder read-only")
    mount = f'mount --bind "{folder}" "{folder}" && mount -o remount,bind,ro "{folder}" && exec "$@"'
    proc = subprocess.run(
        ["unshare", "--mount", "sh", "-c", mount, "sh", *cmd], capture_output=True, text=True, env=env, check=False
    )
    if proc.stderr.startswith(("mount:", "unshare:")):
        pytest.skip(f"cannot make a read-only mount here: {proc.stderr.strip()}")
    return proc
