"""Work from both ends: every item done once, in the order given, whichever process did it; a job that fails in a
fresh process or in this one is raised; an item the other end claimed is skipped."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from gacc_hf.results.both_ends import _claim, both_ends


def _where(folder: Path, name: str) -> tuple[str, int]:
    """The item's name and the process that did it: "first" leaves a mark that every other item waits for, so
    the first item must be done where the last is not."""
    mark = folder / "first-done"
    if name == "first":
        mark.touch()
    for _ in range(600):
        if mark.exists():
            break
        time.sleep(0.1)
    return name, os.getpid()


def _fails_on(folder: Path, name: str) -> str:
    if name == "bad":
        raise ValueError(f"{name}: refused")
    return name


def test_fresh_processes_take_the_first_items_and_this_one_the_last(tmp_path):
    items = [(tmp_path, n) for n in ("first", "数据", "last")]
    ended = []
    done = both_ends(_where, items, 1, lambda: ended.append(1))
    assert [name for name, _ in done] == ["first", "数据", "last"]  # in the order given, wherever done
    assert done[0][1] != os.getpid() and done[2][1] == os.getpid()
    assert len(ended) == 3  # each item counted once, the ones skipped by the other end not at all


@pytest.mark.parametrize("names", [("ok", "bad"), ("bad", "ok"), ("bad", "ok", "ok", "ok")])
def test_a_job_that_fails_is_raised_wherever_it_ran(tmp_path, names):
    with pytest.raises(ValueError, match="bad: refused"):
        both_ends(_fails_on, [(tmp_path, n) for n in names], 1, lambda: None)


def test_an_item_is_claimed_once():
    import multiprocessing

    claims = multiprocessing.get_context("spawn").Array("b", 2)
    assert _claim(claims, 1) and not _claim(claims, 1) and _claim(claims, 0)
