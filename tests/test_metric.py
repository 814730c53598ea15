"""The `evaluate` metric "gacc": offline loading by bare name, batches, two processes, bad input, configs.

Everything runs the real `evaluate` 0.4.6. Loads by name or path run in subprocesses with
HF_HUB_OFFLINE=1 HF_EVALUATE_OFFLINE=1, a temporary HF_MODULES_CACHE/HF_HOME and a temporary working
directory, so nothing depends on (or writes to) the user's caches or the repo as working directory.
In-process tests instantiate `Gacc` directly with a temporary `cache_dir`.

Hand-checked rows used throughout (`exact` = default config, `contains` = contains config):

    #  answer               references                     goal  exact  contains
    0  "The 45 minutes."    ["45 minutes"]                 g1    T      T      article + punctuation dropped
    1  "primary database"   ["primary db", "primary ..."]  g1    T      T      second reference matches
    2  "us-west-2"          ["us-east-1"]                  g2    F      F
    3  "Three"              ["three", "3"]                 g2    T      T      case folded
    4  "Friday"             ["friday"]                     g3    T      T
    5  "45"                 ["45 minutes"]                 g3    F      F      reference not inside answer
    6  "It took 12 hours."  ["12 hours"]                   g4    F      T      contained, not equal

default:  4/7 right; all-correct goals: g1 only -> Macro 1/4 (mean per-goal accuracy would be 2/4)
contains: 5/7 right; all-correct goals: g1, g4 -> Macro 2/4 (mean per-goal accuracy would be 3/4)
"""

from __future__ import annotations

import doctest
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import evaluate
import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import gacc_hf.metric as gm
from gacc_hf.metric import Gacc
from gacc_hf.scoring import scores as scoring
from tests.helpers.child import CHILD_TIMEOUT, last_json, run_child
from tests.helpers.paths import ROOT

REPO = ROOT

ANSWERS = ["The 45 minutes.", "primary database", "us-west-2", "Three", "Friday", "45", "It took 12 hours."]
REFERENCES = [
    ["45 minutes"],
    ["primary db", "primary database"],
    ["us-east-1"],
    ["three", "3"],
    ["friday"],
    ["45 minutes"],
    ["12 hours"],
]
GOALS = ["g1", "g1", "g2", "g2", "g3", "g3", "g4"]
EXACT = [True, True, False, True, True, False, False]
CONTAINS = [True, True, False, True, True, False, True]
TEXT = {"predictions": ANSWERS, "references": REFERENCES, "goal_ids": GOALS}
EXPECTED_DEFAULT = {"micro": 4 / 7, "macro": 1 / 4, "n_questions": 7, "n_goals": 4}
EXPECTED_CONTAINS = {"micro": 5 / 7, "macro": 2 / 4, "n_questions": 7, "n_goals": 4}


