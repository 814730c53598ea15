"""`dry_run`: the calls a run needs, found without a call, equal the calls the run then makes, cold and warm."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gacc_hf.cost.prices import parse_prices
from gacc_hf.data.synthetic import synthetic_rows
from gacc_hf.run.benchmark import run_benchmark
from gacc_hf.run.dry_run import RunPlan, dry_run
from tests.helpers.usage_server import usage_server

SETTINGS = {"seed": 0, "n_bootstrap": 0, "batch_size": 8, "on_error": "raise"}
# one goal per context: no two memories of a cell alike, so no two answers share a verdict
ROWS = synthetic_rows(seed=5, contexts=3, goals_per_context=1, questions_per_goal=3)


def _both(cache: Path, **methods: Any) -> tuple[RunPlan, dict[str, int]]:
    """The dry run's plan, then the calls the real run makes, on the same cache."""
    kwargs = {"ratios": [0.3], "cache_dir": str(cache), **methods}
    plan = dry_run(ROWS, settings=SETTINGS, **kwargs)
    result = run_benchmark(ROWS, progress=False, n_bootstrap=0, **kwargs)
    return plan, result.calls


def _to_call(plan: RunPlan) -> dict[str, int]:
    out: dict[str, int] = {}
    for need in plan.needs:
        out[need.role] = out.get(need.role, 0) + need.to_call
    return out


def test_rules_cold_then_warm(tmp_path: Path) -> None:
    methods = {"compressor": "truncate", "reader": "fields", "judge": "exact", "conditions": ["own"]}
    cold, made = _both(tmp_path / "cache", **methods)
    # 3 contexts, one memory each; 3 questions per memory; one verdict per answer
    assert _to_call(cold) == made == {"compressor": 3, "reader": 9, "judge": 9}
    warm, made = _both(tmp_path / "cache", **methods)
    assert _to_call(warm) == made == {"compressor": 0, "reader": 0, "judge": 0}
    assert all(not n.bound for n in warm.needs) and [n.cached for n in warm.needs] == [3, 9, 9]


def test_two_compressors_whose_memories_answer_alike_share_verdicts(tmp_path: Path) -> None:
    methods = {"compressor": ["truncate", "goal-lines"], "reader": "fields", "judge": "exact", "conditions": ["own"]}
    cold, made = _both(tmp_path / "cache", **methods)
    # the same question answered alike from two memories is judged once: the cold judge count is a bound
    assert _to_call(cold)["judge"] == 18 >= made["judge"] and _to_call(cold)["reader"] == made["reader"] == 18
    warm, made = _both(tmp_path / "cache", **methods)
    assert _to_call(warm) == made == {"compressor": 0, "reader": 0, "judge": 0}


def test_identical_answers_make_the_cold_judge_count_a_bound(tmp_path: Path) -> None:
    methods = {"compressor": "truncate", "reader": "fields", "judge": "exact", "conditions": ["own", "full"]}
    cold, made = _both(tmp_path / "cache", **methods)
    judge = next(n for n in cold.needs if n.role == "judge")
    assert judge.bound and judge.to_call == 18 >= made["judge"]  # own and full may answer alike: one verdict
    assert any("upper bounds" in note for note in cold.notes)
    warm, _ = _both(tmp_path / "cache", **methods)
    assert _to_call(warm)["judge"] == 0 and not any(n.bound for n in warm.needs)


def test_a_run_of_bounds_only_lists_no_compressor(tmp_path: Path) -> None:
    methods = {"compressor": "truncate", "reader": "fields", "judge": "exact"}
    bounds, made = _both(tmp_path / "cache", conditions=["full", "oracle"], **methods)
    assert made["compressor"] == 0 and [n.role for n in bounds.needs] == ["reader", "judge"]
    assert "no compressor runs: every condition is a bound (full, oracle)" in bounds.notes
    own = dry_run(ROWS, settings=SETTINGS, ratios=[0.3], cache_dir=None, conditions=["own", "full"], **methods)
    assert [n.role for n in own.needs] == ["compressor", "reader", "judge"]
    assert not any("no compressor" in note for note in own.notes)


