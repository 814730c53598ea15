"""Why a config file that the YAML/TOML parser could not turn into Python values failed, with file, line and key.

Python itself refuses two things a parser may meet: nesting deeper than its recursion limit (thousands of
brackets) and integers of more than `sys.get_int_max_str_digits()` digits. Neither message names the file.
"""

from __future__ import annotations

from pathlib import Path

from gacc_hf.safe_yaml import long_number


def unreadable(path: Path, text: str, exc: RecursionError | ValueError) -> str:
    """The one-line message for a config file the parser gave up on with `exc`."""
    if isinstance(exc, RecursionError):
        return f"{path}: nested too deeply to read (thousands of brackets or indents); a run config is flat keys"
    found = long_number(text)
    return f"{path}: {found}; give a small integer" if found else f"{path}: cannot be read: {exc}"
