"""`gacc run --dry-run`: a table or one JSON document, exit 0, nothing written; no model weights loaded;
bad prices refused as a real run refuses them; the answer to spending limits when they are given."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from gacc_hf import errors
from gacc_hf.cli.dry_run import limits_answer, limits_text, plan_text, print_plan
from gacc_hf.cost.prices import Price
from gacc_hf.run.dry_run import Need, RunPlan
from tests.helpers.cli import outcome, run_args
from tests.helpers.counted import CountedCall, ServedCall
from tests.helpers.usage_server import usage_server


def test_the_json_plan_is_one_document_and_nothing_is_written(tmp_path: Path, capsys) -> None:
    code, out, _ = outcome(run_args(tmp_path, "--dry-run", "--format", "json"), capsys)
    assert code == errors.OK
    plan = json.loads(out)
    # 2 contexts, one goal each, at one ratio under `own`: 2 memories; 2 questions per goal
    assert [(n["role"], n["calls"], n["to_call"]) for n in plan["needs"]] == [
        ("compressor", 2, 2),
        ("reader", 4, 4),
        ("judge", 4, 4),
    ]
    assert plan["limits"] is None and plan["cost_bound"] is None
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


def test_the_text_plan_after_a_run_is_exact_and_all_cached(tmp_path: Path, capsys) -> None:
    assert outcome(run_args(tmp_path), capsys)[0] == errors.OK
    code, out, _ = outcome(run_args(tmp_path, "--dry-run", "--overwrite"), capsys)  # the folder holds the run
    assert code == errors.OK and "bound" not in out and out.rstrip().endswith("calls to make: 0")
    assert "reader      fields    4      4       0" in out


def _served_dry_run(tmp_path: Path, capsys, prices_yaml: str, options: str = "", *extra: str) -> tuple:
    """A dry run with a served reader (`openai:echo` on a usage server) and these prices; it sends nothing."""
    prices = tmp_path / "prices.yaml"
    prices.write_text(prices_yaml, encoding="utf-8")
    with usage_server() as server:
        reader = f"openai:echo@{server.url}{options}"
        result = outcome(run_args(tmp_path, "--reader", reader, "--prices", str(prices), "--dry-run", *extra), capsys)
        assert server.chats == 0
    return result


def test_a_dry_run_with_a_served_method_missing_from_the_prices_is_refused(tmp_path: Path, capsys) -> None:
    code, out, err = _served_dry_run(tmp_path, capsys, "prices:\n  truncate: {prompt: 0, completion: 0}\n")
    assert code == errors.BAD_INPUT and out == "" and len(err.strip().splitlines()) == 1
    assert "no price for the reader 'openai:echo'" in err


def test_a_priced_dry_run_shows_the_cost_bound(tmp_path: Path, capsys) -> None:
    prices = "currency: USD\nprices:\n  echo: {prompt: 1000000, completion: 2000000}\n"
    code, out, _ = _served_dry_run(tmp_path, capsys, prices, "?max_tokens=5", "--format", "json")
    need = next(n for n in json.loads(out)["needs"] if n["role"] == "reader")
    assert code == errors.OK and need["completion_bound"] == 4 * 5  # 4 questions, at most 5 tokens each
    assert need["cost_bound"] == need["prompt_tokens"] + 2 * 20 and not need["exact"]


def test_the_limits_answer_fires_and_stays_quiet() -> None:
    plan = RunPlan([Need("reader", "m", "cl100k_base", calls=10, cached=4)])
    assert limits_answer(plan, argparse.Namespace()) is None  # no limits given: nothing to say
    assert limits_answer(plan, argparse.Namespace(max_calls=6, max_cost=None))["fits"] is True
    assert limits_answer(plan, argparse.Namespace(max_calls=5, max_cost=None))["fits"] is False
    assert "m       10     4       6" in plan_text(plan)


def test_a_local_models_dry_run_loads_its_tokenizer_and_no_weights(tmp_path: Path, tiny, capsys, monkeypatch) -> None:
    import transformers

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a dry run loaded model weights")

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", refuse)
    code, out, err = outcome(run_args(tmp_path, "--reader", f"hf:{tiny}", "--dry-run", "--format", "json"), capsys)
    assert code == errors.OK, err
    reader = next(n for n in json.loads(out)["needs"] if n["role"] == "reader")
    assert reader["counted_by"] == f"hf:{tiny} tokenizer" and reader["prompt_tokens"] > 0


@pytest.mark.parametrize("entry", ["{prompt: -1, completion: 2}", "{prompt: '1', completion: 2}"])
def test_a_bad_prices_file_is_refused_by_a_dry_run_too(tmp_path: Path, capsys, entry: str) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(f"prices:\n  truncate: {entry}\n", encoding="utf-8")
    code, _, err = outcome(run_args(tmp_path, "--prices", str(prices), "--dry-run"), capsys)
    assert code == errors.BAD_INPUT and len(err.strip().splitlines()) == 1 and str(prices) in err


def _plan(fn: object) -> RunPlan:
    need = Need("reader", "m", "cl100k_base", price=Price(1_000_000, 2_000_000), served=hasattr(fn, "metered"))
    for _ in range(4):
        need.add(fn, "q", False)
    return RunPlan([need], "USD", priced=True)


def test_the_cost_limits_answer_gives_the_largest_reserve_and_the_ratio_servers_may_bill() -> None:
    # 4 calls of 25 prompt tokens at 1 and 5 completion tokens at 2: cost bound 100 + 40 = 140; one served call
    # is reserved at 4 x 25 + 128 = 228 prompt tokens + 10 = 238 until its server reports usage
    plan = _plan(ServedCall(25, 5))
    answer = limits_answer(plan, argparse.Namespace(max_calls=None, max_cost=300))
    assert answer == {"max_calls": None, "max_cost": 300, "fits": True, "first_reserve": 238, "server_ratio": 2.6}
    assert "fits within --max-cost 300 while its servers bill at most 2.6 x the prompt tokens" in limits_text(
        plan, answer
    )  # (300 - 40) / 100 = 2.6
    low = limits_answer(plan, argparse.Namespace(max_calls=None, max_cost=200))
    assert low["fits"] is False and "one call is reserved at 238 USD" in limits_text(plan, low)
    # a method counting its own prompts: one call's reserve is its bound, 25 + 10 = 35, and no ratio
    local = limits_answer(_plan(CountedCall(25, 5)), argparse.Namespace(max_calls=None, max_cost=140))
    assert local == {"max_calls": None, "max_cost": 140, "fits": True, "first_reserve": 35, "server_ratio": None}
    assert limits_answer(_plan(CountedCall(25, 5)), argparse.Namespace(max_calls=None, max_cost=139))["fits"] is False


def test_the_json_plan_is_strict_json(capsys) -> None:
    plan = _plan(CountedCall(25, 5))
    plan.needs[0].first_reserve = float("inf")  # no prices file can give this: a price is at most 1e9 per million
    with pytest.raises(ValueError, match=r"^the dry run's plan: needs\[0\]\.first_reserve is inf, not a finite"):
        print_plan(plan, argparse.Namespace(format="json", max_calls=None, max_cost=None))
    assert capsys.readouterr().out == ""


def test_a_price_past_the_bound_is_refused_by_a_json_dry_run_not_written_as_infinity(tmp_path: Path, capsys) -> None:
    prices = "currency: USD\nprices:\n  echo: {prompt: 1.7e+308, completion: 1}\n"
    code, out, err = _served_dry_run(tmp_path, capsys, prices, "", "--format", "json")
    assert code == errors.BAD_INPUT and out == "" and "Infinity" not in err
    assert "prices.echo.prompt: 1.7e+308 is over 1e+09, the most a million tokens may cost" in err


def _file(tmp_path: Path, name: str) -> str:
    (tmp_path / name).write_text("not a folder\n", encoding="utf-8")
    return str(tmp_path / name)


def _held_run(tmp_path: Path) -> str:
    (tmp_path / "held").mkdir()
    (tmp_path / "held" / "results.json").write_text("{}\n", encoding="utf-8")  # what marks a results folder
    return str(tmp_path / "held")


REFUSED = {  # what the run refuses before its first call, and what its one-line message says
    "cache folder is a file": (lambda t: ["--cache-dir", _file(t, "c")], "(--cache-dir) {t}/c is a file"),
    "output folder holds a run": (lambda t: ["--output-dir", _held_run(t)], "{t}/held: holds another run"),
    "output folder is a file": (lambda t: ["--output-dir", _file(t, "o")], "{t}/o: exists and is not a results"),
    "empty output folder": (lambda t: ["--output-dir", ""], "--output-dir is empty"),
    "bootstrap over its cap": (lambda t: ["--bootstrap", "1000001"], "--bootstrap 1000001 is over the cap"),
}


@pytest.mark.parametrize("case", REFUSED)
def test_the_dry_run_refuses_what_the_run_refuses_with_the_same_line(tmp_path: Path, capsys, case: str) -> None:
    options, says = REFUSED[case]
    extra = options(tmp_path)
    lines = []
    for dry in (["--dry-run"], []):
        code, out, err = outcome(run_args(tmp_path, *extra, *dry), capsys)
        assert code == errors.BAD_INPUT and out == "" and len(err.strip().splitlines()) == 1, err
        assert says.format(t=tmp_path) in err
        lines.append(err)
    assert lines[0] == lines[1]
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()  # no call, nothing written


def test_a_dry_run_of_a_folder_holding_a_run_passes_with_overwrite(tmp_path: Path, capsys) -> None:
    code, out, err = outcome(
        run_args(tmp_path, "--output-dir", _held_run(tmp_path), "--overwrite", "--dry-run"), capsys
    )
    assert code == errors.OK and out.rstrip().endswith("calls to make: 10"), err  # 2 memories, 4 answers, 4 verdicts


def test_format_without_dry_run_is_refused_before_any_work(tmp_path: Path, capsys) -> None:
    code, out, err = outcome(run_args(tmp_path, "--format", "json"), capsys)
    assert code == errors.BAD_INPUT and out == "" and len(err.strip().splitlines()) == 1
    assert "--format json sets what --dry-run prints: give --dry-run with it" in err
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()
    code, out, _ = outcome(run_args(tmp_path, "--format", "text", "--dry-run"), capsys)  # quiet: with --dry-run
    assert code == errors.OK and out.startswith("dry run: no model loaded")
