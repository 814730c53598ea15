"""One way to run code in a fresh interpreter: where a test needs a process of its own (offline start-up, import
side effects, several ranks), the child prints one JSON object as its last stdout line and the test reads it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: Long enough for a child that loads a real model on a busy 2-core machine; a hung child still fails the test.
CHILD_TIMEOUT = 900


def last_json(stdout: str) -> Any:
    """The JSON object a child printed as its last line of stdout."""
    return json.loads(stdout.strip().splitlines()[-1])


def run_child(script: str, cwd: Path, env: Mapping[str, str], *args: str, timeout: float = CHILD_TIMEOUT) -> Any:
    """Run `python -c script args...` in `cwd` with exactly `env`; fail with its output when it fails."""
    cwd.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [sys.executable, "-c", script, *args], cwd=cwd, env=dict(env), capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, f"child failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    return last_json(proc.stdout)
