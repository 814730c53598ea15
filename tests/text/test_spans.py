"""Spans of a source that a memory kept, and where a reference occurs: English, Chinese and hostile text."""

from __future__ import annotations

import pytest

from gacc_hf.text.spans import MAX_MARKS, kept_spans, merge_spans, reference_marks

EN = "Summary\n\nThe disk filled at 09:41. Failover ran. It lasted 45 minutes.\nOwner: Priya."
ZH = "概要\n\n磁盘在 09:41 写满了。随后自动切换。持续 45 分钟。\n负责人：周嘉宁。"


@pytest.mark.parametrize(
    ("source", "memory", "kept"),
    [
        (EN, "The disk filled at 09:41.\nOwner: Priya.", ["The disk filled at 09:41.", "Owner: Priya."]),
        (ZH, "磁盘在 09:41 写满了。\n负责人：周嘉宁。", ["磁盘在 09:41 写满了。", "负责人：周嘉宁。"]),
        (EN, "It lasted 45 minutes. Summary", ["Summary", "It lasted 45 minutes."]),  # out of source order
        (ZH, "持续 45 分钟。概要", ["概要", "持续 45 分钟。"]),
    ],
)
def test_extracted_sentences_are_found_verbatim(source, memory, kept):
    spans, missing = kept_spans(source, memory)
    assert [source[a:b] for a, b in spans] == kept and missing == []


@pytest.mark.parametrize(
    ("source", "memory", "span"),
    [(EN, "Summary\n\nThe disk fil", (0, 21)), (ZH, "概要\n\n磁盘在 09", (0, 10))],  # a truncated prefix
)
def test_a_memory_that_is_one_piece_of_the_source_is_one_span(source, memory, span):
    assert kept_spans(source, memory) == ([span], [])


@pytest.mark.parametrize(
    ("source", "memory", "missing"),
    [
        (EN, "The disk filled at 09:41. The outage was short.", ["The outage was short."]),
        (ZH, "随后自动切换。故障很短。", ["故障很短。"]),
        (EN, "disk full; failover; 45 min", ["disk full; failover; 45 min"]),  # abstractive: nothing verbatim
    ],
)
def test_text_not_in_the_source_is_returned_apart(source, memory, missing):
    assert kept_spans(source, memory)[1] == missing


@pytest.mark.parametrize(
    ("source", "memory", "kept"),
    [
        # the second line starts before the end of the first (the cursor) and ends after it
        (EN, "disk filled\nThe disk filled at", ["The disk filled at"]),
        (ZH, "09:41 写满了\n磁盘在 09:41 写满了。随后", ["磁盘在 09:41 写满了。随后"]),
        # the second line lies wholly before the first
        (EN, "Owner: Priya.\nSummary", ["Summary", "Owner: Priya."]),
        (ZH, "负责人：周嘉宁。\n概要", ["概要", "负责人：周嘉宁。"]),
    ],
)
def test_a_line_before_the_previous_one_is_found_where_it_starts(source, memory, kept):
    spans, missing = kept_spans(source, memory)
    assert [source[a:b] for a, b in spans] == kept and missing == []


def test_an_empty_memory_keeps_nothing():
    assert kept_spans(EN, "") == ([], []) and kept_spans(ZH, " \n ") == ([], [])


def test_hostile_text_is_found_like_any_other():
    line = "x" * 100_000
    source = f"bell\x07 escape\x1b[31m\nשלום עולם مرحبا\n{line}\n<script>alert(1)</script>"
    spans, missing = kept_spans(source, f"שלום עולם مرحبا\n{line}")
    assert [source[a:b] for a, b in spans] == [f"שלום עולם مرحبا\n{line}"] and missing == []
    assert kept_spans(source, "bell\x07 escape\x1b[31m\n<script>alert(1)</script>")[1] == []


def test_spans_apart_only_by_whitespace_are_joined_and_others_not():
    source = "ab  cd, ef 数据\n集"
    assert merge_spans(source, [(4, 6), (0, 2)]) == [(0, 6)]
    assert merge_spans(source, [(8, 10), (0, 2), (4, 6)]) == [(0, 6), (8, 10)]  # the comma stays a gap
    assert merge_spans(source, [(11, 13), (14, 15)]) == [(11, 15)]


@pytest.mark.parametrize(
    ("source", "reference", "found"),
    [
        ("It lasted 145 minutes, then 45\n Minutes.", "45 minutes", ["45\n Minutes"]),
        ("The LEDGER-PG-02 node; ledger-pg-021", "ledger-pg-02", ["LEDGER-PG-02"]),
        ("加载数据集时出错，数据集很大", "数据集", ["数据集", "数据集"]),
        ("请使用Dataset加载", "Dataset", ["Dataset"]),  # no boundary needed next to Han
        ("持续 145 分钟，不是 45 分钟", "45 分钟", ["45 分钟"]),
        ("nothing here", "   ", []),
    ],
)
def test_references_are_marked_where_they_occur(source, reference, found):
    assert [source[a:b] for a, b in reference_marks(source, reference)] == found


def test_marks_stop_at_the_cap():
    assert len(reference_marks("a " * (MAX_MARKS + 5), "a")) == MAX_MARKS
    assert len(reference_marks("a " * (MAX_MARKS - 1), "a")) == MAX_MARKS - 1
