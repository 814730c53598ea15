"""A stored run's usage and cost re-derived before publishing: a hand-edited figure is refused, naming the field;
a sound run (one process or two, cold or warm) passes."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from gacc_hf.cli import main
from gacc_hf.cost.audit import usage_problems
from gacc_hf.hub.commit import PublishError
from gacc_hf.hub.model_card import publish_plan
from gacc_hf.results.folder import read_folder
from tests.helpers.cli import run_args
from tests.helpers.usage_server import usage_server

PRICES = "currency: EUR\nprices:\n  echo: {prompt: 0.001, completion: 0.002}\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A run whose compressor, reader and judge all report usage (served), priced, with the ceilings."""
    tmp = tmp_path_factory.mktemp("served")
    (tmp / "p.yaml").write_text(PRICES, encoding="utf-8")
    with usage_server() as server:
        url = f"openai:echo@{server.url}"
        extra = ["--compressors", f"truncate,{url}", "--reader", url, "--judge", url, "--data", "synthetic:contexts=3"]
        extra += ["--conditions", "own,none,cross,full,closed", "--ratios", "0.25,0.5", "--prices", str(tmp / "p.yaml")]
        assert main(run_args(tmp, *extra)) == 0
        reported = {role: server.reported(role) for role in ("compressor", "reader", "judge")}
    return tmp / "out", reported


def _edited(folder: Path, tmp_path: Path, edit) -> Path:
    out = shutil.copytree(folder, tmp_path / "run")
    doc = json.loads((out / "results.json").read_text())
    edit(doc)
    (out / "results.json").write_text(json.dumps(doc))
    return out


def test_a_sound_served_run_passes_and_its_figures_are_the_servers(served):
    folder, reported = served
    run = read_folder(folder)
    assert usage_problems(run.payload, run.answers) == []
    roles = run.payload["usage"]["roles"]
    for role, (_, prompt, completion) in reported.items():  # the server's own count of what it reported
        name = "openai:echo"
        assert (roles[role][name]["prompt_tokens"], roles[role][name]["completion_tokens"]) == (prompt, completion)
    assert publish_plan(folder, "me/echo", compressor="openai:echo")  # quiet: nothing refused


def test_a_hand_edited_usage_figure_is_refused_naming_it(served, tmp_path, capsys):
    folder, _ = served

    def edit(doc):
        doc["usage"]["roles"]["reader"]["openai:echo"]["prompt_tokens"] += 1000

    edited = _edited(folder, tmp_path, edit)
    argv = ["publish", str(edited), "--repo-id", "me/echo", "--compressor", "openai:echo", "--dry-run"]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and "usage.roles.reader.openai:echo.prompt_tokens is " in err and "its cells add up to" in err
    assert str(edited / "results.json") in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["cost"].update(total=d["cost"]["total"] / 10), "cost does not follow from usage and prices"),
        (lambda d: d["cost"]["cells"][0].update(per_question=0.0), "cost does not follow from usage and prices"),
        (lambda d: d.update(prices=None), "cost is recorded without the prices it was computed from"),
        (lambda d: d["usage"]["cells"][-1].update(questions=1), "usage.cells[openai:echo/cross/0.5].questions is 1, "),
        (lambda d: d["usage"]["cells"][-1].update(answered=99), ".answered is 99, the rows give 36"),
        (lambda d: d["usage"]["cells"].pop(), "usage.cells cover other cells than the answer rows"),
        (
            lambda d: d["usage"]["cells"][-1]["tokens"]["compressor"].update(completion_tokens=0.0),
            "usage.roles.compressor.openai:echo.completion_tokens is ",
        ),
        (
            lambda d: d["usage"]["sent"]["judge"]["openai:echo"].update(calls=10**6),
            "usage.sent.judge.openai:echo holds more calls than the whole run",
        ),
        (lambda d: d["usage"]["sent"]["judge"].update(other={}), "usage.sent.judge names other, which the run's"),
        (
            lambda d: d["usage"]["roles"]["compressor"].pop("openai:echo"),
            "usage.cells hold compressor tokens of openai:echo, which usage.roles does not name",
        ),
    ],
)
def test_each_kind_of_edit_is_refused(served, edit, message):
    run = read_folder(served[0])
    payload = copy.deepcopy(run.payload)
    edit(payload)
    problems = usage_problems(payload, run.answers)
    assert any(message in p for p in problems), problems


def test_a_warm_two_process_rerun_passes(served, tmp_path):
    """Two processes each count a memory both made (the closed-book one): the checks hold shard sums too."""
    folder, _ = served
    cache = tmp_path / "cache"
    shutil.copytree(folder.parent / "cache", cache)
    with usage_server() as server:
        url = f"openai:echo@{server.url}"
        extra = ["--compressors", f"truncate,{url}", "--reader", url, "--judge", url, "--data", "synthetic:contexts=3"]
        extra += ["--conditions", "own,none,cross,full,closed", "--ratios", "0.25,0.5", "--num-processes", "2"]
        assert main(run_args(tmp_path, *extra, "--cache-dir", str(cache))) == 0
    run = read_folder(tmp_path / "out")
    assert run.payload["usage"]["sent"]["reader"] == {}  # warm: nothing sent
    assert usage_problems(run.payload, run.answers) == []


def test_a_run_written_before_usage_was_recorded_has_nothing_to_check(served):
    run = read_folder(served[0])
    assert usage_problems({**run.payload, "usage": None, "cost": None, "prices": None}, run.answers) == []
    problems = usage_problems({**run.payload, "usage": None}, run.answers)
    assert problems == ["cost is recorded without the usage it was computed from"]


def test_publish_plan_refuses_an_edited_cost(served, tmp_path):
    edited = _edited(served[0], tmp_path, lambda d: d["cost"].update(total=0.0))
    with pytest.raises(PublishError, match=r"cost does not follow from usage and prices \(total 0.0; they give "):
        publish_plan(edited, "me/echo", compressor="openai:echo")


def test_a_usage_of_another_shape_is_one_problem_not_a_traceback(served):
    run = read_folder(served[0])
    payload = copy.deepcopy(run.payload)
    del payload["usage"]["roles"]["reader"]["openai:echo"]["prompt_tokens"]
    assert usage_problems(payload, run.answers) == [
        "usage or cost is not in the shape gacc-hf writes (KeyError: 'prompt_tokens')"
    ]
