"""`import:` specs with options: keyword arguments of the class's constructor, keying the cache."""

from __future__ import annotations

import sys
import textwrap

import pytest

from gacc_hf.data.synthetic import synthetic_rows
from gacc_hf.methods.user_import import load
from gacc_hf.protocol import revision_of
from tests.helpers.runs import rules_run

MODULE = textwrap.dedent(
    """
    class FirstLines:
        def __init__(self, lines=3, label="", exact=False):
            self.lines, self.label, self.exact = lines, label, exact

        def __call__(self, item):
            return "\\n".join(item.context.splitlines()[: self.lines])


    class Versioned(FirstLines):
        revision = "first-lines-v1"


    def first_line(item):
        return item.context.splitlines()[0]
    """
)


@pytest.fixture
def module(tmp_path, monkeypatch):
    name = f"optioned_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_options_are_constructor_arguments_with_their_types(module):
    method = load(f"{module}:FirstLines?lines=5&label=中文 goal&exact=true")
    assert (method.lines, method.label, method.exact) == (5, "中文 goal", True)
    assert method.gacc_options == {"exact": True, "label": "中文 goal", "lines": 5}
    assert not hasattr(load(f"{module}:FirstLines"), "gacc_options")  # no options: the instance as before


def test_options_key_the_revision(module):
    plain, five, again = (load(f"{module}:FirstLines{q}") for q in ("", "?lines=5", "?lines=5"))
    assert len({revision_of(plain), revision_of(five)}) == 2 and revision_of(five) == revision_of(again)
    versioned = load(f"{module}:Versioned?lines=5&label=x")
    assert revision_of(versioned) == "first-lines-v1?label=x&lines=5"  # an explicit revision gets them appended
    assert revision_of(load(f"{module}:Versioned")) == "first-lines-v1"


def test_a_run_with_other_options_is_not_served_from_the_cache(module, tmp_path):
    rows = synthetic_rows(seed=2, contexts=2)
    run = {"ratios": [1.0], "conditions": ["own"], "cache_dir": str(tmp_path / "cache")}
    first = rules_run(rows, compressor=f"import:{module}:Versioned?lines=1", **run)
    assert first.calls["compressor"] > 0
    assert rules_run(rows, compressor=f"import:{module}:Versioned?lines=1", **run).calls["compressor"] == 0
    assert rules_run(rows, compressor=f"import:{module}:Versioned?lines=9", **run).calls["compressor"] > 0


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        (":first_line?lines=2", "options are a class's constructor arguments, and first_line is a function"),
        (":FirstLines?width=2", r"cannot be built with options \['width'\] .*unexpected keyword argument 'width'"),
        (":FirstLines?lines", "options must be key=value pairs joined by '&'"),
        (":FirstLines?lines=1&lines=2", r"option names must be distinct Python identifiers, got \['lines', 'lines'\]"),
    ],
)
def test_bad_options_are_refused_naming_the_spec(module, tail, message):
    with pytest.raises(ValueError, match=message) as info:
        load(f"{module}{tail}")
    assert f"import:{module}{tail}" in str(info.value)
