"""`docs/results/judges`: the main job's answers judged again by four judges against the labelled answers, and the
README's table of each judge against the labels.

The agreement counts are recounted here from the folder's verdicts and the labels file, answer by answer, not
read from the figures the folder stores; the README must print both.
"""

from __future__ import annotations

import hashlib
import json

from gacc_hf.keys import answer_key
from gacc_hf.results.folder import verify_folder
from tests.helpers.paths import ROOT
from tests.results.test_recorded_runs import table_rows

RUNS = ROOT / "docs" / "results"
LABELS = RUNS / "main" / "labels.jsonl"
HEAD = "| judge | accuracy [95% CI] | agrees | false-right | false-wrong |"


def labels() -> dict[str, str]:
    return {line["key"]: line["label"] for line in map(json.loads, LABELS.read_text(encoding="utf-8").splitlines())}


def test_the_rejudged_folder_passes_its_checks_and_called_no_compressor_or_reader():
    run = verify_folder(RUNS / "judges")
    assert run.payload["calls"]["compressor"] == 0 and run.payload["calls"]["reader"] == 0
    assert run.payload["integrity"] == {"budget_violations": 0, "count_errors": 0, "exposures": 0}
    source = run.config["rescored_from"]
    assert source["path"] == "docs/results/main"
    assert source["results_sha256"] == hashlib.sha256((RUNS / "main" / "results.json").read_bytes()).hexdigest()


def test_the_readme_table_is_each_judge_against_the_labels():
    run = verify_folder(RUNS / "judges")
    marked = labels()
    assert len(marked) == 154 and sum(v == "right" for v in marked.values()) == 21
    verdicts: dict[str, dict[str, bool]] = {}
    for row in run.answers:  # one verdict an answer key and judge: the same answer in two cells is one label
        key = answer_key(row["question_id"], row["answer"])
        if key in marked:
            verdicts.setdefault(row["judge"], {})[key] = bool(row["correct"])
    figures = {a["judge"]: a for a in run.payload["labels"]["accuracy"]}
    rows = table_rows((ROOT / "README.md").read_text(encoding="utf-8"), HEAD)
    assert [r[0].strip("`") for r in rows] == ["contains", "exact", "f1", "smollm2"]
    for cells in rows:
        judge = cells[0].strip("`")
        said = verdicts[judge]
        assert set(said) == set(marked)
        agree = sum(said[k] == (marked[k] == "right") for k in marked)
        false_right = sum(said[k] and marked[k] == "wrong" for k in marked)
        false_wrong = sum(not said[k] and marked[k] == "right" for k in marked)
        a = figures[judge]
        acc = f"{a['accuracy']:.3f} [{a['accuracy_ci_low']:.3f}, {a['accuracy_ci_high']:.3f}]"
        assert cells[1:] == [
            acc,
            str(agree),
            f"{false_right / 133:.3f} ({false_right} of 133)",
            f"{false_wrong / 21:.3f} ({false_wrong} of 21)",
        ], f"README judges table: row {judge}"
        assert abs(a["accuracy"] - agree / 154) < 1e-12
    # the main job's judge is the only one that tells right from wrong here: 148 of 154, 3 wrong each way
    assert [cells[2] for cells in rows] == ["148", "133", "134", "133"]
