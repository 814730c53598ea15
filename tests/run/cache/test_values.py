import pytest

from gacc_hf.run.cache.values import usual_shape, value_problem

VALUES = [
    ("answer", {"answer": "47 minutes"}, True, True),
    ("answer", {"answer": "四十七分钟"}, True, True),
    ("answer", {"answer": "a", "error": "reader failed"}, False, False),
    ("answer", {"answer": 5}, False, False),
    ("verdict", {"correct": False}, True, True),
    ("verdict", {"correct": 1}, False, False),
    ("matches", {"evidence": "0110", "exposed": [], "seal": "62ba0819a0fbff30"}, True, True),
    ("matches", {"evidence": "0110", "exposed": []}, False, True),  # unsealed (an older format): read in full
    ("matches", {"evidence": "0110", "exposed": [], "seal": 7}, False, False),
    ("matches", {"evidence": "1", "exposed": [["question", "主库停写了多久？"]]}, False, True),  # usual: none exposed
    ("matches", {"evidence": "1", "exposed": [["reference", 7]]}, False, False),
    ("matches", {"evidence": "12", "exposed": []}, False, False),
    ("matches", {"evidence": "1", "exposed": [], "extra": 1}, False, False),
    # a model method's value carries its call's usage; a malformed one makes the value wrong-shaped
    (
        "answer",
        {"answer": "47 minutes", "usage": {"prompt_tokens": 9, "completion_tokens": 2, "source": "server"}},
        True,
        True,
    ),
    (
        "verdict",
        {"correct": True, "usage": {"prompt_tokens": 9, "completion_tokens": 1, "source": "local"}},
        True,
        True,
    ),
    (
        "answer",
        {"answer": "四十七", "usage": {"prompt_tokens": -9, "completion_tokens": 2, "source": "server"}},
        False,
        False,
    ),
    ("answer", {"answer": "a", "usage": {"prompt_tokens": 9, "completion_tokens": 2}}, False, False),
    (
        "verdict",
        {"correct": True, "usage": {"prompt_tokens": 9, "completion_tokens": 1, "source": "guess"}},
        False,
        False,
    ),
    ("answer", {"answer": "a", "cost": 3}, False, True),  # another extra field: the full check's call
]


@pytest.mark.parametrize(("kind", "value", "usual", "usable"), VALUES)
def test_the_usual_shape_is_accepted_only_where_the_full_check_accepts(kind, value, usual, usable):
    assert usual_shape(kind)(value) is usual
    assert (value_problem(kind, value) is None) is usable
    assert not usual or usable  # the in-line test never accepts what the full check refuses


def test_kinds_without_a_usual_shape_get_the_full_check_only():
    assert usual_shape("memory") is None and usual_shape("count") is None
    assert value_problem("memory", {"memory": "m", "truncated": True}) is None
    assert (
        value_problem(
            "memory", {"memory": "m", "usage": {"prompt_tokens": 1, "completion_tokens": 1, "source": "local"}}
        )
        is None
    )
    assert "usage" in value_problem("memory", {"memory": "m", "usage": {"prompt_tokens": "1"}})
    assert value_problem("count", -1) == "a count must be a non-negative int, got -1"
