"""Why a config file that the YAML/TOML parser could not turn into Python values failed, with file, line and key.

Python itself refuses two things a parser may meet: nesting deeper than its recursion limit (thousands of
brackets) and integers of more than `sys.get_int_max_str_digits()` digits. Neither message names the file.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

_KEY = re.compile(r"^\s*['\"]?([\w.-]+)['\"]?\s*[:=]")


def unreadable(path: Path, text: str, exc: RecursionError | ValueError) -> str:
    """The one-line message for a config file the parser gave up on with `exc`."""
    if isinstance(exc, RecursionError):
        return f"{path}: nested too deeply to read (thousands of brackets or indents); a run config is flat keys"
    limit = sys.get_int_max_str_digits()
    digits = re.compile(rf"\d{{{limit},}}")
    for number, line in enumerate(text.splitlines(), 1):
        if digits.search(line):
            key = _KEY.match(line)
            where = f"line {number}" + (f", key {key.group(1)!r}" if key else "")
            return f"{path}: {where}: a number of more than {limit} digits; give a small integer"
    return f"{path}: cannot be read: {exc}"
