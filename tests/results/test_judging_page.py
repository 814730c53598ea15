"""`judging_blocks`: the page's judges and conclusions part from hand-made sections, where one says why it has no
figures, a language has its own table and answers were left out; none at all for a run without the sections."""

from __future__ import annotations

from gacc_hf.results.judging_page import judging_blocks


def _figure(name: str, value: float | None, why: str | None = None) -> dict:
    return {
        name: value,
        f"{name}_ci_low": None,
        f"{name}_ci_high": None,
        f"{name}_undefined": why,
        f"{name}_ci_note": None,
    }


def _part(language: str | None = None) -> dict:
    pair = {"judge_a": "exact", "judge_b": "f1", **_figure("agreement", 0.75), **_figure("kappa", 0.5)}
    return {
        **({"language": language} if language else {}),
        "pairs": [pair],
        "all": _figure("alpha", None, "one verdict"),
    }


def test_a_run_without_the_sections_has_no_blocks():
    assert judging_blocks({"scores": [], "gaps": []}) == []


def test_undefined_sections_say_why_without_a_table():
    blocks = judging_blocks(
        {"agreement": [{"reader": "r", "undefined": "every answer failed"}], "survival": {"undefined": "other cells"}}
    )
    assert [(b["title"], b["intro"], b["head"], b["rows"]) for b in blocks] == [
        ("Judge agreement, reader r", "none: every answer failed", [], []),
        ("Do conclusions survive?", "no survival section: other cells", [], []),
    ]


def test_each_language_has_its_table_and_left_out_answers_are_said():
    part = {"reader": "r", "n_answers": 4, "n_left_out": 2, **_part(), "by_language": [_part("zh")]}
    blocks = judging_blocks({"agreement": [part]})
    assert [b["title"] for b in blocks] == ["Judge agreement, reader r", "Judge agreement, reader r (zh)"]
    assert (
        blocks[0]["intro"] == "4 answers judged by every judge (2 left out: a call failed)" and blocks[1]["intro"] == ""
    )
    assert blocks[1]["head"][2] == "agreement (zh) [95% CI]"
    assert blocks[1]["rows"] == [["exact", "f1", "0.750", "0.500"]]
    assert blocks[1]["after"] == "Krippendorff's α over all judges (zh): — (one verdict)"
