"""`gacc run --prices`: a bad prices file or a missing price is one line and exit 2 before any work; a priced
run shows its usage and cost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gacc_hf import errors
from tests.helpers.cli import outcome, run_args
from tests.helpers.usage_server import usage_server


def _prices(tmp_path: Path, text: str) -> str:
    path = tmp_path / "prices.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{prompt: -1, completion: 2}", "truncate.prompt: -1 is negative"),
        ("{prompt: cheap, completion: 2}", "'cheap' is not a number"),
    ],
)
def test_a_bad_price_is_one_line_and_exit_2(tmp_path: Path, capsys, entry: str, message: str) -> None:
    prices = _prices(tmp_path, f"prices:\n  truncate: {entry}\n")
    code, _, err = outcome(run_args(tmp_path, "--prices", prices), capsys)
    assert code == errors.BAD_INPUT and message in err and prices in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_a_served_method_missing_from_the_prices_is_refused_before_any_request(tmp_path: Path, capsys) -> None:
    prices = _prices(tmp_path, "prices:\n  truncate: {prompt: 0, completion: 0}\n")
    with usage_server() as server:
        code, _, err = outcome(run_args(tmp_path, "--reader", f"openai:echo@{server.url}", "--prices", prices), capsys)
        assert server.chats == 0
    assert code == errors.BAD_INPUT and len(err.strip().splitlines()) == 1
    assert "no price for the reader 'openai:echo'" in err and "'echo'" in err


def test_a_priced_run_prints_and_records_its_cost(tmp_path: Path, capsys) -> None:
    prices = _prices(tmp_path, "currency: EUR\nprices:\n  echo: {prompt: 1000000, completion: 2000000}\n")
    with usage_server() as server:
        code, out, _ = outcome(run_args(tmp_path, "--reader", f"openai:echo@{server.url}", "--prices", prices), capsys)
        calls, prompt, completion = server.reported("reader")
    assert code == errors.OK
    cost = prompt + 2 * completion  # 1 EUR a prompt token, 2 a completion token
    assert f"reader {prompt}+{completion}" in out and f"cost {cost:g} EUR" in out
    document = json.loads((tmp_path / "out" / "results.json").read_text())
    assert document["schema_version"] == 5 and document["cost"]["total"] == cost
    assert document["usage"]["roles"]["reader"]["openai:echo"]["calls"] == calls
    report = (tmp_path / "out" / "report.md").read_text()
    assert "## Usage and cost" in report and "break-even" in report and f"{cost:g} EUR" in report
