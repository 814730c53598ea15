"""report.md and `gacc report`: rebuilt from a results folder alone, byte for byte, refusing tampered figures."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gacc_hf.cli import main
from gacc_hf.results.folder import derived_figures, read_folder, rebuild
from gacc_hf.results.layout import ResultsError, json_bytes
from gacc_hf.results.report import render_report
from tests.helpers.results import real_run

FILES = (
    "results.json",
    "answers.parquet",
    "memories.parquet",
    "report.md",
    "report.html",
    "scores.png",
    "gaps.png",
    "outcomes.png",
)


def test_a_run_writes_the_whole_folder(run):
    out, _ = run
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)


def test_rebuild_reproduces_every_file_byte_for_byte(run, folder):
    before = {name: (run[0] / name).read_bytes() for name in FILES}
    for name in ("report.md", "report.html", "scores.png", "gaps.png", "outcomes.png"):
        (folder / name).unlink()
    written = rebuild(folder)
    assert sorted(p.name for p in written) == ["gaps.png", "outcomes.png", "report.html", "report.md", "scores.png"]
    assert {name: (folder / name).read_bytes() for name in FILES} == before


def test_figures_rederived_from_answers_are_byte_identical_to_results_json(run):
    doc = json.loads((run[0] / "results.json").read_text())
    derived = derived_figures(read_folder(run[0]).answers, doc["config"])
    assert json_bytes(derived["scores"]) == json_bytes(doc["scores"])
    assert json_bytes(derived["gaps"]) == json_bytes(doc["gaps"])


def test_rebuild_loads_no_model_machinery(run, folder):
    code = (
        "import sys; from gacc_hf.results.folder import rebuild; rebuild(sys.argv[1]); "
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _edit_scores(folder, key, value, index=0):
    doc = json.loads((folder / "results.json").read_text())
    doc["scores"][index][key] = value
    (folder / "results.json").write_text(json.dumps(doc))
    return doc["scores"][index]


def test_a_tampered_score_is_refused_naming_the_cell(folder):
    cell = _edit_scores(folder, "micro", 0.99)
    with pytest.raises(ResultsError, match=rf"compressor={cell['compressor']}, condition={cell['condition']}.*micro"):
        rebuild(folder)


@pytest.mark.parametrize(("what", "field"), [("outcomes", "lost"), ("auc", "micro_auc")])
def test_a_tampered_reading_aid_is_refused_and_an_untouched_one_passes(folder, what, field):
    rebuild(folder)  # untouched: every stored figure equals its recount
    doc = json.loads((folder / "results.json").read_text())
    doc[what][1][field] = 0.5
    (folder / "results.json").write_text(json.dumps(doc))
    with pytest.raises(ResultsError, match=rf"{what} at compressor={doc[what][1]['compressor']}.* in {field}"):
        rebuild(folder)


def test_a_ci_that_another_bootstrap_drew_only_warns_and_is_kept(folder):
    _edit_scores(folder, "micro_ci_low", -0.5, index=4)
    with pytest.warns(UserWarning, match="1 scores row"):
        rebuild(folder)
    assert json.loads((folder / "results.json").read_text())["scores"][4]["micro_ci_low"] == -0.5


def _micro(answers, compressor, condition, ratio):
    rows = [a for a in answers if (a["compressor"], a["condition"], a["ratio"]) == (compressor, condition, ratio)]
    return sum(a["correct"] for a in rows) / len(rows)


def test_report_shows_each_score_with_its_ci(run):
    out, result = run
    text = (out / "report.md").read_text()
    micro = _micro(result.answers, "goal-lines", "own", 0.5)
    assert f"| `goal-lines` | own | 0.5 | {micro:.3f} [" in text
    assert "All counters are 0" in text
    assert "![scores](scores.png)" in text and "![gaps](gaps.png)" in text
    assert "## Goal gaps" in text


def test_report_flags_nonzero_integrity_counters(run):
    folder = read_folder(run[0])
    folder.payload["integrity"] = {**folder.payload["integrity"], "exposures": 2}
    text = render_report(folder)
    assert "must not be reported" in text and "| exposures | 2 |" in text


def test_cli_report_rebuilds_and_names_a_missing_file(folder, capsys):
    assert main(["report", str(folder)]) == 0
    assert str(folder / "report.md") in capsys.readouterr().out
    (folder / "answers.parquet").unlink()
    assert main(["report", str(folder)]) == 2
    assert "answers.parquet: missing" in capsys.readouterr().err


def test_recorded_failures_survive_the_folder_and_are_listed(tmp_path):
    def flaky(item):  # fails on the large budgets of one context only
        if item.context.startswith("Incident") and item.token_budget > 20:
            raise RuntimeError("boom")
        return item.context

    result = real_run(tmp_path / "run", tmp_path / "cache", compressor=flaky, contexts=6, on_error="record")
    failed = [m for m in result.memories if m["error"]]
    assert failed and all(m["retained_tokens"] is None for m in failed)
    back = read_folder(tmp_path / "run")
    assert back.memories == result.memories and back.answers == result.answers
    rebuild(tmp_path / "run")
    text = (tmp_path / "run" / "report.md").read_text()
    assert f"## Errors ({len(result.errors)})" in text and "RuntimeError: boom" in text


@pytest.fixture(scope="module")
def bounded(tmp_path_factory):
    """A run with both ceilings (full context, oracle) and the floor (closed book) besides two compressors."""
    root = tmp_path_factory.mktemp("bounded")
    result = real_run(root / "run", root / "cache", conditions=("own", "none", "full", "oracle", "closed"))
    return root / "run", result


CEILINGS = "Ceilings (upper bounds, not methods)"


def _section(text, title):
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_ceilings_are_listed_apart_as_upper_bounds_and_the_floor_apart_from_them(bounded):
    text = (bounded[0] / "report.md").read_text()
    scores, bounds = _section(text, "Scores"), _section(text, CEILINGS)
    floor = _section(text, "Floor (a lower bound, not a method)")
    assert not any(name in scores for name in ("`oracle`", "`full-context`", "`closed-book`"))
    assert "| `full-context` | full | 1 |" in bounds and "closed" not in bounds
    floor_rows = [line.split(" | ")[:2] for line in floor.splitlines() if line.startswith("| `")]
    assert floor_rows == [["| `closed-book`", "closed"]]
    assert [line.split(" | ")[2] for line in bounds.splitlines() if line.startswith("| `oracle`")] == [
        "0.1",
        "0.25",
        "0.5",
    ]
    assert "`oracle`" not in _section(text, "Budget use")


def _share(rows, key):
    return sum(bool(r[key]) for r in rows) / len(rows)


def test_evidence_recall_is_shown_with_its_ci_and_matches_the_answer_rows(bounded):
    out, result = bounded
    text = (out / "report.md").read_text()
    assert "Evidence Micro [95% CI] | Evidence Macro [95% CI]" in text
    rows = [a for a in result.answers if (a["compressor"], a["condition"], a["ratio"]) == ("goal-lines", "own", 0.25)]
    evidence, micro = _share(rows, "evidence"), _share(rows, "correct")
    line = next(x for x in text.splitlines() if x.startswith("| `goal-lines` | own | 0.25 |"))
    assert line.split(" | ")[5].startswith(f"{evidence:.3f} [") and line.split(" | ")[3].startswith(f"{micro:.3f} [")


def test_exposure_rows_are_listed(tmp_path):
    from gacc_hf.data.synthetic import synthetic

    asked = {}
    for row in synthetic(seed=0, contexts=2):
        asked.setdefault(row["context"], []).append(row["questions"][0]["question"])

    def leaky(item):  # writes the first question of each goal of its context
        return " ".join(asked[item.context])

    result = real_run(tmp_path / "run", tmp_path / "cache", compressor=leaky, contexts=2, ratios=(0.5,))
    text = (tmp_path / "run" / "report.md").read_text()
    assert result.exposures and f"### Exposures ({len(result.exposures)})" in text
    first = next(q for qs in asked.values() for q in qs)
    assert f"| question | {first} |" in text


def test_the_command_line_is_shown_when_recorded(run):
    folder = read_folder(run[0])
    assert "- command: not recorded" in render_report(folder)
    folder.payload["command"] = ["gacc", "run", "--data", "my file.jsonl"]
    assert "- command: `gacc run --data 'my file.jsonl'`" in render_report(folder)


def test_rows_without_the_newer_fields_still_render(bounded):
    folder = read_folder(bounded[0])
    newer = ("ceiling", "evidence", "evidence_micro", "evidence_macro")
    for rows in (folder.scores, folder.answers, folder.memories):
        rows[:] = [{k: v for k, v in r.items() if not k.startswith(newer)} for r in rows if r["condition"] != "oracle"]
    del folder.payload["config"]["data"]
    text = render_report(folder)
    assert "Evidence Micro" not in text and "Data: not recorded" in text
    assert "| `full-context` | full | 1 |" in _section(text, CEILINGS)  # known by its condition
    assert "| `closed-book` | closed | 0 |" in _section(text, "Floor (a lower bound, not a method)")
