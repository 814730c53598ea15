"""The llmlingua compressors: the real `llmlingua` package on transformers 5, offline, inside the protocol.

The run tests start a child process with every socket connection refused and a fresh tiktoken cache, so
any download LLMLingua or tiktoken would try fails the run; they record every argument that reaches
`PromptCompressor.compress_prompt` (passing the call through) to show that no question text gets there.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

from gacc_hf import CompressorInput
from gacc_hf.methods import llmlingua as lingua
from gacc_hf.methods.registry import resolve
from tests.helpers.child import run_child
from tests.helpers.paths import ROOT
from tests.helpers.runs import rules_run

# Published facts, not read from the code: tiktoken's download URL and cl100k_base's sha256 (docs/protocol.md §12).
URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
RANKS_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


def test_missing_extra_says_how_to_install_before_any_work(monkeypatch):
    resolved = []
    monkeypatch.setattr(lingua, "resolve_model", lambda spec: resolved.append(spec))
    monkeypatch.setitem(sys.modules, "llmlingua", None)  # what `import llmlingua` meets when it is not installed
    for spec in ("llmlingua", "longllmlingua", "llmlingua:hf:some/model"):
        with pytest.raises(
            lingua.MissingExtraError,
            match=r'install it with `pip install -e "\.\[llmlingua\]"` in a checkout of gacc-hf \(Python >= 3\.11\)',
        ):
            resolve("compressor", spec)
    assert resolved == []  # no model was resolved, converted or loaded
    monkeypatch.delitem(sys.modules, "llmlingua")
    assert lingua.require_llmlingua().__version__ == "0.2.2"  # installed: no error


def test_the_install_advice_names_an_extra_and_a_python_that_pyproject_declares():
    # issue 23 item 18: gacc-hf is not on the index, so the advice installs the checkout's own extra
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert lingua.INSTALL_HINT == 'pip install -e ".[llmlingua]"' and "llmlingua" in project["optional-dependencies"]
    assert project["requires-python"] == ">=3.11"  # the version the message names


def test_the_command_line_names_the_install_command_and_writes_nothing(monkeypatch, tmp_path, capsys):
    from gacc_hf.cli import main

    monkeypatch.setitem(sys.modules, "llmlingua", None)
    out = tmp_path / "run"
    argv = ["run", "--compressors", "bm25,longllmlingua", "--reader", "fields", "--judge", "exact", "--no-progress"]
    assert main([*argv, "--output-dir", str(out), "--cache-dir", str(tmp_path / "cache")]) == 2
    assert 'install it with `pip install -e ".[llmlingua]"` in a checkout' in capsys.readouterr().err
    assert not out.exists()


def test_small_model_spec_errors():
    with pytest.raises(ValueError, match="must be `smollm2` or `hf:<folder-or-hub-id>`"):
        resolve("compressor", "llmlingua:/some/folder")
    with pytest.raises(ValueError, match="does not exist"):
        resolve("compressor", "longllmlingua:hf:./no-such-folder")
    with pytest.raises(ValueError, match="unknown llmlingua variant"):
        lingua.build("lingua3")


def test_tiktoken_cache_holds_the_verified_ranks_under_tiktokens_name(tmp_path, monkeypatch):
    monkeypatch.setenv("GACC_HF_CACHE", str(tmp_path))
    folder = lingua.tiktoken_cache_dir()
    cached = folder / hashlib.sha1(URL.encode()).hexdigest()
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == RANKS_SHA256
    cached.write_bytes(b"damaged")  # tiktoken would delete this and download: it is replaced instead
    assert lingua.tiktoken_cache_dir() == folder
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == RANKS_SHA256
    assert sorted(p.name for p in folder.iterdir()) == [cached.name]  # no temporary file left behind


def test_revision_binds_variant_and_model(tiny, tiny_other_seed):
    plain = resolve("compressor", f"llmlingua:hf:{tiny}")
    assert plain.name == f"llmlingua:hf:{tiny}"
    assert resolve("compressor", f"llmlingua:hf:{tiny}").revision == plain.revision
    long = resolve("compressor", f"longllmlingua:hf:{tiny}")
    assert long.revision != plain.revision and long.compressor is plain.compressor  # one model, two variants
    assert resolve("compressor", f"llmlingua:hf:{tiny_other_seed}").revision != plain.revision


@pytest.mark.parametrize("text", ["The primary node filled its disk at 03:10.", "主节点在三点十分写满了磁盘。"])
def test_usage_is_counted_with_the_small_models_tokenizer(tiny, cache_dir, text):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny)  # an independent count: the model folder's tokenizer

    def n(t: str) -> int:
        return len(tokenizer(t, add_special_tokens=False)["input_ids"])

    plain = resolve("compressor", f"llmlingua:hf:{tiny}")
    long = resolve("compressor", f"longllmlingua:hf:{tiny}")
    item = CompressorInput(text * 20, " find the failure ", 30)
    assert plain.prompt_tokens(item) == n(text * 20)  # goal-agnostic: the goal is not read
    assert long.prompt_tokens(item) == n(text * 20) + n("find the failure")
    assert long.prompt_tokens(CompressorInput(text * 20, "  ", 30)) == n(text * 20)
    assert plain.token_counter == f"llmlingua:hf:{tiny} tokenizer"

    question = {"question_id": "q", "question": "When did the disk fill?"}
    gold = {"question_id": "q", "references": ["03:10"]}
    row = {"context_id": "c", "source": "s", "context": text * 20, "goal_id": "g", "goal": "find the failure"}
    row |= {"questions": [question], "gold": [gold]}
    result = rules_run([row], compressor=plain, ratios=[0.2], conditions=["own"], cache_dir=cache_dir, n_bootstrap=0)
    (memory,) = result.memories
    raw = plain(CompressorInput(text * 20, "find the failure", memory["budget"]))  # the output before the cut
    entry = result.usage["roles"]["compressor"][plain.name]
    assert entry == {"calls": 1, "prompt_tokens": n(text * 20), "completion_tokens": n(raw), "source": "local"}
    assert result.usage["counters"]["compressor"] == {plain.name: f"llmlingua:hf:{tiny} tokenizer"}


def test_the_cache_adapter_is_needed_and_keeps_the_models_logits(tiny, monkeypatch):
    import torch

    plain = resolve("compressor", f"llmlingua:hf:{tiny}")
    adapter = plain.compressor.model
    ids = torch.tensor([[5, 17, 230, 41, 9, 88, 1200, 3]])
    mask = torch.ones_like(ids)
    with torch.no_grad():
        whole = adapter.model(ids, attention_mask=mask).logits
        first = adapter(ids[:, :5], attention_mask=mask[:, :5])
        # llmlingua's call shape: the new ids only, the mask over past and new
        rest = adapter(ids[:, 5:], attention_mask=mask, past_key_values=first.past_key_values)
    assert all(len(pair) == 2 for pair in first.past_key_values)
    # float32 rounding differs between the cached and the one-pass computation (measured 2.3e-5 on logits of ~5)
    assert torch.allclose(torch.cat([first.logits, rest.logits], dim=1), whole, atol=1e-4)
    monkeypatch.setattr(plain.compressor, "model", adapter.model)  # the package on transformers 5 as shipped
    with pytest.raises(ValueError, match="too many values to unpack"):
        plain(CompressorInput("The primary node filled its disk. " * 60, "", 40))


def test_goal_reaches_longllmlingua_as_its_question_and_nowhere_else(tiny, monkeypatch):
    long = resolve("compressor", f"longllmlingua:hf:{tiny}")
    plain = resolve("compressor", f"llmlingua:hf:{tiny}")
    calls = []
    original = long.compressor.compress_prompt
    monkeypatch.setattr(
        long.compressor, "compress_prompt", lambda *a, **kw: calls.append((a, kw)) or original(*a, **kw)
    )
    context = "The primary node filled its disk.\n\nLunch was pizza.\n\nFailover pointed at the old node."
    long(CompressorInput(context, "  why the failover failed ", 12))
    (args, kw), *_ = calls
    assert args == (["The primary node filled its disk.", "Lunch was pizza.", "Failover pointed at the old node."],)
    assert kw["question"] == "why the failover failed" and kw["concate_question"] is False
    assert kw["target_token"] == 12 and kw["rank_method"] == "longllmlingua"
    calls.clear()
    assert long(CompressorInput(context, " ", 12)) == plain(CompressorInput(context, "", 12))  # no goal: LLMLingua
    assert [kw.get("question", "") for _, kw in calls] == ["", ""] and calls[0][0] == (context,)


def test_degenerate_inputs_never_reach_the_package(tiny, monkeypatch):
    long = resolve("compressor", f"longllmlingua:hf:{tiny}")
    calls = []
    original = long.compressor.compress_prompt
    monkeypatch.setattr(long.compressor, "compress_prompt", lambda *a, **kw: calls.append(a) or original(*a, **kw))
    assert long(CompressorInput("some text here", "goal", 0)) == ""
    assert long(CompressorInput(" \n\n ", "goal", 5)) == ""
    assert long(CompressorInput("  x  ", "goal", 1)) == "  x  "  # one model token: LongLLMLingua raises on it
    assert calls == []
    assert long(CompressorInput("x.", "goal", 1)) == "x."  # two tokens: the package runs (and keeps both)
    assert calls == [(["x."],)]


CHILD = """
import json, os, socket, sys
ATTEMPTS = []
def _refuse(self, address):
    ATTEMPTS.append(repr(address))
    raise OSError("network refused by the test")
