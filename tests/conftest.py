"""Shared fixtures: every test runs offline and with its own cache directory."""

from __future__ import annotations

import logging
import os
import shutil

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


_LOG = logging.getLogger("gacc_hf")
_PRISTINE = (list(_LOG.handlers), _LOG.propagate, _LOG.level)


@pytest.fixture(autouse=True)
def _restore_gacc_logger():
    """The CLI gives the `gacc_hf` logger its own stderr handler, its level and no propagation; a test (or a module
    fixture) that runs the CLI in-process must not leave it so, or a later test's `caplog` and stderr see other
    lines. Each test ends with the logger as the session found it."""
    yield
    _LOG.handlers[:], _LOG.propagate = _PRISTINE[0], _PRISTINE[1]
    _LOG.setLevel(_PRISTINE[2])


@pytest.fixture
def cache_dir(tmp_path):
    return str(tmp_path / "cache")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A real rule-based run written as a results folder, shared by the tests of one module."""
    from tests.helpers.results import real_run

    root = tmp_path_factory.mktemp("run")
    result = real_run(root / "run", root / "cache")
    return root / "run", result


@pytest.fixture
def folder(run, tmp_path):
    """A private copy of the module's run folder that a test may damage."""
    return shutil.copytree(run[0], tmp_path / "run")


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """A tiny randomly initialised chat model saved as a local folder: plumbing, not quality."""
    from tests.helpers.models import save_tiny_chat_model

    return save_tiny_chat_model(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="session")
def tiny_other_seed(tmp_path_factory):
    """The same tiny architecture with other weights: a model whose outputs (and revision) differ."""
    from tests.helpers.models import save_tiny_chat_model

    return save_tiny_chat_model(tmp_path_factory.mktemp("tiny1"), seed=1)
