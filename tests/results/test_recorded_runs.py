"""The results folders under `docs/results/` are the runs the README reports, and its tables are theirs.

Each folder must pass every check `gacc report` and `gacc publish` run (figures re-derived from its answers),
keep the protocol (integrity counters 0), be a whole run (no `--limit`) of the sample bundled now (same
content fingerprint), and every cell of the README's table for it must print that folder's figures: an edited
number, a dropped row or a rerun that changed a score fails here, so the README cannot drift from the runs.
"""

from __future__ import annotations

import re

import pytest

import gacc_hf
from gacc_hf.data.fingerprint import fingerprint
from gacc_hf.data.schema import validate
from gacc_hf.results.folder import verify_folder
from gacc_hf.results.layout import RunResults
from tests.helpers.paths import ROOT

README = ROOT / "README.md"
RUNS = ROOT / "docs" / "results"
# the README table of each run, found by the start of its header line
HEAD = "| compressor | condition | ratio | Micro [95% CI] | Macro | evidence recall [95% CI] |"
TABLES = {  # (header start, last column)
    "main": (f"{HEAD} evidence Macro |", "evidence_macro"),
    "baselines": (f"{HEAD} own − none ΔMicro pp [95% CI] |", "gap"),
}
NAMES = {
    "full-context (upper bound)": "full-context",
    "oracle (upper bound)": "oracle",
    "closed-book (floor)": "closed-book",
    "smollm2 (notes)": "smollm2",
}


def table_rows(text: str, header: str) -> list[list[str]]:
    """The cells of the Markdown table whose header line starts with `header`, separator line skipped."""
    lines = text.splitlines()
    (start,) = [i for i, line in enumerate(lines) if line.startswith(header)]
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def _ci(row: dict, key: str) -> str:
    return f"{row[key]:.3f} [{row[f'{key}_ci_low']:.3f}, {row[f'{key}_ci_high']:.3f}]"


def _pp(value: float) -> str:
    return f"{100 * value:+.1f}".replace("-", "−")


def _gap(gap: dict) -> str:
    return f"{_pp(gap['micro_diff'])} [{_pp(gap['micro_diff_ci_low'])}, {_pp(gap['micro_diff_ci_high'])}]"


def _shown(cells: list[str]) -> list[str]:
    """A README row as compared: bold marks and a trailing remark ("(goal-blind)") of its last cell set aside."""
    return [*cells[:-1], re.sub(r"\s*\([^)]*\)$", "", cells[-1]).strip("*")]


def readme_cells(run: RunResults, rows: list[list[str]], last: str) -> list[tuple[list[str], list[str]]]:
    """(README cells, the run's cells printed as the README prints them) per README row.

    `last` names the table's last column: `evidence_macro`, or `gap` (own − none ΔMicro on own rows, empty on
    the others).
    """
    scores = {(s["compressor"], s["condition"], f"{s['ratio']:g}"): s for s in run.scores}
    gaps = {g["compressor"]: g for g in run.payload["gaps"] if g["gap"] == "own-none"}
    pairs = []
    for cells in rows:
        name = NAMES.get(cells[0], cells[0])
        s = scores[(name, cells[1], cells[2])]
        expected = [cells[0], s["condition"], f"{s['ratio']:g}", _ci(s, "micro"), f"{s['macro']:.3f}"]
        expected.append(_ci(s, "evidence_micro"))
        if last == "evidence_macro":
            expected.append(f"{s['evidence_macro']:.3f}")
        else:
            expected.append(_gap(gaps[name]) if s["condition"] == "own" else "")
        pairs.append((_shown(cells), expected))
    return pairs


@pytest.fixture(scope="module")
def readme() -> str:
    return README.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(TABLES))
def test_the_recorded_run_passes_every_check_and_is_a_whole_run_of_the_bundled_sample(name):
    run = verify_folder(RUNS / name)
    assert run.payload["integrity"] == {"budget_violations": 0, "count_errors": 0, "exposures": 0}
    assert run.config["limit"] is None and not run.payload["errors"]
    assert run.config["data"]["fingerprint"] == fingerprint(validate(gacc_hf.load_sample("judge")))


@pytest.mark.parametrize("name", sorted(TABLES))
def test_every_cell_of_the_readme_table_is_the_recorded_runs(name, readme):
    run = verify_folder(RUNS / name)
    header, last = TABLES[name]
    rows = table_rows(readme, header)
    for cells, expected in readme_cells(run, rows, last):
        assert cells == expected, f"README table of docs/results/{name}: row {cells[:3]}"
    shown = {(NAMES.get(c[0], c[0]), c[1]) for c in rows}
    assert shown == {(s["compressor"], s["condition"]) for s in run.scores}  # no row left out, none added
    calls = run.payload["calls"]
    assert f"{calls['compressor']:,} compressor, {calls['reader']:,} reader" in re.sub(r"\s+", " ", readme)