def offline_env(tmp: Path, modules_cache: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    for key in ("HF_METRICS_CACHE", "HF_DATASETS_CACHE", "PYTHONPATH"):
        env.pop(key, None)
    env.update(
        HF_HUB_OFFLINE="1",
        HF_EVALUATE_OFFLINE="1",
        HF_MODULES_CACHE=str(modules_cache),
        HF_HOME=str(tmp / "hf_home"),
        XDG_CACHE_HOME=str(tmp / "xdg_cache"),
        **extra,
    )
    return env


NO_NETWORK = """
import socket
ATTEMPTS = []
def _refuse(self, address):
    ATTEMPTS.append(repr(address))
    raise OSError("network refused by the test")
socket.socket.connect = _refuse
"""

OFFLINE_CHILD = (
    NO_NETWORK
    + """
import doctest, json, os, re, sys
import evaluate
import gacc_hf.metric as gm
rows = json.loads(sys.argv[1])
out = {"cwd": os.getcwd(), "cwd_listing": sorted(os.listdir("."))}
try:
    evaluate.load("gacc")
    out["before_install"] = "loaded"
except FileNotFoundError as err:
    out["before_install"] = "FileNotFoundError: " + str(err)
out["installed"] = gm.install_metric(os.environ["HF_MODULES_CACHE"])
out["default"] = evaluate.load("gacc").compute(**rows["text"])
out["contains"] = evaluate.load("gacc", "contains").compute(**rows["text"])
out["verdicts"] = evaluate.load("gacc", "verdicts").compute(**rows["verdicts"], n_bootstrap=200, seed=7)
out["by_path"] = evaluate.load(gm.METRIC_PATH).compute(**rows["text"])
out["metric_path"] = gm.METRIC_PATH
card = open(os.environ["GACC_CARD"], encoding="utf-8").read()
card = re.sub(r"^```.*$", "", card, flags=re.M)  # a closing fence would read as expected output
for name, text in [("kwargs", gm._KWARGS_DESCRIPTION), ("card", card)]:
    report = []
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(doctest.DocTestParser().get_doctest(text, {}, name, None, 0), out=report.append)
    out[name + "_doctest"] = [runner.failures, runner.tries, "".join(report)]
out["attempts"] = ATTEMPTS
print(json.dumps(out))
"""
)


@pytest.fixture(scope="module")
def offline_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """One fresh offline interpreter, working in an empty directory, with an empty modules cache."""
    tmp = tmp_path_factory.mktemp("offline")
    rows = {"text": TEXT, "verdicts": {"predictions": EXACT, "goal_ids": GOALS}}
    env = offline_env(tmp, tmp / "modules", GACC_CARD=str(REPO / "metrics" / "gacc" / "README.md"))
    return tmp / "modules", run_child(OFFLINE_CHILD, tmp / "work", env, json.dumps(rows))


def test_bare_name_loads_offline_from_any_directory_after_install(offline_run: tuple[Path, dict]) -> None:
    modules, out = offline_run
    assert out["cwd_listing"] == []  # nothing in the working directory for evaluate to find
    assert out["before_install"].startswith("FileNotFoundError"), out["before_install"]
    installed = Path(out["installed"])
    assert installed.name == "gacc.py"
    assert installed.parent.parent == modules / "evaluate_modules" / "metrics" / "evaluate-metric--gacc"
    assert re.fullmatch(r"[0-9a-f]{64}", installed.parent.name)
    assert installed.read_text(encoding="utf-8") == gm.MODULE_SOURCE

    assert out["default"] == EXPECTED_DEFAULT
    assert out["contains"] == EXPECTED_CONTAINS
    assert out["by_path"] == out["default"]
    assert out["metric_path"] == str(REPO / "metrics" / "gacc" / "gacc.py")
    # one scoring implementation: the metric's numbers are scoring.score's, CIs included
    reference = scoring.score(GOALS, EXACT, n_boot=0).as_dict()
    assert out["default"] == {k: v for k, v in reference.items() if "_ci_" not in k}
    assert out["verdicts"] == scoring.score(GOALS, EXACT, n_boot=200, seed=7).as_dict()
    assert out["verdicts"]["macro_ci_low"] <= 0.25 <= out["verdicts"]["macro_ci_high"]
    assert out["attempts"] == []  # no socket was opened


def test_kwargs_description_doctests_pass_offline(offline_run: tuple[Path, dict]) -> None:
    failed, tried, report = offline_run[1]["kwargs_doctest"]
    assert tried >= 10 and failed == 0, report


def test_metric_card_examples_pass_offline(offline_run: tuple[Path, dict]) -> None:
    failed, tried, report = offline_run[1]["card_doctest"]
    assert tried >= 8 and failed == 0, report


RANK_CHILD = """
import json, sys
import evaluate
rank, experiment, cache, batches = int(sys.argv[1]), sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
metric = evaluate.load("gacc", num_process=2, process_id=rank, experiment_id=experiment, cache_dir=cache)
for batch in batches:
    metric.add_batch(**batch)
print(json.dumps({"rank": rank, "result": metric.compute()}))
"""


@pytest.fixture(scope="module")
def installed_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A modules cache with the metric installed by this (parent) process, next to an older, broken version."""
    modules = tmp_path_factory.mktemp("modules")
    stale = modules / "evaluate_modules" / "metrics" / "evaluate-metric--gacc" / ("0" * 64) / "gacc.py"
    stale.parent.mkdir(parents=True)
    stale.write_text("raise ImportError('stale gacc module picked')\n", encoding="utf-8")
    os.utime(stale, (1_600_000_000, 1_600_000_000))
    path = Path(gm.install_metric(modules))
    assert path.stat().st_mtime > stale.stat().st_mtime
    assert gm.install_metric(modules) == str(path)  # idempotent
    return modules


def test_two_processes_gather_all_rows_on_rank_zero(tmp_path: Path, installed_modules: Path) -> None:
    # goal "gs" has its right answer on rank 0 and its wrong one on rank 1.
    # all rows: g0 (2/2), gs (1/2), g1 (1/1) -> Micro 4/5, Macro 2/3.
    # rank 0 alone would give Macro 1 (g0, gs both complete there), rank 1 alone 1/2: their mean is 3/4.
    rank0 = [
        {
            "predictions": ["45 minutes", "primary db"],
            "references": [["45 minutes"], ["primary database", "primary db"]],
            "goal_ids": ["g0", "gs"],
        },
        {"predictions": ["Friday"], "references": [["friday"]], "goal_ids": ["g0"]},
    ]
    rank1 = [
        {"predictions": ["us-west"], "references": [["us-east"]], "goal_ids": ["gs"]},
        {"predictions": ["3"], "references": [["three", "3"]], "goal_ids": ["g1"]},
    ]
    env = offline_env(tmp_path, installed_modules)
    shared = str(tmp_path / "shared_cache")
    work = tmp_path / "work"
    work.mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RANK_CHILD, str(rank), "exp-split-goal", shared, json.dumps(batches)],
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank, batches in enumerate([rank0, rank1])
    ]
    outs = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=CHILD_TIMEOUT)
        assert proc.returncode == 0, f"rank failed:\n{stdout}\n{stderr}"
        outs.append(last_json(stdout))
    assert outs[0]["result"] == {"micro": 4 / 5, "macro": 2 / 3, "n_questions": 5, "n_goals": 3}
    assert outs[1]["result"] is None


def test_add_batch_over_batches_equals_one_compute(tmp_path: Path) -> None:
    whole = Gacc(cache_dir=str(tmp_path)).compute(**TEXT)
    assert whole == EXPECTED_DEFAULT

    metric = Gacc(cache_dir=str(tmp_path))
    # g2 (rows 2, 3) and g3 (rows 4, 5) each straddle a batch boundary; the last row goes through add()
    for start, stop in [(0, 3), (3, 5), (5, 6)]:
        metric.add_batch(predictions=ANSWERS[start:stop], references=REFERENCES[start:stop], goal_ids=GOALS[start:stop])
    metric.add(prediction=ANSWERS[6], reference=REFERENCES[6], goal_ids=GOALS[6])
    assert metric.compute() == whole

    # a per-batch Macro would differ: batch (3, 5) alone has g2 complete (1/1) and g3 complete (1/1)
    assert (
        Gacc(cache_dir=str(tmp_path)).compute(
            predictions=ANSWERS[3:5], references=REFERENCES[3:5], goal_ids=GOALS[3:5]
        )["macro"]
        == 1.0
    )


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("metric_cache"))


@settings(max_examples=25, deadline=None)
@given(
    rows=st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d", "e"]), st.booleans()), min_size=1, max_size=40),
    cuts=st.lists(st.integers(min_value=0, max_value=40), max_size=4),
)
def test_batches_match_scoring_for_any_split(shared_cache: str, rows: list[tuple[str, bool]], cuts: list[int]) -> None:
    goals, verdicts = [g for g, _ in rows], [v for _, v in rows]
    bounds = sorted({0, len(rows), *(c for c in cuts if c < len(rows))})
    metric = Gacc("verdicts", cache_dir=shared_cache, keep_in_memory=True)
    for start, stop in itertools.pairwise(bounds):
        metric.add_batch(predictions=verdicts[start:stop], goal_ids=goals[start:stop])
    want = scoring.score(goals, verdicts, n_boot=0)
    n_goals = len(set(goals))
    assert metric.compute() == {"micro": want.micro, "macro": want.macro, "n_questions": len(rows), "n_goals": n_goals}


def test_configs_verdicts_and_contains(tmp_path: Path) -> None:
    assert Gacc("contains", cache_dir=str(tmp_path)).compute(**TEXT) == EXPECTED_CONTAINS
    verdicts = Gacc("verdicts", cache_dir=str(tmp_path))
    assert verdicts.compute(predictions=CONTAINS, goal_ids=GOALS) == EXPECTED_CONTAINS
    # the text config's verdicts are the exact judge's: feeding them as verdicts gives the same scores
    assert verdicts.compute(predictions=EXACT, goal_ids=GOALS) == EXPECTED_DEFAULT
    assert verdicts.compute(predictions=np.array(EXACT), goal_ids=np.array(GOALS)) == EXPECTED_DEFAULT
    ci = verdicts.compute(predictions=EXACT, goal_ids=GOALS, n_bootstrap=300, seed=3)
    assert ci == scoring.score(GOALS, EXACT, n_boot=300, seed=3).as_dict()


BAD_INPUTS = [
    pytest.param(
        "default",
        {"predictions": ["a", "b"], "references": [["a"]], "goal_ids": ["g", "g"]},
        r"inputs differ in length \(predictions=2, references=1, goal_ids=2\)",
        id="mismatched-references",
    ),
    pytest.param(
        "default",
        {"predictions": ["a", "b"], "references": [["a"], ["b"]], "goal_ids": ["g"]},
        r"inputs differ in length \(predictions=2, references=2, goal_ids=1\)",
        id="mismatched-goal-ids",
    ),
    pytest.param(
        "default",
        {"predictions": ["a"], "references": [["a"]]},
        r"goal_ids is missing",
        id="missing-goal-ids",
    ),
    pytest.param(
        "default",
        {"predictions": ["a", "b"], "references": [["a"], []], "goal_ids": ["g", "g"]},
        r"references\[1\] is an empty list; every question needs at least one gold answer",
        id="empty-references",
    ),
    pytest.param(
        "default",
        {"predictions": ["a"], "references": ["a"], "goal_ids": ["g"]},
        r"references\[0\] is 'a'; give each question a list of gold answers",
        id="reference-not-a-list",
    ),
    pytest.param(
        "default",
        {"predictions": ["a", None], "references": [["a"], ["b"]], "goal_ids": ["g", "g"]},
        r"predictions\[1\] is None; answers must be strings",
        id="answer-none",
    ),
    pytest.param(
        "default",
        {"predictions": ["a"], "references": [["a"]], "goal_ids": [""]},
        r"goal_ids\[0\] is ''; goal ids must be non-empty strings",
        id="empty-goal-id",
    ),
    pytest.param(
        "verdicts",
        {"predictions": [True, "yes"], "goal_ids": ["g", "g"]},
        r"predictions\[1\] is 'yes'; the 'verdicts' config takes booleans",
        id="verdict-not-bool",
    ),
    pytest.param(
        "verdicts",
        {"predictions": [True], "references": [["a"]], "goal_ids": ["g"]},
        r"the 'verdicts' config takes no references",
        id="verdicts-with-references",
    ),
]


@pytest.mark.parametrize(("config", "inputs", "message"), BAD_INPUTS)
def test_bad_input_fails_clearly_in_compute_and_add_batch(
    tmp_path: Path, config: str, inputs: dict, message: str
) -> None:
    metric = Gacc(config, cache_dir=str(tmp_path))
    with pytest.raises(ValueError, match=message):
        metric.compute(**inputs)
    with pytest.raises(ValueError, match=message):
        metric.add_batch(**inputs)
    # nothing from the rejected batch was kept
    good = {"predictions": ["x"], "references": [["x"]], "goal_ids": ["ok"]}
    if config == "verdicts":
        good = {"predictions": [True], "goal_ids": ["ok"]}
    assert metric.compute(**good) == {"micro": 1.0, "macro": 1.0, "n_questions": 1, "n_goals": 1}


def test_add_single_row_checks_goal_and_references(tmp_path: Path) -> None:
    metric = Gacc(cache_dir=str(tmp_path))
    with pytest.raises(ValueError, match="goal_ids is missing"):
        metric.add(prediction="a", reference=["a"])
    with pytest.raises(ValueError, match=r"references\[0\] is an empty list"):
        metric.add(prediction="a", reference=[], goal_ids="g")


def test_unknown_config_and_zero_rows(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown config 'exact'; choose one of default, contains, verdicts"):
        Gacc("exact", cache_dir=str(tmp_path))
    with pytest.raises(ValueError, match="cannot score zero questions"):
        Gacc(cache_dir=str(tmp_path)).compute(predictions=[], references=[], goal_ids=[])


def test_thin_module_is_the_generated_source_and_scans_cleanly() -> None:
    module = REPO / "metrics" / "gacc" / "gacc.py"
    assert module.read_text(encoding="utf-8") == gm.MODULE_SOURCE, (
        "metrics/gacc/gacc.py is stale: run gacc_hf.metric.write_metric_module('metrics/gacc')"
    )
    assert str(module) == gm.METRIC_PATH
    # evaluate's own import scanner sees exactly one library import, gacc_hf
    assert evaluate.loading.get_imports(str(module)) == [("library", "gacc_hf", "gacc_hf", None)]
    import_lines = [ln for ln in gm.MODULE_SOURCE.splitlines() if re.match(r"(import|from) ", ln)]
    assert import_lines and all("," not in ln for ln in import_lines)


def test_metric_path_without_repo_tree_is_a_generated_copy(tmp_path: Path) -> None:
    # a wheel install has gacc_hf/ in site-packages and no metrics/ folder beside it
    site = tmp_path / "site"
    shutil.copytree(REPO / "gacc_hf", site / "gacc_hf", ignore=shutil.ignore_patterns("__pycache__"))
    script = """
import json, sys
import evaluate
import gacc_hf.metric as gm
r = evaluate.load(gm.METRIC_PATH, "verdicts").compute(predictions=[True, False], goal_ids=["a", "b"])
print(json.dumps({"file": gm.__file__, "path": gm.METRIC_PATH, "result": r}))
"""
    env = offline_env(tmp_path, tmp_path / "modules", PYTHONPATH=str(site))
    out = run_child(script, tmp_path / "work", env)
    assert out["file"] == str(site / "gacc_hf" / "metric.py")
    path = tmp_path / "xdg_cache" / "gacc_hf" / "metrics" / "gacc" / "gacc.py"
    assert out["path"] == str(path)
    assert path.read_text(encoding="utf-8") == gm.MODULE_SOURCE
    assert out["result"] == {"micro": 0.5, "macro": 0.5, "n_questions": 2, "n_goals": 2}


def test_metric_card_header_and_sections() -> None:
    card = (REPO / "metrics" / "gacc" / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(card.split("---")[1])
    assert header["title"] == "GACC"
    assert header["emoji"]
    assert {"evaluate", "metric"} <= set(header["tags"])
    assert "all-correct" in header["description"]
    headings = re.findall(r"^#+ (.+)$", card, flags=re.M)
    sections = ["Metric Description", "How to Use", "Inputs", "Output Values", "Examples", "Limitations and Bias"]
    for section in [*sections, "Citation"]:
        assert section in headings
    bibtex = card.split("```bibtex")[1].split("```")[0]
    assert "GACC-Bench: Evaluating Goal-Conditioned Compression with Future Questions Held Out" in bibtex
    assert "Liu, Weiting" in bibtex and "2026" in bibtex and "arXiv" in bibtex
    assert not re.search(r"\d{4}\.\d{4,5}", bibtex)  # no invented arXiv number


def test_class_docstring_carries_the_kwargs_examples() -> None:
    # pytest --doctest-modules collects Gacc.__doc__; make sure the examples are really in it
    examples = doctest.DocTestParser().get_examples(Gacc.__doc__)
    assert len(examples) >= 10
    assert gm._KWARGS_DESCRIPTION.strip() in Gacc.__doc__


QUIET_CHILD = """
import logging, site, sys
# run with -S: the environment's packages (argv[2]) without its .pth files (`make` installs the filter there),
# then the filter's folder processed as start-up would
sys.path.append(sys.argv[2])
if sys.argv[1] != "-":
    site.addsitedir(sys.argv[1])
import evaluate
import gacc_hf.metric as gm
gm.install_metric()
evaluate.load("gacc")
logging.getLogger("evaluate.loading").warning("evaluate-metric--other couldn't be found locally at x")
logging.getLogger("evaluate.loading").warning("evaluate-metric--gacc: another notice")
print("{}")
"""


def test_the_cached_copy_notice_is_silenced_for_this_metric_only(tmp_path: Path) -> None:
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    written = gm.quiet_cached_notice(site_dir)
    assert written == str(site_dir / gm.NOTICE_PTH) and sorted(p.name for p in site_dir.iterdir()) == [gm.NOTICE_PTH]
    env = {**offline_env(tmp_path, tmp_path / "modules"), "PYTHONPATH": str(REPO)}
    loud, quiet = (
        subprocess.run(
            [sys.executable, "-S", "-c", QUIET_CHILD, arg, sysconfig.get_paths()["purelib"]],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
        )
        for arg in ("-", str(site_dir))
    )
    notice = "evaluate-metric--gacc/"
    assert loud.returncode == quiet.returncode == 0, quiet.stderr
    assert notice in loud.stderr and "couldn't be found locally" in loud.stderr  # what a user saw on every load
    assert notice not in quiet.stderr
    assert "evaluate-metric--other couldn't be found" in quiet.stderr  # other metrics' notices stay
    assert "evaluate-metric--gacc: another" in quiet.stderr


def test_an_unwritable_site_packages_gets_no_filter(tmp_path: Path) -> None:
    assert gm.quiet_cached_notice(tmp_path / "missing") is None
    assert not (tmp_path / "missing").exists()
