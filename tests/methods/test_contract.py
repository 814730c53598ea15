"""One contract for every registered method (the list is tests/methods_list.py).

Output type; `batch()` (when offered) equal to one-at-a-time calls; equal outputs from a second instance;
a revision that two instances with equal settings share and a changed setting changes; budgets of 0 and
1 tokens; an empty goal, memory or answer; Unicode-heavy text (emoji, CJK, combining marks). And the
list itself: every registered name is in it (or excluded with a reason), and nothing else is.
"""

from __future__ import annotations

import pytest

from gacc_hf import CompressorInput, JudgeInput, ReaderInput, fit_to_budget
from gacc_hf.methods import BUILTINS, PREFIXES, registry
from gacc_hf.protocol import call_many, revision_of
from tests.helpers.all_methods import CASES, EXCLUDED, Case, Models, save_tiny_encoder
from tests.helpers.models import save_tiny_chat_model

CONTEXT = (
    "Postmortem: ledger outage\n\n"
    "The primary node ledger-pg-02 stopped accepting writes at 09:41 when its data volume filled up.\n"
    "Failover promoted ledger-pg-03 within a minute. PgBouncer still pointed at the old primary, so the "
    "ledger stayed read-only for 47 minutes.\n\nThe team lunch on Friday had pizza and lemon cake."
)
GOAL = "Why did the failover not restore writes?"
UNICODE = (
    "Incident 🚨🔥 summary: サーバーが停止しました。数据库已满。\n\n"
    "Cafe\u0301 re\u0301sume\u0301 na\u0308ive — the node 👩\u200d💻 restarted at ９時. Ünïcödé ok! 🇯🇵 完了。"
)
ITEMS = {
    "compressor": [
        CompressorInput(CONTEXT, GOAL, 30),
        CompressorInput(CONTEXT, "", 30),  # empty goal (the `none` condition)
        CompressorInput(UNICODE, "サーバー 👩\u200d💻 café", 20),
        CompressorInput(CONTEXT, GOAL, 1),  # one-token budget
        CompressorInput(CONTEXT, GOAL, 0),  # L = 0: the runner never calls, a direct call must still work
    ],
    "reader": [
        ReaderInput("primary: ledger-pg-02\nread-only: 47 minutes", "What was the primary?"),
        ReaderInput("", "What was the primary?"),  # empty memory
        ReaderInput(UNICODE, "What restarted at ９時? 👩\u200d💻"),
    ],
    "judge": [
        JudgeInput("What was the primary?", "ledger-pg-02", ("ledger-pg-02",), CONTEXT),
        JudgeInput("What was the primary?", "", ("ledger-pg-02",), CONTEXT),  # empty answer
        JudgeInput("何が停止しましたか？", "サーバー 🚨", ("サーバー", "the server"), UNICODE),
    ],
}
OUT_TYPE = {"compressor": str, "reader": str, "judge": bool}


def _params():
    return [pytest.param(case, id=case.id, marks=[pytest.mark.slow] if case.slow else []) for case in CASES]


@pytest.fixture(scope="session")
def models(tmp_path_factory) -> Models:
    root = tmp_path_factory.mktemp("contract-models")
    return Models(
        chat=save_tiny_chat_model(root / "chat"),
        chat_other=save_tiny_chat_model(root / "chat-other", seed=1),
        encoder=save_tiny_encoder(root / "encoder"),
    )


_OUTPUTS: dict[str, list] = {}


def outputs(case: Case, models: Models) -> list:
    """One-at-a-time outputs of a first instance on the role's items (computed once per case)."""
    if case.id not in _OUTPUTS:
        method = case.build(models)
        _OUTPUTS[case.id] = [method(item) for item in ITEMS[case.role]]
    return _OUTPUTS[case.id]


@pytest.mark.parametrize("case", _params())
def test_output_type_and_budget_edges(case, models):
    outs = outputs(case, models)
    assert [type(out) for out in outs] == [OUT_TYPE[case.role]] * len(outs)
    if case.role == "compressor":
        for item, out in zip(ITEMS["compressor"], outs, strict=True):
            memory = fit_to_budget(out, item.token_budget)
            assert memory.reencoded_tokens <= item.token_budget
            # the cut invents no replacement character (token-level methods may emit one themselves: LLMLingua
            # drops byte tokens inside a multi-byte character, a random model generates lone bytes)
            assert "\ufffd" not in memory.text or "\ufffd" in out


@pytest.mark.parametrize("case", _params())
def test_batch_equals_one_at_a_time_and_a_second_instance_agrees(case, models):
    second = case.build(models)
    assert call_many(second, ITEMS[case.role]) == outputs(case, models)


@pytest.mark.parametrize("case", _params())
def test_revision_is_stable_and_binds_settings(case, models):
    revision = revision_of(case.build(models))
    assert isinstance(revision, str) and revision
    assert revision_of(case.build(models)) == revision
    if case.changed is not None:
        assert revision_of(case.changed(models)) != revision


def _registered() -> set[str]:
    """`role:name` of every registered name, prefixes as `role:prefix:` (the catalogue and the registry)."""
    names = {f"{e.role}:{e.name}" for e in BUILTINS} | {f"{e.role}:{e.name}:" for e in PREFIXES}
    for role in registry.ROLES:
        names |= {f"{role}:{name.removesuffix('...')}" for name in registry.known(role)}
    return names


def unlisted() -> list[str]:
    """Registered names that neither have a case nor are excluded with a reason."""
    listed = {case.id for case in CASES} | set(EXCLUDED)
    return sorted(_registered() - listed)


def test_every_registered_method_is_listed():
    assert unlisted() == []
    assert {case.id for case in CASES} | set(EXCLUDED) <= _registered()  # no stale line
    assert len({case.id for case in CASES}) == len(CASES)  # one line per method


def test_a_method_registered_but_not_listed_is_reported(monkeypatch):
    registry.known("compressor")  # load the catalogue first
    monkeypatch.setitem(registry._NAMED["compressor"], "brand-new", lambda: None)
    monkeypatch.setitem(registry._PREFIXED["judge"], "remote", lambda spec: None)
    assert unlisted() == ["compressor:brand-new", "judge:remote:"]
