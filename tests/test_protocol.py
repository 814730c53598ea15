import dataclasses

import pytest

from gacc_hf.protocol import CompressorInput, JudgeInput, ReaderInput, call_many, method_name, revision_of


def test_inputs_carry_only_their_fields_and_are_frozen():
    assert [f.name for f in dataclasses.fields(CompressorInput)] == ["context", "goal", "token_budget"]
    assert [f.name for f in dataclasses.fields(ReaderInput)] == ["memory", "question"]
    assert [f.name for f in dataclasses.fields(JudgeInput)] == ["question", "answer", "references", "source"]
    item = CompressorInput("ctx", "goal", 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.goal = "question?"  # type: ignore[misc]
    with pytest.raises((AttributeError, TypeError)):
        item.question = "smuggled"  # type: ignore[attr-defined]


def test_revision_prefers_explicit_attribute():
    class M:
        revision = "v7"

        def __call__(self, item):
            return ""

    assert revision_of(M()) == "v7"


def first(item):
    return item.context[:10]


def test_revision_derived_from_source_changes_with_code(tmp_path, monkeypatch):
    import importlib
    import linecache

    monkeypatch.syspath_prepend(str(tmp_path))
    module = tmp_path / "my_compressor.py"
    module.write_text("def compress(item):\n    return item.context[:10]\n")
    mod = importlib.import_module("my_compressor")
    before = revision_of(mod.compress)
    module.write_text("def compress(item):\n    return item.context[:20]\n")
    linecache.clearcache()
    mod = importlib.reload(mod)
    after = revision_of(mod.compress)
    assert before.startswith("my_compressor.compress@") and after.startswith("my_compressor.compress@")
    assert before != after
    assert revision_of(first) == revision_of(first)  # stable for unchanged code


def test_method_name_and_call_many_uses_batch():
    class Batched:
        name = "b"
        calls = 0

        def __call__(self, item):
            raise AssertionError("batch() must be preferred")

        def batch(self, items):
            Batched.calls += 1
            return [i.question.upper() for i in items]

    out = call_many(Batched(), [ReaderInput("m", "a"), ReaderInput("m", "b")])
    assert out == ["A", "B"] and Batched.calls == 1
    assert method_name(first) == "first"


def test_batch_with_wrong_length_is_an_error():
    class Bad:
        def __call__(self, item):
            return ""

        def batch(self, items):
            return [""]

    with pytest.raises(ValueError, match="2 inputs"):
        call_many(Bad(), [ReaderInput("m", "a"), ReaderInput("m", "b")])


def head(item, n=10):
    return item.context[: n * 4]


def make_head(n):
    def compress(item):
        return item.context[: n * 4]

    return compress


class Head:
    def __init__(self, n):
        self.n = n

    def __call__(self, item):
        return item.context[: self.n * 4]

    def compress(self, item):
        return self(item)


class Model:  # stands for a loaded model: no canonical form
    pass


class HoldsModel:
    def __init__(self):
        self.model = Model()

    def __call__(self, item):
        return ""


def test_revision_binds_partial_arguments_closure_cells_and_instance_state():
    import functools

    pairs = [
        (functools.partial(head, n=10), functools.partial(head, n=100000)),
        (make_head(10), make_head(100000)),
        (Head(10), Head(100000)),
        (Head(10).compress, Head(100000).compress),
    ]
    for small, large in pairs:
        assert revision_of(small) != revision_of(large)
    # equal state, separate objects: one revision, so a rerun hits the cache
    assert revision_of(functools.partial(head, n=10)) == revision_of(functools.partial(head, n=10))
    assert revision_of(make_head(10)) == revision_of(make_head(10))
    assert revision_of(Head(10)) == revision_of(Head(10))
    assert revision_of(Head(10).compress) == revision_of(Head(10).compress)
    # plain data is hashed canonically: dict order does not matter
    a, b = Head({"x": 1, "y": [1, 2]}), Head({"y": [1, 2], "x": 1})
    assert revision_of(a) == revision_of(b)


def test_state_that_cannot_be_hashed_needs_an_explicit_revision():
    from gacc_hf.protocol import MethodIdentityError

    with pytest.raises(MethodIdentityError, match=r"'HoldsModel'.*Model.*`revision`"):
        revision_of(HoldsModel())
    declared = HoldsModel()
    declared.revision = "my-model@weights-sha"
    assert revision_of(declared) == "my-model@weights-sha"