def test_an_edited_readme_number_is_caught(readme):
    run = verify_folder(RUNS / "baselines")
    header, last = TABLES["baselines"]
    rows = table_rows(readme, header)
    assert all(cells == expected for cells, expected in readme_cells(run, rows, last))
    edited = [list(cells) for cells in rows]
    edited[4][3] = edited[4][3].replace("0.071", "0.077")  # goal-lines own: one Micro digit
    edited[8][6] = "+6.4 [−1.9, +14.2]"  # embed own: its gap
    wrong = [cells[:2] for cells, expected in readme_cells(run, edited, last) if cells != expected]
    assert wrong == [["goal-lines", "own"], ["embed", "own"]]


LANGUAGE_HEAD = "| language | memory | Micro [95% CI] | Macro | evidence recall [95% CI] | questions |"
MEMORIES = {"full source": "full", "oracle, r = 0.2": "oracle"}


def test_the_readme_language_table_is_the_bilingual_runs(readme):
    run = verify_folder(RUNS / "bilingual")
    assert run.payload["integrity"] == {"budget_violations": 0, "count_errors": 0, "exposures": 0}
    assert run.config["limit"] is None and not run.payload["errors"]
    by_language = {(s["language"], s["condition"]): s for s in run.payload["scores_by_language"]}
    rows = table_rows(readme, LANGUAGE_HEAD)
    assert {(c[0], MEMORIES[c[1]]) for c in rows} == set(by_language)  # every language and ceiling, no other
    for cells in rows:
        s = by_language[(cells[0], MEMORIES[cells[1]])]
        expected = [cells[0], cells[1], _ci(s, "micro"), f"{s['macro']:.3f}", _ci(s, "evidence_micro")]
        assert cells == [*expected, str(s["n_questions"])], f"README language table: row {cells[:2]}"


OUTCOME_HEAD = "| compressor | condition | ratio | right | guessed | missed | lost |"


def test_the_readme_outcome_table_and_retention_are_the_main_runs(readme):
    run = verify_folder(RUNS / "main")
    shares = {(s["compressor"], s["condition"], f"{s['ratio']:g}"): s for s in run.payload["outcomes"]}
    rows = table_rows(readme, OUTCOME_HEAD)
    assert {(NAMES.get(c[0], c[0]), c[1], c[2]) for c in rows} == set(shares)  # every cell, no other
    for cells in rows:
        s = shares[(NAMES.get(cells[0], cells[0]), cells[1], cells[2])]
        assert cells[3:] == [_ci(s, k) for k in ("right", "guessed", "missed", "lost")], f"outcome row {cells[:3]}"
    retention = {(r["compressor"], r["condition"]): r for r in run.payload["retention"]}
    text = re.sub(r"\s+", " ", readme)
    for condition in ("own", "none"):
        shown = f"**{_ci(retention[('embed', condition)], 'retention')}** for `embed` {condition}"
        assert shown in text, shown


AUC_HEAD = "| compressor | condition | ratios | Micro AUC [95% CI] | Evidence AUC [95% CI] |"


def test_the_results_guide_auc_table_and_difference_are_the_curve_runs():
    from gacc_hf.scoring.auc import paired_auc

    run = verify_folder(RUNS / "curve")
    guide = (ROOT / "docs" / "results-and-publishing.md").read_text(encoding="utf-8")
    areas = {(r["compressor"], r["condition"]): r for r in run.payload["auc"]}
    rows = table_rows(guide, AUC_HEAD)
    assert {(c[0].strip("`"), c[1]) for c in rows} == set(areas)
    for cells in rows:
        r = areas[(cells[0].strip("`"), cells[1])]
        assert cells[2:] == [", ".join(f"{x:g}" for x in r["ratios"]), _ci(r, "micro_auc"), _ci(r, "evidence_auc")]
    side = {name: [a for a in run.answers if a["compressor"] == name] for name in ("truncate", "embed")}
    n_boot, seed = run.config["n_bootstrap"], run.config["seed"]
    (d,) = paired_auc(side["truncate"], side["embed"], n_boot, seed)
    shown = f"**{100 * d['auc_diff']:+.1f} [{100 * d['auc_diff_ci_low']:+.1f}, {100 * d['auc_diff_ci_high']:+.1f}]**"
    assert shown in re.sub(r"\s+", " ", guide), shown
    retention = {r["ratio"]: r["retention"] for r in run.payload["retention"] if r["compressor"] == "embed"}
    assert f"from {retention[0.1]:.3f} at r = 0.1 to {retention[0.3]:.3f} at r = 0.3" in re.sub(r"\s+", " ", guide)
