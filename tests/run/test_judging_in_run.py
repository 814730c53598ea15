"""A run of two rule judges: their agreement in results.json, report.md and a plot, equal to hand counts on the
English and Chinese rows of `tests.run.test_settings` (whose verdicts are worked out there by hand)."""

from __future__ import annotations

import pytest

from gacc_hf.results.folder import AGREEMENT_PNG, read_folder, rebuild
from tests.run.test_settings import _run, contains, exact, first_line, last_line

# Verdicts by hand (tests/run/test_settings.py), q1 q2 in English, q3 q4 in Chinese; `exact` accepts none:
#   first_line: contains T F F T    last_line: contains T T T F
# Raw agreement = the share of answers `contains` calls wrong. κ = (p_o − p_e)/(1 − p_e) with
# p_e = p_c·p_x + (1 − p_c)(1 − p_x) and p_x = 0, so p_e = 1 − p_c = p_o: κ = 0 wherever p_e < 1.
# α (nominal, m = 2 judges over u answers): 2u values, R right, W wrong, D = answers the two split on;
# α = 1 − (2u − 1)·D / (R·W).
EXPECTED = {
    # reader: (agreement, α), then per language {language: (agreement, α)}
    "first_line": ((2 / 4, 1 - 7 * 2 / (2 * 6)), {"en": (1 / 2, 1 - 3 * 1 / (1 * 3)), "zh": (1 / 2, 0.0)}),
    "last_line": ((1 / 4, 1 - 7 * 3 / (3 * 5)), {"en": (0.0, 1 - 3 * 2 / (2 * 2)), "zh": (1 / 2, 0.0)}),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    result = _run([first_line, last_line], [contains, exact], n_bootstrap=50)
    out = tmp_path_factory.mktemp("judging") / "run"
    result.save(out)
    return out


def test_every_pair_of_judges_agreement_per_reader_and_language_equals_hand_counts(folder):
    measured = {part["reader"]: part for part in read_folder(folder).payload["agreement"]}
    assert list(measured) == ["first_line", "last_line"]
    for reader, ((agreement, alpha), languages) in EXPECTED.items():
        part = measured[reader]
        (pair,) = part["pairs"]
        assert (pair["judge_a"], pair["judge_b"], pair["n_answers"]) == ("contains", "exact", 4)
        assert pair["agreement"] == pytest.approx(agreement)
        assert pair["kappa"] == pytest.approx(0.0)
        assert part["all"]["alpha"] == pytest.approx(alpha)
        by_language = {p["language"]: p for p in part["by_language"]}
        assert set(by_language) == {"en", "zh"}
        for language, (agree, a) in languages.items():
            assert by_language[language]["pairs"][0]["agreement"] == pytest.approx(agree)
            assert by_language[language]["all"]["alpha"] == pytest.approx(a)
        low, high = pair["agreement_ci_low"], pair["agreement_ci_high"]
        assert low <= agreement <= high


def test_the_report_and_the_plot_carry_the_agreement_and_a_rebuild_keeps_them(folder):
    report = (folder / "report.md").read_text(encoding="utf-8")
    assert "## Judge agreement, reader first_line" in report
    assert "| contains | exact | 0.500 [" in report
    assert "## Judge agreement, reader last_line" in report and "| contains | exact | 0.250 [" in report
    assert "## Do conclusions survive?" in report  # four (reader, judge) settings
    png = (folder / AGREEMENT_PNG).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and f"]({AGREEMENT_PNG})" in report
    rebuild(folder)
    assert (folder / "report.md").read_text(encoding="utf-8") == report
    assert (folder / AGREEMENT_PNG).read_bytes() == png  # deterministic bytes


def test_a_run_of_one_judge_has_no_agreement_section(tmp_path):
    result = _run([first_line], [contains], n_bootstrap=0)
    doc = result.results_document()
    assert "agreement" not in doc and "survival" not in doc
    result.save(tmp_path / "one")
    assert "Judge agreement" not in (tmp_path / "one" / "report.md").read_text(encoding="utf-8")
    assert not (tmp_path / "one" / AGREEMENT_PNG).exists()
