"""A run's usage and cost end to end, against a served peer whose own log is the independent count."""

from __future__ import annotations

from pathlib import Path

from gacc_hf.cost.prices import parse_prices
from gacc_hf.data.synthetic import synthetic_rows
from gacc_hf.run.benchmark import run_benchmark
from tests.helpers.usage_server import usage_server

ROWS = synthetic_rows(seed=3, contexts=2, goals_per_context=2, questions_per_goal=2)
PRICES = parse_prices({"currency": "USD", "prices": {"echo": {"prompt": 1e6, "completion": 2e6}}})  # 1 and 2 a token


def _run(url: str, cache: Path, **kwargs: object):
    spec = f"openai:echo@{url}?concurrency=3"
    return run_benchmark(
        ROWS,
        compressor=[spec, "truncate"],
        reader=spec,
        judge=spec,
        ratios=[0.3],
        conditions=["own", "none", "full"],
        cache_dir=str(cache),
        progress=False,
        n_bootstrap=0,
        **kwargs,
    )


def test_usage_equals_what_the_server_reported_cold_and_warm(tmp_path: Path) -> None:
    with usage_server("sound") as server:
        cold = _run(server.url, tmp_path / "cache", prices=PRICES)
        log = list(server.log)
        warm = _run(server.url, tmp_path / "cache", prices=PRICES)
        assert server.chats == len(log)  # the warm rerun sent nothing
    for role in ("compressor", "reader", "judge"):
        calls, prompt, completion = server.reported(role)
        entry = cold.usage["roles"][role]["openai:echo"]
        assert (entry["calls"], entry["prompt_tokens"], entry["completion_tokens"]) == (calls, prompt, completion)
        assert entry["source"] == "server" and cold.usage["sent"][role]["openai:echo"] == entry
        assert warm.usage["roles"][role]["openai:echo"] == entry  # the warm run's results cost the same
        assert warm.usage["sent"][role] == {}
        assert cold.calls[role] >= calls
    assert cold.usage["roles"]["compressor"]["truncate"]["source"] == "none"
    # the cost: 1 a prompt token, 2 a completion token, over every request the server logged
    expected = sum(u["prompt_tokens"] + 2 * u["completion_tokens"] for _, u in log)
    assert cold.cost()["total"] == warm.cost()["total"] == expected and warm.cost()["sent"] == 0
    assert sum(c["total"] for c in cold.cost()["cells"]) == expected  # the cells share it all out
    document = cold.results_document()
    assert document["usage"] == cold.usage and document["cost"]["total"] == expected
    assert document["prices"]["methods"]["judge"] == {"openai:echo": {"prompt": 1e6, "completion": 2e6}}


def test_a_server_without_usage_is_counted_locally_and_said_so(tmp_path: Path) -> None:
    with usage_server("absent") as server:
        result = _run(server.url, tmp_path / "cache")
    for role in ("compressor", "reader", "judge"):
        assert result.usage["roles"][role]["openai:echo"]["source"] == "local"
        assert result.usage["counters"][role]["openai:echo"] == "cl100k_base"
    assert result.cost() is None and result.results_document()["cost"] is None


class _CountingReader:
    """A reader of the user's own that counts its prompt as the question's characters and outputs in words."""

    revision = "counting-reader-v1"
    token_counter = "words"

    def __call__(self, item: object) -> str:
        return "two words"

    def prompt_tokens(self, item: object) -> int:
        return len(item.question)  # type: ignore[attr-defined]

    @staticmethod
    def count_tokens(text: str) -> int:
        return len(text.split())


def test_a_users_own_model_method_is_counted_with_its_own_counter(tmp_path: Path) -> None:
    result = run_benchmark(
        ROWS, compressor="truncate", reader=_CountingReader(), judge="exact", ratios=[0.3], conditions=["own"],
        cache_dir=str(tmp_path / "cache"), progress=False, n_bootstrap=0,
    )  # fmt: skip
    questions = [q["question"] for row in ROWS for q in row["questions"]]
    entry = result.usage["roles"]["reader"]["_CountingReader"]
    # one call per question (each read once), its characters as prompt, "two words" as output
    assert entry == {
        "calls": len(questions),
        "prompt_tokens": sum(len(q) for q in questions),
        "completion_tokens": 2 * len(questions),
        "source": "local",
    }
    assert result.usage["counters"]["reader"] == {"_CountingReader": "words"}
