"""`--max-cost` against a stand-in server (`tests/helpers/usage_server.py`) that counts more than the local
cl100k count: the money its own reports say was spent never passes the limit, a report that is not credible
stops the run at once, and a limit below one call is refused before any request.

The run: 2 memories (rules), then 4 reader and 4 judge calls to the server, at 1 a prompt token and 2 a
completion token (the server reports 1 completion token a call, and a call may generate 8)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from gacc_hf import errors
from tests.helpers.cli import outcome, run_args
from tests.helpers.usage_server import UsageServer, usage_server


def _args(tmp_path: Path, server: UsageServer, max_cost: str, roles: tuple[str, ...] = ("reader", "judge")) -> list:
    prices = tmp_path / "prices.yaml"
    prices.write_text("currency: USD\nprices:\n  echo: {prompt: 1000000, completion: 2000000}\n")
    served = [arg for role in roles for arg in (f"--{role}", f"openai:echo@{server.url}?max_tokens=8")]
    return run_args(tmp_path, *served, "--prices", str(prices), "--max-cost", max_cost)


def _spent(log: list) -> int:
    """What the server's own reports bill: 1 a prompt token, 2 a completion token."""
    return sum(u["prompt_tokens"] + 2 * u["completion_tokens"] for _, u in log)


def _cost_at_most(err: str) -> float:
    return float(re.search(r"cost at most ([\d.e+]+) USD", err)[1])


def test_a_server_counting_twice_the_tokens_never_passes_the_limit_and_the_margin_is_stated(tmp_path, capsys):
    with usage_server(multiplier=2) as server:
        args, spent, codes = _args(tmp_path, server, "2000"), [], []
        while not codes or codes[-1] == errors.MODEL_FAILURES:
            before = len(server.log)
            code, _, err = outcome(args, capsys)
            codes.append(code)
            spent.append(_spent(server.log[before:]))
            if code == errors.MODEL_FAILURES:
                assert _cost_at_most(err) == spent[-1]  # every call settled at what the server said
                assert "reader 'openai:echo' 2x (learned from 4 calls)" in err
            assert len(codes) < 5
        log = list(server.log)
    assert codes == [3, 0] and all(s <= 2000 for s in spent) and len(log) == 8  # nothing asked twice
    # every prompt the server billed is twice what was counted here, and the results cost what it billed
    assert all(u["prompt_tokens"] % 2 == 0 and u["completion_tokens"] == 1 for _, u in log)
    cost = json.loads((tmp_path / "out" / "results.json").read_text())["cost"]
    assert cost["total"] == sum(spent) and cost["sent"] == spent[-1]


def test_a_server_reporting_a_trillion_times_the_tokens_stops_the_run_as_unsound(tmp_path, capsys):
    with usage_server(multiplier=10**12) as server:
        code, _, err = outcome(_args(tmp_path, server, "5000"), capsys)
        log = list(server.log)
    assert code == errors.BAD_INPUT and len(err.strip().splitlines()) == 1 and not (tmp_path / "out").exists()
    assert "usage is not credible, so the money spent cannot be kept within --max-cost 5000 USD" in err
    assert all(role == "reader" for role, _ in log) and 1 <= len(log) <= 4  # the first window, no judge
    # the calls sent are counted at their reserve, 4 x the prompt counted here + 128, plus 8 x 2: within the limit
    local = [u["prompt_tokens"] // 10**12 for _, u in log]
    assert _cost_at_most(err) == sum(4 * p + 128 + 16 for p in local) <= 5000


def test_unsound_usage_in_the_last_calls_of_a_run_stops_it_rather_than_recording_it(tmp_path, capsys):
    with usage_server(multiplier=10**12) as server:  # the judge alone is served: its calls are the run's last
        code, _, err = outcome(_args(tmp_path, server, "5000", ("judge",)), capsys)
        assert [role for role, _ in server.log] == ["judge"] * 4
    assert code == errors.BAD_INPUT and "the server of the judge 'openai:echo' reported" in err
    assert not (tmp_path / "out").exists()


def test_a_limit_below_one_calls_reserve_is_refused_before_any_request_and_again_on_a_rerun(tmp_path, capsys):
    with usage_server(multiplier=1) as server:
        for _ in range(2):
            code, _, err = outcome(_args(tmp_path, server, "100"), capsys)
            assert code == errors.BAD_INPUT and server.chats == 0 and len(err.strip().splitlines()) == 1
            assert "--max-cost 100 USD is below what one reader call of 'openai:echo' needs: its bound is" in err
            assert "rerun" not in err
            found = re.search(r"its bound is (\d+) USD \((\d+) prompt tokens counted here, 8 it may generate\), "
                              r"reserved at (\d+) USD .* raise --max-cost to at least (\d+) USD", err)  # fmt: skip
            bound, prompt, reserve, least = map(int, found.groups())
            assert bound == prompt + 8 * 2 and reserve == least == 4 * prompt + 128 + 8 * 2 > 100
