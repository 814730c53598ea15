"""Progress labels of the ranks of a launch (per-item progress itself: tests/run/test_rolling.py)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from gacc_hf import progress
from gacc_hf.progress import RoleProgress, show_rank


@pytest.fixture(autouse=True)
def _one_process() -> Iterator[None]:
    yield
    show_rank(0, 1)


def test_a_rank_of_several_labels_its_bar_and_summary_and_keeps_a_line_of_its_own(capsys, caplog):
    show_rank(1, 2)
    bar = RoleProgress("reader", "smollm2", 3, enabled=True)
    bar.advance(3)
    with caplog.at_level(logging.INFO, logger="gacc_hf.progress"):
        bar.close()
    assert bar._bar.pos in (1, -1) and "rank 1/2: reader smollm2" in capsys.readouterr().err
    assert [r.getMessage().split(":")[:2] for r in caplog.records] == [["rank 1/2", " reader smollm2"]]


def test_one_process_has_no_rank_label():
    show_rank(0, 1)
    bar = RoleProgress("judge", "exact", 0, enabled=False)
    assert bar.label == "judge exact" and progress._rank["position"] == 0


def test_a_bar_that_grows_from_nothing_keeps_the_rank_label(capsys):
    show_rank(2, 3)
    bar = RoleProgress("compressor", "truncate", 0, enabled=True)
    bar.grow(2)
    bar.advance(2)
    bar.close()
    assert "rank 2/3: compressor truncate" in capsys.readouterr().err
