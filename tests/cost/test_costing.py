"""Prices of a run's methods and its cost per role, cell, answered question, and the break-even count."""

from __future__ import annotations

import pytest

from gacc_hf.cost.cells import cell_usage
from gacc_hf.cost.costing import NEVER, NO_FULL, break_even, cost_document, price_methods
from gacc_hf.cost.prices import parse_prices
from tests.cost.test_cells import KEPT, LEDGER, MEMORIES, ROWS

# per million tokens: a compressor token costs 1 (completion 2), a reader token 1 (completion 10)
PRICES = parse_prices(
    {"currency": "USD", "prices": {"c": {"prompt": 1e6, "completion": 2e6}, "r": {"prompt": 1e6, "completion": 1e7}}}
)


def test_a_served_method_without_a_price_is_refused_naming_how_it_was_looked_up() -> None:
    with pytest.raises(
        ValueError, match=r"no price for the judge 'openai:m'.*'openai:m@http://h:1/v1', 'openai:m', 'm'"
    ):
        price_methods([("judge", "openai:m@http://h:1/v1", "openai:m")], PRICES)


def test_a_local_method_missing_from_the_file_costs_nothing_and_a_served_one_is_found_by_model() -> None:
    prices = parse_prices({"prices": {"m": {"prompt": 1, "completion": 2}}})
    doc = price_methods([("judge", "exact", "exact"), ("reader", "openai:m@http://h:1/v1", "openai:m")], prices)
    assert doc["methods"] == {"judge": {"exact": None}, "reader": {"openai:m": {"prompt": 1.0, "completion": 2.0}}}


def test_break_even_counted_by_hand() -> None:
    # C = 120, R_memory = 30, R_full = 70: 120 + 4·30 = 240 < 280, and at 3: 210 = 210 is not less
    assert break_even(120, 30, 70) == 4
    assert break_even(0, 30, 70) == 1
    assert break_even(120, 70, 70) == NEVER and break_even(120, 80, 70) == NEVER
    assert break_even(120, 30, None) == NO_FULL


def _usage() -> dict:
    roles = {
        "compressor": {"c": {"calls": 2, "prompt_tokens": 190, "completion_tokens": 40, "source": "server"}},
        "reader": {"r": {"calls": 6, "prompt_tokens": 220, "completion_tokens": 8, "source": "server"}},
        "judge": {"exact": {"calls": 5, "prompt_tokens": 50, "completion_tokens": 5, "source": "local"}},
    }
    return {"roles": roles, "sent": {"reader": roles["reader"]}, "cells": cell_usage(LEDGER, MEMORIES, ROWS, KEPT)}


def test_the_cost_of_a_tiny_run_counted_by_hand() -> None:
    prices = price_methods([("compressor", "c", "c"), ("reader", "r", "r"), ("judge", "exact", "exact")], PRICES)
    cost = cost_document(_usage(), prices, "r", "exact")
    # compressor 190 + 2·40 = 270; reader 220 + 10·8 = 300; the judge is not in the file: 0
    assert cost["roles"] == {"compressor": {"c": 270.0}, "reader": {"r": 300.0}, "judge": {"exact": 0.0}}
    assert (cost["total"], cost["sent"], cost["currency"]) == (570.0, 300.0, "USD")
    own, none, full = cost["cells"]
    # own: memory 100 + 2·10 = 120; reader 40 + 10·2 = 60; 2 answered questions
    assert (own["compressor_cost"], own["reader_cost"], own["judge_cost"], own["total"]) == (120, 60, 0, 180)
    assert own["per_question"] == 90
    # none: memory 90 + 2·30 = 150 shared by its 3 questions; reader 60 + 10·4 = 100
    assert (none["total"], none["per_question"]) == (250, pytest.approx(250 / 3))
    # full: reader 120 + 10·2 = 140 over 2 questions: R_full = 70
    assert full["reader_cost"] == 140 and "break_even_questions" not in full
    assert own["break_even_questions"] == 4  # 120 + n·30 < n·70
    assert none["break_even_questions"] == 5  # 150 + n·100/3 < n·70: 4 gives 283.3 > 280, 5 gives 316.7 < 350


def test_without_the_full_ceiling_break_even_is_not_computable() -> None:
    prices = price_methods([("compressor", "c", "c"), ("reader", "r", "r"), ("judge", "exact", "exact")], PRICES)
    usage = _usage()
    usage["cells"] = [c for c in usage["cells"] if c["condition"] != "full"]
    cells = cost_document(usage, prices, "r", "exact")["cells"]
    assert [c["break_even_questions"] for c in cells] == [NO_FULL, NO_FULL]
