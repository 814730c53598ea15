"""The margin a cost limit keeps for a server that counts more than the local count, and the usage it does not
believe; every figure below is worked out by hand from the prices and token counts given."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gacc_hf.cost.limits import LimitReached, LimitTooLow, Meter, SpendingLimits, UnsoundUsage
from gacc_hf.cost.margin import Margin, credible
from gacc_hf.cost.prices import Price, Prices
from gacc_hf.cost.usage import Metered, usage
from gacc_hf.methods.judges import ExactJudge
from gacc_hf.methods.rules import FieldsReader
from gacc_hf.run.benchmark import run_benchmark
from tests.helpers.cli import ROWS
from tests.helpers.counted import CountedCall, ServedCall

PRICES = Prices({"m": Price(prompt=1_000_000, completion=2_000_000)}, "USD")  # 1 per prompt token, 2 per completion


# 10 prompt tokens a call, at most 5 generated: bound 10 + 10 = 20; served, its server reports what it bills
SERVED = SimpleNamespace(role="reader", fn=ServedCall(10, 5), name="openai:m", spec="openai:m@http://h/v1")
LOCAL = SimpleNamespace(role="reader", fn=CountedCall(10, 5), name="hf:m", spec="m")


def _server(prompt: int, completion: int) -> dict:
    return {"answer": "x", "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "source": "server"}}


def test_the_margin_is_the_credible_ceiling_until_usage_is_known_then_the_largest_ratio_seen() -> None:
    margin = Margin()
    assert margin.prompt_reserve(10) == 4 * 10 + 128
    margin.learn(10, 15)
    margin.learn(10, 20)
    margin.learn(10, 12)
    assert (margin.ratio, margin.calls, margin.prompt_reserve(100)) == (2.0, 3, 200)
    margin.learn(0, 50)  # nothing counted here: nothing learned
    assert margin.calls == 3
    # a server counting fewer tokens than cl100k still reserves the local count; the ratio a chat template
    # gives a tiny prompt (40 x) reserves a long one at the credible ceiling, not beyond
    assert Margin(0.5, 1).prompt_reserve(100) == 100 and Margin(40.0, 1).prompt_reserve(1000) == 4 * 1000 + 128


@pytest.mark.parametrize(
    ("reported", "believed"),
    [((168, 5), True), ((169, 5), False), ((0, 0), True), ((10, 6), False), ((10**12 * 10, 1), False)],
)
def test_usage_over_the_credible_ceiling_is_not_believed(reported: tuple[int, int], believed: bool) -> None:
    assert credible(reported, 10, 5) is believed  # 10 prompt tokens counted here: at most 4 x 10 + 128 = 168


def test_a_served_call_is_reserved_at_its_margin_and_counted_at_what_its_server_reports() -> None:
    meter = Meter.for_rank(SpendingLimits(max_cost=400, prices=PRICES))
    # no usage yet: prompt reserved at 4 x 10 + 128 = 168, plus 5 x 2 = 10 for the completion: 178 a call
    assert meter.admit(SERVED, "a", "q") and meter.admit(SERVED, "b", "q") and meter.cost == 356
    assert not meter.admit(SERVED, "c", "q")  # 356 + 178 = 534 > 400
    meter.settle(SERVED, "a", _server(20, 1))  # the server counts 2 x: a cost 20 + 2 = 22; 356 - 178 + 22 = 200
    assert meter.cost == 200 and meter.margins[("reader", "openai:m")].ratio == 2.0
    assert meter.admit(SERVED, "c", "q") and meter.cost == 230  # margin 2: 20 + 10 = 30
    meter.settle(SERVED, "b", _server(20, 1))  # 230 - 178 + 22 = 74
    meter.settle(SERVED, "c", _server(20, 5))  # 74 - 30 + 30 = 74
    assert meter.cost == 74 == 22 + 22 + 30 and not meter.halted


def test_a_call_counted_locally_keeps_its_bound_and_no_margin() -> None:
    meter = Meter.for_rank(SpendingLimits(max_cost=50, prices=PRICES))
    assert meter.admit(LOCAL, "a", "q") and meter.cost == 20 and meter.margins == {}
    meter.settle(LOCAL, "a", {"answer": "x", "usage": {"prompt_tokens": 10, "completion_tokens": 5, "source": "local"}})
    assert meter.cost == 20


def test_usage_that_is_not_credible_halts_the_meter_and_stops_the_run_as_bad_input() -> None:
    meter = Meter.for_rank(SpendingLimits(max_cost=1000, prices=PRICES))
    assert meter.admit(SERVED, "a", "q") and meter.admit(SERVED, "b", "q")
    meter.settle(SERVED, "a", _server(10**13, 1))
    assert meter.halted and meter.cost == 356  # not believed: a stays at its reserve, 178
    meter.settle(SERVED, "b", _server(12, 1))  # a credible call still counts: 356 - 178 + 14 = 192
    assert meter.cost == 192 and not meter.admit(SERVED, "c", "q")
    stop = meter.stop()
    assert isinstance(stop, UnsoundUsage) and isinstance(stop, ValueError)
    message = str(stop)
    assert "reported 10,000,000,000,000 prompt and 1 completion tokens" in message
    assert "counted here at 10 prompt tokens" in message and "at most 168 and 5" in message
    assert "cost at most 192 USD" in message and "rerun" not in message


def test_a_limit_below_one_calls_reserve_is_refused_naming_the_bound() -> None:
    meter = Meter.for_rank(SpendingLimits(max_cost=100, prices=PRICES))
    assert not meter.admit(SERVED, "a", "q") and meter.calls == 0
    stop = meter.stop()
    assert isinstance(stop, LimitTooLow) and isinstance(stop, ValueError)
    assert "its bound is 20 USD (10 prompt tokens counted here, 5 it may generate), reserved at 178 USD" in str(stop)
    assert "raise --max-cost to at least 178 USD" in str(stop)
    local = Meter.for_rank(SpendingLimits(max_cost=19, prices=PRICES))
    assert not local.admit(LOCAL, "a", "q") and "raise --max-cost to at least 20 USD" in str(local.stop())
    assert Meter.for_rank(SpendingLimits(max_cost=20, prices=PRICES)).admit(LOCAL, "a", "q")  # exactly its bound


def test_a_reserve_over_the_limit_that_a_learned_margin_lets_in_is_no_longer_too_low() -> None:
    meter = Meter.for_rank(SpendingLimits(max_cost=200, prices=PRICES))
    assert meter.admit(SERVED, "a", "q")  # 178
    assert not meter.admit(SERVED, "b", "q") and meter.too_big is None  # 356 > 200, but 178 alone fits
    meter.settle(SERVED, "a", _server(10, 1))  # ratio 1: 10 + 2 = 12
    assert meter.admit(SERVED, "b", "q") and meter.cost == 12 + 20
    meter.hold(SERVED, 1)
    assert isinstance(meter.stop(), LimitReached) and "'openai:m' 1x (learned from 1 calls)" in str(meter.stop())


def test_a_rank_is_refused_against_its_share() -> None:
    meter = Meter.for_rank(SpendingLimits(max_cost=300, prices=PRICES), rank=1, world_size=2)  # share 150 < 178
    assert not meter.admit(SERVED, "a", "q")
    message = str(meter.stop())
    assert "(rank 1 of 2, whose share is 150 USD)" in message
    assert "at least 178 USD times the number of processes" in message


class _Billing:
    """A rule method whose calls come back with a server's usage: 10 prompt tokens counted here, at most 5
    generated, `reported` prompt tokens a call; called in chunks, not in a window."""

    def __init__(self, reported: int) -> None:
        self.reported, self.made = reported, 0

    def prompt_tokens(self, item: object) -> int:
        return 10

    def max_tokens(self, item: object) -> int:
        return 5

    def __call__(self, item: object) -> Metered:
        self.made += 1
        return Metered(super().__call__(item), usage(self.reported, 1, "server"))  # type: ignore[misc]


class _BilledReader(_Billing, FieldsReader):
    name, revision = "billed-reader", "billed-reader-v1"


class _BilledJudge(_Billing, ExactJudge):
    name, revision = "billed-judge", "billed-judge-v1"


PRICED = Prices({"billed-reader": Price(1_000_000, 2_000_000), "billed-judge": Price(1_000_000, 2_000_000)})


def _billed_run(tmp_path, reader: object, judge: object, batch_size: int) -> object:
    return run_benchmark(
        ROWS, compressor="truncate", reader=reader, judge=judge, ratios=[0.5], conditions=["own"],
        cache_dir=str(tmp_path), progress=False, n_bootstrap=0, batch_size=batch_size,
        limits=SpendingLimits(max_cost=1000, prices=PRICED),
    )  # fmt: skip


def test_a_chunked_run_with_credible_usage_makes_every_call(tmp_path) -> None:
    reader, judge = _BilledReader(10), _BilledJudge(10)
    assert _billed_run(tmp_path, reader, judge, 2).calls == {"compressor": 2, "reader": 4, "judge": 4}
    assert reader.made == judge.made == 4


def test_a_chunked_run_stops_at_the_chunk_whose_usage_is_not_credible(tmp_path) -> None:
    reader = _BilledReader(10**13)
    with pytest.raises(UnsoundUsage, match="reader 'billed-reader' reported 10,000,000,000,000 prompt") as err:
        _billed_run(tmp_path / "reader", reader, _BilledJudge(10), 2)
    # the first chunk of 2 calls, at their bound (10 + 5 x 2 = 20: no server margin for a method called directly)
    assert reader.made == 2 and "this run made 4 calls (cost at most 40)" in str(err.value)
    # the last stage's only chunk: the run stops there rather than finishing on usage it does not believe
    judge = _BilledJudge(10**13)
    with pytest.raises(UnsoundUsage, match="judge 'billed-judge' reported 10,000,000,000,000 prompt"):
        _billed_run(tmp_path / "judge", _BilledReader(10), judge, 8)
    assert judge.made == 4
