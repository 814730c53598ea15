"""Text hygiene: unencodable text and ambiguous IDs are caught where they enter."""

from __future__ import annotations

import pytest

from gacc_hf.text.hygiene import encoding_problem, id_key, id_problem, strip_format, visible


def test_encoding_problem_accepts_any_encodable_string_and_names_a_surrogate():
    for text in ("", "plain", "ü 🙂 \u0301", "\ufffd"):
        assert encoding_problem(text) is None
    assert encoding_problem("a\ud800") == "holds a lone surrogate U+D800 at character 1 (not encodable as UTF-8)"
    assert encoding_problem("\udfff").startswith("holds a lone surrogate U+DFFF at character 0")


def test_ids_collide_by_case_and_normalisation_only():
    assert id_key("Q1") == id_key("q1") == id_key("\uff31\uff11")
    assert id_key("caf\u00e9") == id_key("cafe\u0301")
    assert id_key("q1") != id_key("q2") and id_key("a-b") != id_key("a_b")


@pytest.mark.parametrize(
    ("identifier", "problem"),
    [
        ("ctx ", "has leading or trailing whitespace"),
        ("\nctx", "has leading or trailing whitespace"),
        ("a\u200bb", "holds a control character U+200B"),
        ("a\x00b", "holds a control character U+0000"),
        ("g\ud800", "holds a lone surrogate U+D800"),
    ],
)
def test_id_problems(identifier, problem):
    assert id_problem(identifier).startswith(problem)


def test_ordinary_ids_have_no_problem():
    for identifier in ("pm-db-failover/g1/q1", "Über 1", "問題-3"):
        assert id_problem(identifier) is None


@pytest.mark.parametrize(
    ("text", "stripped"),
    [
        ("da\u200bta", "data"),  # zero-width space
        ("数\u200d据", "数据"),  # zero-width joiner
        ("data\u00adset", "dataset"),  # soft hyphen
        ("\u202e45 minutes\u202c", "45 minutes"),  # right-to-left override and its pop
        ("\u2067abc\u2069", "abc"),  # bidi isolates
        ("\u0643\u0640\u0640\u062a\u0627\u0628", "\u0643\u062a\u0627\u0628"),  # Arabic tatweel
        ("\ufeffplain text", "plain text"),  # a byte-order mark
        ("plain 数据 ✓ 🎉", "plain 数据 ✓ 🎉"),  # nothing to remove
    ],
)
def test_strip_format_removes_only_invisible_format_characters(text, stripped):
    assert strip_format(text) == stripped


def test_visible_text_holds_more_than_whitespace_and_format_characters():
    assert not any(visible(t) for t in ("", "   ", "\u200b" * 3, " \u00ad\n\u202e ", "\u0640"))
    assert all(visible(t) for t in ("a", "。", "🎉", "\u200b数", "-"))
