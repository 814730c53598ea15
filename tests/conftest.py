"""Shared fixtures: every test runs offline and with its own cache directory."""

from __future__ import annotations

import os
import shutil

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture
def cache_dir(tmp_path):
    return str(tmp_path / "cache")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A real rule-based run written as a results folder, shared by the tests of one module."""
    from results_helpers import real_run

    root = tmp_path_factory.mktemp("run")
    result = real_run(root / "run", root / "cache")
    return root / "run", result


@pytest.fixture
def folder(run, tmp_path):
    """A private copy of the module's run folder that a test may damage."""
    return shutil.copytree(run[0], tmp_path / "run")