class WordReader:
    """A reader of its own that counts its prompts by words and states its CPU rate, as `smollm2` does."""

    token_counter = "words"

    def __init__(self, rate: float | None) -> None:
        self.rate = rate
        self.revision = f"words@{rate}"

    def cpu_seconds_per_prompt_token(self, item: Any) -> float | None:
        return self.rate

    def __call__(self, item: Any) -> str:
        return "unknown"

    def prompt_tokens(self, item: Any) -> int:
        return len(f"{item.memory} {item.question}".split())

    def count_tokens(self, text: str) -> int:
        return len(text.split())


@pytest.mark.parametrize(("rate", "said"), [(1.0, True), (1e-6, False), (None, False)])
def test_a_long_reading_on_the_cpu_is_estimated_in_one_note(tmp_path: Path, rate: float | None, said: bool) -> None:
    methods = {"compressor": "truncate", "judge": "exact", "conditions": ["full"]}
    plan = dry_run(ROWS, settings=SETTINGS, ratios=[0.3], cache_dir=None, reader=WordReader(rate), **methods)
    (reader,) = [n for n in plan.needs if n.role == "reader"]
    # 3 contexts × 3 questions, each read from its whole source: the words of source and question, by hand
    words = sum(len(f"{r['context']} {q['question']}".split()) for r in ROWS for q in r["questions"])
    assert reader.prompt_tokens == words and reader.to_call == 9
    notes = [n for n in plan.notes if "on the CPU" in n]
    assert reader.cpu_seconds == (None if rate is None else pytest.approx(words * rate)) and len(notes) == said
    if said:
        assert notes[0].startswith(f"reader '{reader.name}' runs on the CPU: about {round(words / 60)} min for ")


def test_a_served_run_cold_then_warm_and_the_dry_run_sends_no_request(tmp_path: Path) -> None:
    prices = parse_prices({"currency": "USD", "prices": {"echo": {"prompt": 1e6, "completion": 2e6}}})
    with usage_server("absent") as server:
        spec = f"openai:echo@{server.url}?concurrency=2&max_tokens=8"
        methods = {"compressor": spec, "reader": spec, "judge": spec, "conditions": ["own", "full"]}
        kwargs = {"ratios": [0.3], "cache_dir": str(tmp_path / "cache"), **methods}
        plan = dry_run(ROWS, settings=SETTINGS, prices=prices, **kwargs)
        assert server.chats == 0  # the dry run asked /models for the identity, nothing else
        result = run_benchmark(ROWS, progress=False, n_bootstrap=0, **kwargs)
        made = {role: server.reported(role)[0] for role in ("compressor", "reader", "judge")}
        warm = dry_run(ROWS, settings=SETTINGS, prices=prices, **kwargs)
    assert _to_call(plan) == made == {"compressor": 3, "reader": 18, "judge": 18}
    compressor = next(n for n in plan.needs if n.role == "compressor")
    # compressor prompts are known before any call: counted as the run counted them (cl100k, no server usage)
    assert compressor.prompt_tokens == result.usage["roles"]["compressor"]["openai:echo"]["prompt_tokens"]
    assert compressor.completion_bound == 3 * 8 and compressor.counter == "cl100k_base"  # max_tokens × calls
    assert compressor.cost_bound == compressor.prompt_tokens + 2 * 24  # 1 a prompt token, 2 a completion token
    assert _to_call(warm) == {"compressor": 0, "reader": 0, "judge": 0} and warm.cost_bound == 0


def test_fits_answers_the_limits() -> None:
    plan = RunPlan([], "USD", priced=True)
    assert plan.fits() and plan.fits(max_calls=0, max_cost=0.0)
    unpriced = RunPlan([])
    with pytest.raises(ValueError, match="needs --prices"):
        unpriced.fits(max_cost=1.0)


def test_a_dry_run_with_a_served_method_missing_from_the_prices_is_refused(tmp_path: Path) -> None:
    prices = parse_prices({"prices": {"truncate": {"prompt": 0, "completion": 0}}})
    with usage_server() as server, pytest.raises(ValueError, match="no price for the reader 'openai:echo'"):
        dry_run(
            ROWS,
            settings=SETTINGS,
            prices=prices,
            compressor="truncate",
            reader=f"openai:echo@{server.url}",
            judge="exact",
            ratios=[0.3],
            conditions=["own"],
            cache_dir=None,
        )
