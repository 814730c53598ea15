"""Exit codes and one-line messages: each class of exception gets its code, messages name the file and
hide credentials, and the README and `gacc --help` list the same codes."""

from __future__ import annotations

import re
import sqlite3

import pytest

from gacc_hf import errors
from gacc_hf.cli import build_parser
from gacc_hf.data.schema import DataSourceError
from gacc_hf.run.cache import CacheError
from gacc_hf.run.calls import MethodError
from tests.helpers.paths import ROOT

README = ROOT / "README.md"


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (MethodError("reader 'x' failed on question_id='q'"), errors.MODEL_FAILURES),
        (DataSourceError("data.txt: unsupported file type"), errors.BAD_INPUT),
        (CacheError("cache c is damaged"), errors.BAD_INPUT),
        (PermissionError(13, "Permission denied", "/out/results.json"), errors.BAD_INPUT),
        (sqlite3.OperationalError("disk I/O error"), errors.BAD_INPUT),
        (UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed"), errors.BAD_INPUT),
        (ZeroDivisionError("division by zero"), errors.BUG),
        (KeyError("memory"), errors.BUG),
    ],
)
def test_each_class_of_exception_has_its_code(exc, code):
    assert errors.exit_code(exc) == code


def test_a_class_states_its_own_code():
    class Stopped(RuntimeError):
        exit_code = errors.RANK_DIED

    class Unstated(RuntimeError):
        pass

    assert errors.exit_code(Stopped("x")) == errors.RANK_DIED
    assert errors.exit_code(Unstated("x")) == errors.BAD_INPUT  # its kind decides


def test_messages_name_the_file_and_hide_credentials():
    exc = PermissionError(13, "Permission denied", "/out/results.json")
    assert (
        errors.describe(exc)
        == "/out/results.json: Permission denied: check the path, its permissions and the free space"
    )
    assert errors.describe(sqlite3.DatabaseError("database disk image is malformed")).startswith(
        "cache database error: database disk image is malformed: move the cache folder aside"
    )
    leaky = RuntimeError("GET http://admin:hunter22@10.0.0.1:8000/v1/models failed")
    assert errors.describe(leaky) == "GET http://***@10.0.0.1:8000/v1/models failed"
    assert errors.describe(ZeroDivisionError("x")) == "unexpected ZeroDivisionError: x"


def test_readme_and_help_list_the_same_codes():
    table = dict(re.findall(r"^\| ([0-4]) \| (.+) \|$", README.read_text(encoding="utf-8"), re.M))
    assert sorted(table) == ["0", "1", "2", "3", "4"]
    epilog = dict(re.findall(r"^  ([0-4])  (.+)$", errors.EPILOG, re.M))
    assert sorted(epilog) == sorted(table)
    for code, first_word in (
        ("1", "the run finished"),
        ("2", "bad input"),
        ("3", "calls left undone"),
        ("4", "an unexpected"),
    ):
        assert table[code].startswith(first_word) and epilog[code].startswith(first_word)
    assert errors.EPILOG in build_parser().format_help()
