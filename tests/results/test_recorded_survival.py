"""`docs/results/survival`: four compressors read by SmolLM2 through transformers and through llama.cpp, each
reader's answers judged by three judges, in one run; the README's rankings and the claims it makes of them.

The rankings are recounted here from the folder's answer rows (Micro per setting and cell), not read from the
survival section the run stores; the README must print both.
"""

from __future__ import annotations

import re
from collections import defaultdict

from gacc_hf.results.folder import verify_folder
from tests.helpers.paths import ROOT
from tests.results.test_recorded_runs import table_rows

FOLDER = ROOT / "docs" / "results" / "survival"
HEAD = "| reader | judge | r = 0.1 | r = 0.2 |"
READERS = {"transformers": "smollm2", "llama.cpp, Q4_1": "openai:smollm2-q4_1"}


def micro_by_setting() -> dict[tuple[str, str, float], dict[str, float]]:
    """{(reader, judge, ratio): {compressor: Micro}} counted from the answer rows."""
    right: dict[tuple, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for row in verify_folder(FOLDER).answers:
        if row["condition"] == "own":
            right[(row["reader"], row["judge"], row["ratio"])][row["compressor"]].append(bool(row["correct"]))
    return {k: {c: sum(v) / len(v) for c, v in cells.items()} for k, cells in right.items()}


def ranking(micro: dict[str, float]) -> str:
    """`a > b = c`: best first, ties joined by `=` in the order the run lists the compressors."""
    order = ["truncate", "goal-lines", "bm25", "embed"]
    levels = sorted({round(v, 12) for v in micro.values()}, reverse=True)
    return " > ".join(" = ".join(c for c in order if round(micro[c], 12) == level) for level in levels)


def test_the_run_holds_six_settings_made_from_the_cache_with_every_counter_at_zero():
    run = verify_folder(FOLDER)
    assert run.payload["integrity"] == {"budget_violations": 0, "count_errors": 0, "exposures": 0}
    assert run.payload["survival"]["settings"] == [
        f"reader {r}, judge {j}" for r in READERS.values() for j in ("contains", "f1", "smollm2")
    ]
    assert len(run.answers) == 2 * 3 * 4 * 2 * 155  # readers x judges x compressors x ratios x questions


def test_the_readme_rankings_are_the_runs():
    micro = micro_by_setting()
    rows = table_rows((ROOT / "README.md").read_text(encoding="utf-8"), HEAD)
    assert [(r[0], r[1]) for r in rows] == [(r, f"`{j}`") for r in READERS for j in ("contains", "f1")]
    for reader, judge, *shown in rows:
        key = (READERS[reader], judge.strip("`"))
        assert shown == [ranking(micro[(*key, ratio)]) for ratio in (0.1, 0.2)], f"README ranking {reader} {judge}"
    # the smollm2 judge ranks nothing: every compressor at 0 under both readers
    assert all(v == 0 for r in READERS.values() for ratio in (0.1, 0.2) for v in micro[(r, "smollm2", ratio)].values())


def test_the_readme_claims_are_the_runs_survival_section():
    text = re.sub(r"\s+", " ", (ROOT / "README.md").read_text(encoding="utf-8"))
    micro = micro_by_setting()
    for reader, (bm25, embed) in {"smollm2": ("0.103", "0.097"), "openai:smollm2-q4_1": ("0.103", "0.123")}.items():
        cell = micro[(reader, "contains", 0.1)]
        assert (f"{cell['bm25']:.3f}", f"{cell['embed']:.3f}") == (bm25, embed)
    sections = {s["ratio"]: s for s in verify_folder(FOLDER).payload["survival"]["sections"]}
    ranked = [f"reader {r}, judge {j}" for r in READERS.values() for j in ("contains", "f1")]
    for ratio, shown in ((0.1, "0.55–1.00"), (0.2, "0.91–1.00")):
        taus = [
            t["tau"]
            for t in sections[ratio]["tau"]
            if t["setting_a"] in ranked and t["setting_b"] in ranked and t.get("tau") is not None
        ]
        assert len(taus) == 6 and f"{min(taus):.2f}–{max(taus):.2f}" == shown
        assert f"{shown} at r = {ratio:g}" in text
    pairs = {(p["a"], p["b"]): p for p in sections[0.2]["pairs"]}
    assert pairs[("truncate", "embed")]["k_ci_above_zero"] == pairs[("goal-lines", "embed")]["k_ci_above_zero"] == 4
    assert all(
        p["k_ci_above_zero"] == 0
        for s in sections.values()
        for p in s["pairs"]
        if {p["a"], p["b"]} == {"bm25", "embed"}
    )
