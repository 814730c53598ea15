"""Spending limits: checked before any work, split between ranks, counted call by call, and a stopped run
resumed by the same command to the results of an uninterrupted one."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from gacc_hf.cost.limits import LimitReached, Meter, SpendingLimits, launch_meter
from gacc_hf.cost.prices import Price, Prices
from gacc_hf.results.folder import read_folder
from tests.helpers.cli import outcome, run_args
from tests.helpers.counted import CountedCall
from tests.run.test_resume import _comparable

PRICES = Prices({"m": Price(prompt=1_000_000, completion=2_000_000)}, "USD")  # 1 per prompt token, 2 per completion


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_calls": 0}, "--max-calls must be an integer >= 1"),
        ({"max_calls": -3}, "--max-calls must be an integer >= 1"),
        ({"max_calls": True}, "--max-calls must be an integer >= 1"),
        ({"max_cost": 0.0, "prices": PRICES}, "--max-cost must be a number > 0"),
        ({"max_cost": -1.0, "prices": PRICES}, "--max-cost must be a number > 0"),
        ({"max_cost": float("nan"), "prices": PRICES}, "--max-cost must be a number > 0"),
        ({"max_cost": 5.0}, "--max-cost needs --prices FILE"),
    ],
)
def test_bad_limits_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SpendingLimits(**kwargs)


def test_good_limits_are_taken_and_no_limit_is_inactive() -> None:
    assert SpendingLimits(max_calls=1).active and SpendingLimits(max_cost=0.01, prices=PRICES).active
    assert not SpendingLimits().active


@pytest.mark.parametrize(
    ("calls", "cost", "world", "expected"),
    [(5, 10.0, 2, [(3, 5.0), (2, 5.0)]), (1, None, 2, [(1, None), (0, None)]), (None, 8.0, 4, [(None, 2.0)] * 4)],
)
def test_each_rank_gets_its_share_and_the_shares_add_up(calls, cost, world, expected) -> None:
    limits = SpendingLimits(calls, cost, PRICES if cost else None)
    meters = [Meter.for_rank(limits, rank, world) for rank in range(world)]
    assert [(m.max_calls, m.max_cost) for m in meters] == expected


# a call of 10 prompt tokens that may generate 5: its bound is 10 x 1 + 5 x 2 = 20
METHOD = SimpleNamespace(role="reader", fn=CountedCall(10, 5), name="openai:m", spec="openai:m@http://h/v1")


def _usage(prompt: int, completion: int) -> dict:
    return {"answer": "x", "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "source": "server"}}


def test_cost_counts_a_call_at_its_bound_until_its_usage_is_known() -> None:
    meter = Meter.for_rank(SpendingLimits(max_cost=50, prices=PRICES))
    assert meter.admit(METHOD, "a", "q") and meter.admit(METHOD, "b", "q") and meter.cost == 40  # 2 bounds of 20
    assert not meter.admit(METHOD, "c", "q")  # 40 + 20 = 60 > 50
    meter.settle(METHOD, "a", _usage(10, 1))  # a cost 10 + 2 = 12: 40 - 20 + 12 = 32
    assert meter.cost == 32 and not meter.admit(METHOD, "c", "q")  # 32 + 20 = 52 > 50
    local = {"answer": "x", "usage": {"prompt_tokens": 10, "completion_tokens": 0, "source": "local"}}
    meter.settle(METHOD, "b", local)  # counted here, not by the server: an estimate, so b stays at its bound
    assert meter.cost == 32
    meter.settle(METHOD, "b", _usage(10, 0))  # settled already: nothing changes
    assert meter.cost == 32 and meter.calls == 2
    bad = {"answer": "x", "usage": {"prompt_tokens": -1, "completion_tokens": 0}}
    assert meter.admit(METHOD, "d", "q") is False and meter.settle(METHOD, "d", bad) is None and meter.cost == 32


def test_a_call_limit_counts_calls_and_a_local_method_costs_nothing() -> None:
    meter = Meter.for_rank(SpendingLimits(max_calls=2, max_cost=1, prices=PRICES))
    rule = SimpleNamespace(role="judge", fn=object(), name="exact", spec="exact")
    assert meter.admit(rule, "a", "q") and meter.admit(rule, "b", "q") and meter.cost == 0
    assert not meter.admit(rule, "c", "q")
    meter.hold(rule, 3)
    message = str(meter.stop())
    assert "stopped at --max-calls 2 / --max-cost 1 USD: this run made 2 calls" in message
    assert "(judge 2)" in message and "left: judge (exact): 3 calls" in message and "rerun the same command" in message


def test_a_stopped_run_exits_3_writes_no_folder_and_the_same_command_goes_on_to_the_same_results(tmp_path, capsys):
    # the run of tests/helpers/cli.py by hand: 2 memories, then 4 answers, then 4 verdicts = 10 calls
    (whole := tmp_path / "whole").mkdir()
    assert outcome(run_args(whole), capsys)[0] == 0
    expected = read_folder(whole / "out")
    assert expected.payload["calls"] == {"compressor": 2, "reader": 4, "judge": 4}
    (stopped := tmp_path / "stopped").mkdir()
    args = run_args(stopped, "--max-calls", "3")
    for left in ("reader (fields): 3 calls", "judge (exact): 4 calls", "judge (exact): 1 calls"):
        code, _, err = outcome(args, capsys)
        assert code == 3 and not (stopped / "out").exists()
        assert "stopped at --max-calls 3: this run made 3 calls" in err and f"left: {left}" in err
    assert outcome(args, capsys)[0] == 0  # the last verdict: 3 + 3 + 3 + 1 = 10 calls in all
    got = read_folder(stopped / "out")
    assert got.payload["calls"] == {"compressor": 0, "reader": 0, "judge": 1}
    mine, theirs = _comparable(got), _comparable(expected)
    for run in (mine, theirs):  # the command and the data path differ (another folder, the limit)
        del run["payload"]["command"], run["payload"]["config"]
    assert mine == theirs


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--max-calls", "0"], "--max-calls must be an integer >= 1"),
        (["--max-cost", "1"], "--max-cost needs --prices FILE"),
        (["--max-cost", "-2", "--prices", "PRICES"], "--max-cost must be a number > 0"),
        (["--max-cost", "1", "--prices", "BAD"], "prices.m.prompt: -1 is negative"),
    ],
)
def test_bad_limits_on_the_command_line_exit_2_before_any_work(tmp_path, capsys, extra, message) -> None:
    (good := tmp_path / "prices.yaml").write_text("prices:\n  m: {prompt: 1, completion: 1}\n")
    (bad := tmp_path / "bad.yaml").write_text("prices:\n  m: {prompt: -1, completion: 1}\n")
    extra = [{"PRICES": str(good), "BAD": str(bad)}.get(e, e) for e in extra]
    code, _, err = outcome(run_args(tmp_path, *extra), capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "cache").exists() and not (tmp_path / "out").exists()


def test_limit_reached_is_exit_3() -> None:
    from gacc_hf import errors

    assert errors.exit_code(LimitReached("x")) == errors.MODEL_FAILURES == 3
    assert json.dumps(errors.exit_code(ValueError("x"))) == "2"


def test_a_launch_stops_with_one_message_for_all_its_ranks() -> None:
    limits = SpendingLimits(max_calls=5)  # 5 = 3 + 2: rank 0 may make 3, rank 1 2
    rule = SimpleNamespace(role="compressor", fn=object(), name="truncate", spec="truncate")
    reader = SimpleNamespace(role="reader", fn=object(), name="fields", spec="fields")
    first, second = Meter.for_rank(limits, 0, 2), Meter.for_rank(limits, 1, 2)
    assert [first.admit(rule, key, "x") for key in "ab"] + [first.admit(reader, "c", "x")] == [True] * 3
    first.hold(reader, 4)  # rank 0 reached its share in the reader's calls
    assert [second.admit(rule, key, "x") for key in "def"] == [True, True, False]
    second.hold(rule, 1)  # rank 1 in the compressor's
    text = str(launch_meter([first, second]).stop())
    assert text.startswith(
        "stopped at --max-calls 5 (shared by 2 processes, each stopping at its share): this run made 5 calls, all "
        "stored in the cache (compressor 4, reader 1); left: reader (fields): 4 calls; compressor (truncate): 1 calls"
    )


def test_a_launch_whose_other_rank_finished_counts_its_calls_too() -> None:
    limits = SpendingLimits(max_calls=4)
    rule = SimpleNamespace(role="compressor", fn=object(), name="truncate", spec="truncate")
    done, stopped = Meter.for_rank(limits, 0, 2), Meter.for_rank(limits, 1, 2)
    assert done.admit(rule, "a", "x")  # rank 0 had one call to make, and finished
    assert [stopped.admit(rule, key, "x") for key in "bcd"] == [True, True, False]
    stopped.hold(rule, 3)
    assert "this run made 3 calls, all stored in the cache (compressor 3); left: compressor (truncate): 3 calls" in (
        str(launch_meter([done, stopped]).stop())
    )
