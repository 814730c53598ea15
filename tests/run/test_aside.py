from __future__ import annotations

import logging
import os
import signal

import pytest

from gacc_hf.run.aside import Aside


def _pid_and_sum(*numbers: int) -> tuple[int, int]:
    return os.getpid(), sum(numbers)


def _fails_apart(parent: int) -> int:
    if os.getpid() != parent:
        raise ValueError("only in the other process")
    return 7


def _dies_apart(parent: int) -> int:
    if os.getpid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)
    return 8


def test_work_apart_runs_in_another_process_and_gives_its_result() -> None:
    with Aside(_pid_and_sum, 1, 2, 3, apart=True) as work:
        pid, total = work.result()
    assert pid != os.getpid() and total == 6


def test_work_not_apart_runs_here_when_asked() -> None:
    with Aside(_pid_and_sum, 4, 5, apart=False) as work:
        assert work.result() == (os.getpid(), 9)


@pytest.mark.parametrize(("fn", "expected", "why"), [(_fails_apart, 7, "ValueError"), (_dies_apart, 8, "EOFError")])
def test_work_that_fails_or_dies_apart_is_done_here_with_a_warning(fn, expected, why, caplog) -> None:
    with caplog.at_level(logging.WARNING), Aside(fn, os.getpid(), apart=True) as work:
        assert work.result() == expected
    assert len(caplog.records) == 1 and why in caplog.records[0].getMessage()


def test_leaving_without_the_result_ends_the_process() -> None:
    with Aside(_pid_and_sum, 1, apart=True) as work:
        proc = work._proc
        assert proc.is_alive() or proc.exitcode is not None
    assert not proc.is_alive()


def test_the_process_apart_ignores_ctrl_c_and_this_one_keeps_its_handler() -> None:
    before = signal.getsignal(signal.SIGINT)
    with Aside(signal.getsignal, signal.SIGINT, apart=True) as work:
        assert work.result() == signal.SIG_IGN  # set before its first instruction: no traceback of an import
    assert signal.getsignal(signal.SIGINT) is before
    with Aside(signal.getsignal, signal.SIGINT, apart=False) as work:
        assert work.result() is before  # here, nothing is changed
