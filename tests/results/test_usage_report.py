"""Usage and cost as text: report tables, the run's summary line, and folders written before usage existed."""

from __future__ import annotations

from gacc_hf.results.folder import read_folder
from gacc_hf.results.report import render_report
from gacc_hf.results.usage_report import NOT_RECORDED, cost_table, money, usage_line, usage_table
from tests.helpers.paths import ROOT

USAGE = {
    "roles": {
        "compressor": {"truncate": {"calls": 4, "prompt_tokens": 0, "completion_tokens": 0, "source": "none"}},
        "reader": {"openai:m": {"calls": 8, "prompt_tokens": 800, "completion_tokens": 16, "source": "local"}},
        "judge": {"exact": {"calls": 8, "prompt_tokens": 0, "completion_tokens": 0, "source": "none"}},
    },
    "sent": {"reader": {"openai:m": {"calls": 3, "prompt_tokens": 300, "completion_tokens": 6, "source": "local"}}},
    "counters": {"reader": {"openai:m": "cl100k_base"}},
}


def test_the_usage_table_and_line_say_where_counts_came_from_and_what_this_run_sent() -> None:
    table = usage_table(USAGE)
    assert "| reader | `openai:m` | 8 | 800 | 16 | local (cl100k_base) | 3 calls, 300 + 6 |" in table
    assert "| judge | `exact` | 8 | 0 | 0 | none | 0 calls, 0 + 0 |" in table
    assert usage_line(USAGE) == (
        "usage (prompt+completion tokens): compressor 0+0, reader 800+16, judge 0+0; "
        "sent by this run: 3 calls, 300+6 tokens"
    )


def test_cost_figures_carry_their_currency() -> None:
    cost = {
        "currency": "USD",
        "total": 0.0012,
        "sent": 0.00045,
        "roles": {"reader": {"openai:m": 0.0012}, "compressor": {"truncate": 0.0}, "judge": {"exact": 0.0}},
        "sent_roles": {"reader": {"openai:m": 0.00045}},
        "cells": [
            {
                "compressor": "truncate",
                "condition": "own",
                "ratio": 0.2,
                "compressor_cost": 0.0,
                "reader_cost": 0.0012,
                "judge_cost": 0.0,
                "total": 0.0012,
                "answered": 4,
                "per_question": 0.0003,
                "break_even_questions": 1,
            }
        ],
    }
    assert usage_line(USAGE, cost).endswith("; cost 0.0012 USD (sent by this run 0.00045 USD)")
    assert (
        "| reader | `openai:m` | 8 | 800 | 16 | local (cl100k_base) | 3 calls, 300 + 6 | 0.0012 USD | 0.00045 USD |"
        in (usage_table(USAGE, cost))
    )
    assert "| `truncate` | own | 0.2 | 0 USD | 0.0012 USD | 0 USD | 0.0012 USD | 4 | 0.0003 USD | 1 |" in cost_table(
        cost
    )
    assert cost_table(None) == "" and money(None, "USD") == "n/a"


def test_a_folder_written_before_usage_was_recorded_says_so() -> None:
    run = read_folder(ROOT / "tests" / "fixtures" / "schema2" / "main")
    assert run.payload["schema_version"] == 2 and run.payload["usage"] is None
    assert NOT_RECORDED in render_report(run)
    assert usage_line(None) == f"usage: {NOT_RECORDED}"