socket.socket.connect = _refuse
import gacc_hf
from llmlingua import PromptCompressor
SEEN = []
_original = PromptCompressor.compress_prompt
def _record(self, context, **kw):
    SEEN.append({"context": context, **{k: v for k, v in kw.items() if isinstance(v, str)}})
    return _original(self, context, **kw)
PromptCompressor.compress_prompt = _record
data = gacc_hf.load_sample("judge").select(range(3))
result = gacc_hf.run_benchmark(
    data, compressor=sys.argv[1:], reader="fields", judge="exact", ratios=(0.2,),
    cache_dir=os.environ["CHILD_CACHE"], progress=False, n_bootstrap=0,
)
print(json.dumps({"attempts": ATTEMPTS, "seen": SEEN, "memories": result.memories, "integrity": result.integrity,
                  "tiktoken_env": os.environ.get("TIKTOKEN_CACHE_DIR")}))
"""


def _offline_run(tmp_path: Path, compressors: list[str], model_cache: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_CACHE_DIR"}
    env.update(PYTHONPATH=str(ROOT), CHILD_CACHE=str(tmp_path / "runs"), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    if model_cache:
        env["GACC_HF_CACHE"] = model_cache
    return run_child(CHILD, tmp_path, env, *compressors)


def _check_offline_run(out: dict, compressors: list[str]) -> None:
    from gacc_hf import load_sample

    data = load_sample("judge").select(range(3))
    questions = [q["question"] for row in data for q in row["questions"]]
    goals = {row["goal"] for row in data}
    assert out["attempts"] == [] and out["tiktoken_env"] is None  # no connection; the cache dir did not leak
    assert out["integrity"] == {"budget_violations": 0, "count_errors": 0, "exposures": 0}
    rows = out["memories"]
    assert {r["compressor"] for r in rows} >= set(compressors)
    for row in rows:
        assert row["reencoded_tokens"] <= row["budget"], row
    ours = [r for r in rows if r["compressor"] in compressors]
    assert all(r["compressor_called"] for r in ours)
    assert any(r["proposed_tokens"] > r["budget"] for r in ours)  # LLMLingua overshoots; the protocol cut it
    assert all(r["truncated"] == (r["proposed_tokens"] > r["budget"]) for r in ours)
    seen = out["seen"]
    asked = [s["question"] for s in seen if s.get("question")]
    assert asked and set(asked) <= goals  # the goal sat where LongLLMLingua expects a question
    for call in seen:
        text = json.dumps(call)
        for question in questions:
            assert question not in text and json.dumps(question)[1:-1] not in text


def test_both_variants_run_offline_on_sample_groups_within_budget(tiny, tmp_path):
    compressors = [f"llmlingua:hf:{tiny}", f"longllmlingua:hf:{tiny}"]
    out = _offline_run(tmp_path, compressors, model_cache=str(tmp_path / "fresh-model-cache"))
    _check_offline_run(out, compressors)
    assert (tmp_path / "fresh-model-cache" / "tiktoken" / hashlib.sha1(URL.encode()).hexdigest()).is_file()


@pytest.mark.slow
def test_default_smollm2_variants_run_offline_on_sample_groups_within_budget(tmp_path):
    out = _offline_run(tmp_path, ["llmlingua", "longllmlingua"], model_cache=None)
    _check_offline_run(out, ["llmlingua", "longllmlingua"])
