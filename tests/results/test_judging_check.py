"""The judges' agreement and the survival of the ranking a folder stores, held to its answers by `verify_folder`.

Each edit below is made by hand to a copy of a recorded run (`docs/results/judges`: four judges of one reader,
so it stores both), as a person editing `results.json` would make it.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest

from gacc_hf.results.folder import verify_folder
from gacc_hf.results.judging_check import differences
from gacc_hf.results.layout import ResultsError
from tests.helpers.paths import ROOT

JUDGES = ROOT / "docs" / "results" / "judges"
MAIN = ROOT / "docs" / "results" / "main"


def edited(tmp_path: Path, source: Path, edit) -> Path:
    """A copy of a recorded run with its `results.json` edited by `edit(payload)`."""
    folder = tmp_path / source.name
    shutil.copytree(source, folder)
    payload = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    edit(payload)
    (folder / "results.json").write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return folder


def test_the_recorded_figures_pass_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = verify_folder(JUDGES)
    stored = json.loads((JUDGES / "results.json").read_text(encoding="utf-8"))
    assert run.payload["agreement"] == stored["agreement"] and run.payload["survival"] == stored["survival"]


def test_an_edited_kappa_is_refused_naming_where(tmp_path):
    def edit(p):
        p["agreement"][0]["pairs"][1]["kappa"] = 0.9  # contains against f1: 0.2816 as judged

    with pytest.raises(ResultsError, match=r"agreement differs .* at agreement\[0\]\.pairs\[1\]\.kappa$"):
        verify_folder(edited(tmp_path, JUDGES, edit))


def test_an_edited_survival_verdict_is_refused(tmp_path):
    def edit(p):
        p["survival"]["sections"][0]["rankings"][0]["ranking"][0]["compressor"] = "truncate"

    where = r"survival\.sections\[0\]\.rankings\[0\]\.ranking\[0\]\.compressor"
    with pytest.raises(ResultsError, match=rf"survival differs .* at {where}"):
        verify_folder(edited(tmp_path, JUDGES, edit))


def test_a_pair_removed_is_refused(tmp_path):
    def edit(p):
        del p["agreement"][0]["pairs"][0]

    with pytest.raises(ResultsError, match=r"agreement\[0\]\.pairs \(6 items, 5 stored\)"):
        verify_folder(edited(tmp_path, JUDGES, edit))


def test_an_edited_ci_only_warns_and_keeps_the_stored_figure(tmp_path):
    def edit(p):
        p["agreement"][0]["pairs"][1]["kappa_ci_low"] = 0.1

    with pytest.warns(UserWarning, match="1 agreement CI figure"):
        run = verify_folder(edited(tmp_path, JUDGES, edit))
    assert run.payload["agreement"][0]["pairs"][1]["kappa_ci_low"] == 0.1


def test_agreement_stored_for_a_run_of_one_judge_is_refused(tmp_path):
    def edit(p):
        p["agreement"] = json.loads((JUDGES / "results.json").read_text(encoding="utf-8"))["agreement"]

    with pytest.raises(ResultsError, match=r"agreement is recorded, but the answers in answers\.parquet give none"):
        verify_folder(edited(tmp_path, MAIN, edit))


def test_figures_a_file_lacks_are_derived_in_their_place(tmp_path):
    def edit(p):
        del p["agreement"], p["survival"]

    run = verify_folder(edited(tmp_path, JUDGES, edit))
    stored = json.loads((JUDGES / "results.json").read_text(encoding="utf-8"))
    assert run.payload["agreement"] == stored["agreement"] and run.payload["survival"] == stored["survival"]


def test_differences_tell_a_ci_from_a_point_and_a_type_from_a_value():
    assert list(differences({"tau": 1.0, "tau_ci_note": None}, {"tau": 1.0, "tau_ci_note": "3 left out"}, "s")) == [
        ("s.tau_ci_note", True)
    ]
    assert list(differences({"n": 1}, {"n": True}, "a")) == [("a.n", False)]  # 1 == True, but not the same JSON
    assert list(differences({"a": 1}, {"b": 1}, "x")) == [("x.a", False), ("x.b", False)]
    assert list(differences([1, [2, 3]], [1, [2, 3]], "x")) == []
