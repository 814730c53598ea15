"""The usage of a run of several readers and judges: every setting's cells hold each memory's and answer's whole
usage, so the audit counts each value once per method; a sound run passes, an edited cell is refused."""

from __future__ import annotations

import json
import shutil

import pytest

from gacc_hf.cli import main
from gacc_hf.cost.audit import usage_problems
from gacc_hf.hub.model_card import publish_plan
from gacc_hf.results.folder import read_folder
from gacc_hf.results.views import setting_view
from tests.helpers.cli import run_args
from tests.helpers.usage_server import usage_server

PRICES = "currency: EUR\nprices:\n  echo: {prompt: 0.001, completion: 0.002}\n"


@pytest.fixture(scope="module")
def crossed(tmp_path_factory):
    """A served compressor, a served and a rule reader, a served and a rule judge, priced."""
    tmp = tmp_path_factory.mktemp("crossed")
    (tmp / "p.yaml").write_text(PRICES, encoding="utf-8")
    with usage_server() as server:
        url = f"openai:echo@{server.url}"
        extra = ["--compressors", url, "--reader", f"{url},fields", "--judge", f"exact,{url}"]
        extra += ["--data", "synthetic:contexts=2", "--conditions", "own,full", "--ratios", "0.5"]
        extra += ["--prices", str(tmp / "p.yaml")]
        assert main(run_args(tmp, *extra)) == 0
        reported = {role: server.reported(role) for role in ("compressor", "reader", "judge")}
    return tmp / "out", reported


def test_a_crossed_served_run_passes_and_counts_each_call_once(crossed):
    folder, reported = crossed
    run = read_folder(folder)
    assert usage_problems(run.payload, run.answers) == []
    roles = run.payload["usage"]["roles"]
    for role, (_, prompt, completion) in reported.items():  # the server's own count: once per call
        entry = roles[role]["openai:echo"]
        assert (entry["prompt_tokens"], entry["completion_tokens"]) == (prompt, completion)
    cells = run.payload["usage"]["cells"]
    assert {(c["reader"], c["judge"]) for c in cells} == {
        (r, j) for r in ("openai:echo", "fields") for j in ("exact", "openai:echo")
    }
    for setting in (("openai:echo", "openai:echo"), ("fields", "exact")):
        view = setting_view(run, setting)  # its cells, and the run's usage of its own methods
        assert {c["reader"] for c in view.payload["usage"]["cells"]} == {setting[0]}
        assert set(view.payload["usage"]["roles"]["reader"]) <= {setting[0]}
        assert publish_plan(folder, "me/echo", compressor="openai:echo", reader=setting[0], judge=setting[1])


def test_an_edited_cell_of_one_setting_is_refused(crossed, tmp_path):
    folder, _ = crossed
    out = shutil.copytree(folder, tmp_path / "run")
    doc = json.loads((out / "results.json").read_text())
    cell = next(c for c in doc["usage"]["cells"] if c["reader"] == "fields" and c["condition"] == "own")
    cell["tokens"]["compressor"]["prompt_tokens"] += 50
    (out / "results.json").write_text(json.dumps(doc))
    problems = usage_problems(doc, read_folder(out).answers)
    assert any(p.startswith("usage.roles.compressor.openai:echo.prompt_tokens is") for p in problems), problems
