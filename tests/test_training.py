"""The compressor being trained, scored at every evaluation of a real `transformers.Trainer`."""

from __future__ import annotations

import pytest
from transformers import BertConfig, BertModel, DataCollatorForSeq2Seq, Trainer, TrainerCallback, TrainingArguments

import gacc_hf
from gacc_hf.methods.trained import DEFAULT_PROMPT
from gacc_hf.training import gacc_metrics
from tests.helpers.models import tiny_t5


class Logger(TrainerCallback):
    """What a logger in `report_to` receives: every `on_log` call's values."""

    def __init__(self) -> None:
        self.logs: list[dict] = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        self.logs.append(dict(logs))


READ = {"reader": "fields", "judge": "exact", "ratios": (0.2,), "conditions": ("own",)}


@pytest.fixture(scope="module")
def data():
    return gacc_hf.synthetic(seed=0, contexts=2)


@pytest.fixture()
def t5(data):
    return tiny_t5([r["context"] for r in data] + [r["goal"] for r in data] + [DEFAULT_PROMPT])


def _trainer(model, tokenizer, data, tmp_path, steps, **extra):
    rows = [dict(tokenizer(r["goal"], text_target=" ".join(r["context"].split()[:6]))) for r in data]
    args = TrainingArguments(
        output_dir=str(tmp_path / "out"), max_steps=steps, per_device_train_batch_size=2, report_to="none",
        learning_rate=0.05, use_cpu=True, save_strategy="no", logging_strategy="no",
    )  # fmt: skip
    collator = DataCollatorForSeq2Seq(tokenizer, model=model)
    return Trainer(model=model, args=args, train_dataset=rows, eval_dataset=rows[:2], data_collator=collator, **extra)


def test_the_logged_values_equal_a_separate_run_and_unchanged_weights_make_no_calls(t5, data, tmp_path):
    model, tokenizer = t5
    trainer = _trainer(model, tokenizer, data, tmp_path, steps=2)
    logger = Logger()
    trainer.add_callback(logger)
    callback = gacc_hf.GaccCallback(data, **READ, cache_dir=str(tmp_path / "cache"), tokenizer=tokenizer,
                                    max_new_tokens=8).attach(trainer)  # fmt: skip
    trainer.train()
    first = trainer.evaluate()
    first_calls = callback.last_result.calls["compressor"]
    second = trainer.evaluate()
    assert first_calls == len(data)  # one memory per (context, goal) group, made by the model
    assert callback.last_result.calls["compressor"] == 0  # same weights, same step: every memory from the cache

    alone = gacc_hf.compressor_from_model(model, tokenizer, max_new_tokens=8, step=trainer.state.global_step)
    separate = gacc_hf.run_benchmark(data, alone, **READ, progress=False)
    row = separate.scores[0]
    assert row["compressor"] == callback.last_result.scores[0]["compressor"] == "trained:T5ForConditionalGeneration"
    for metrics in (first, second):
        assert metrics["gacc/micro"] == row["micro"] and metrics["gacc/macro"] == row["macro"]
        assert metrics["gacc/evidence_micro"] == row["evidence_micro"]
        assert metrics["gacc/budget_violations"] == metrics["gacc/exposures"] == 0
    logged = [entry for entry in trainer.state.log_history if "gacc/micro" in entry]
    assert [(e["step"], e["gacc/micro"]) for e in logged] == [(2, row["micro"])] * 2
    received = [entry for entry in logger.logs if "gacc/micro" in entry]
    assert [(e["gacc/micro"], e["gacc/count_errors"]) for e in received] == [(row["micro"], 0)] * 2


def test_the_revision_follows_the_weights_and_the_step(t5, data, tmp_path):
    model, tokenizer = t5
    before = gacc_hf.compressor_from_model(model, tokenizer).revision
    assert gacc_hf.compressor_from_model(model, tokenizer).revision == before  # same weights: same revision
    assert gacc_hf.compressor_from_model(model, tokenizer, step=1).revision != before
    assert gacc_hf.compressor_from_model(model, tokenizer, "{goal} {context} !").revision != before
    _trainer(model, tokenizer, data, tmp_path, steps=1).train()
    after = gacc_hf.compressor_from_model(model, tokenizer)
    assert after.revision.startswith("step-0-") and after.revision != before  # one step changed the weights


def test_the_revision_follows_the_tokenizer():
    (model_a, words_a), (model_b, words_b) = tiny_t5(["alpha beta"]), tiny_t5(["gamma delta"])
    # same seed and size: equal weights, two vocabularies of the same length
    assert (
        gacc_hf.compressor_from_model(model_a, words_a).revision
        == gacc_hf.compressor_from_model(model_b, words_a).revision
    )
    assert (
        gacc_hf.compressor_from_model(model_a, words_a).revision
        != gacc_hf.compressor_from_model(model_a, words_b).revision
    )


def test_a_model_that_cannot_generate_is_refused_in_one_line(t5, tmp_path):
    _, tokenizer = t5
    encoder = BertModel(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                   intermediate_size=32))  # fmt: skip
    with pytest.raises(ValueError, match=r"^compressor_from_model: BertModel cannot generate text; give a causal") as e:
        gacc_hf.compressor_from_model(encoder, tokenizer)
    assert "\n" not in str(e.value)
    trainer = Trainer(model=encoder, args=TrainingArguments(output_dir=str(tmp_path), report_to="none"))
    with pytest.raises(ValueError, match=r"^compressor_from_model: BertModel cannot generate text"):
        gacc_hf.GaccCallback([], **READ, tokenizer=tokenizer).attach(trainer)
    assert not any(isinstance(c, gacc_hf.GaccCallback) for c in trainer.callback_handler.callbacks)


def test_a_prompt_without_the_goal_or_the_source_is_refused(t5):
    model, tokenizer = t5
    for prompt, field in (("Source: {context}", "{goal}"), ("Goal: {goal}", "{context}")):
        with pytest.raises(ValueError, match=f"the prompt has no {field} field"):
            gacc_hf.compressor_from_model(model, tokenizer, prompt)


def test_several_cells_get_their_own_keys_and_retention_when_closed_and_full_ran(data):
    # fields reads every answer from the whole source and none without one: full is 1, closed 0, so each
    # cell's retention is its Micro
    result = gacc_hf.run_benchmark(data, "truncate", "fields", "exact", ratios=(0.2, 0.5),
                                   conditions=("own", "none", "full", "closed"), progress=False)  # fmt: skip
    values = gacc_metrics(result)
    cells = [r for r in result.scores if not r["ceiling"]]
    assert len(cells) == 4
    for row in cells:
        head = f"gacc/{row['condition']}/r{row['ratio']:g}/"
        assert values[head + "micro"] == row["micro"]
        assert values[head + "retention"] == pytest.approx(row["micro"])
    assert "gacc/micro" not in values and values["gacc/count_errors"] == 0


def test_one_cell_without_bounds_has_no_retention(data):
    values = gacc_metrics(gacc_hf.run_benchmark(data, "truncate", **READ, progress=False))
    assert set(values) == {
        "gacc/micro", "gacc/macro", "gacc/evidence_micro", "gacc/evidence_macro", "gacc/n_errors",
        "gacc/budget_violations", "gacc/count_errors", "gacc/exposures",
    }  # fmt: skip


def test_without_attach_the_metrics_and_the_log_history_still_get_the_values(t5, data, tmp_path):
    model, tokenizer = t5
    trainer = _trainer(model, tokenizer, data, tmp_path, steps=1)
    trainer.add_callback(gacc_hf.GaccCallback(data, **READ, tokenizer=tokenizer, max_new_tokens=4))
    metrics = trainer.evaluate()
    logged = [e for e in trainer.state.log_history if "gacc/micro" in e]
    assert len(logged) == 1 and logged[0]["gacc/micro"] == metrics["gacc/micro"] and logged[0]["step"] == 0


def test_a_causal_model_writes_only_its_new_tokens_capped_at_l(tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from tests.helpers.models import save_tiny_chat_model

    folder = save_tiny_chat_model(tmp_path / "llama")
    model, tokenizer = AutoModelForCausalLM.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    capped = gacc_hf.compressor_from_model(model, tokenizer, max_new_tokens=6)
    by_budget = gacc_hf.compressor_from_model(model, tokenizer)
    for goal in ("plan the budget", "预算计划"):
        longer = capped(gacc_hf.CompressorInput(context="alpha beta gamma. 甲乙丙。", goal=goal, token_budget=50))
        shorter = by_budget(gacc_hf.CompressorInput(context="alpha beta gamma. 甲乙丙。", goal=goal, token_budget=2))
        assert "Goal:" not in longer and goal not in longer  # the prompt is not echoed
        # greedy decoding: 2 new tokens (L = 2) are the start of the 6 that max_new_tokens allows
        assert longer.startswith(shorter) and len(shorter) < len(longer)


def test_the_tokenizer_comes_from_the_trainer_and_its_absence_is_one_line(t5, data, tmp_path):
    model, tokenizer = t5
    trainer = _trainer(model, tokenizer, data, tmp_path, steps=1)
    with pytest.raises(ValueError, match=r"^GaccCallback: no tokenizer; pass tokenizer= or give the Trainer a proc"):
        gacc_hf.GaccCallback(data, **READ, max_new_tokens=4).attach(trainer)
    unbound = gacc_hf.GaccCallback(data, **READ, max_new_tokens=4)
    trainer.add_callback(unbound)
    with pytest.raises(ValueError, match=r"^GaccCallback: no tokenizer"):
        trainer.evaluate()
    given = _trainer(model, tokenizer, data, tmp_path, steps=1, processing_class=tokenizer)
    gacc_hf.GaccCallback(data, **READ, max_new_tokens=4).attach(given)
    assert "gacc/micro" in given.evaluate()


def test_batched_generation_writes_the_memories_one_at_a_time_generation_writes(t5, data, tmp_path):
    """Prompts of several lengths and budgets, English and Chinese, through a seq2seq and a causal model: padded
    batches (right for the encoder, left for the causal prompt) and each row cut to its own cap give every
    memory one prompt per `generate` call gives."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from tests.helpers.models import save_tiny_chat_model

    items = [gacc_hf.CompressorInput(context=r["context"], goal=r["goal"], token_budget=b) for r in data
             for b in (3, 9, 20)]  # fmt: skip
    items += [gacc_hf.CompressorInput(context="会议在三点开始。预算是十万元。" * k, goal="预算计划", token_budget=b)
              for k, b in ((1, 4), (3, 12))]  # fmt: skip
    folder = save_tiny_chat_model(tmp_path / "llama")
    causal = AutoModelForCausalLM.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    for model, tokenizer in (t5, causal):
        one = gacc_hf.compressor_from_model(model, tokenizer, batch_size=1)
        batched = gacc_hf.compressor_from_model(model, tokenizer, batch_size=4)
        alone = [one(item) for item in items]
        assert len({len(m) for m in alone}) > 3  # memories of several lengths: the cut per row is tested
        assert batched.batch(items) == alone
        assert batched.revision == one.revision  # execution only: the cache keys stay


def test_a_generation_batch_below_one_is_refused(t5):
    model, tokenizer = t5
    with pytest.raises(ValueError, match=r"^compressor_from_model: batch_size must be >= 1, got 0$"):
        gacc_hf.compressor_from_model(model, tokenizer, batch_size=0)


TWO_RANKS = """
import json, sys
import torch.distributed as dist
from transformers import DataCollatorForSeq2Seq, Trainer, TrainingArguments
import gacc_hf
from gacc_hf.methods.trained import DEFAULT_PROMPT
from tests.helpers.models import tiny_t5

out, steps = sys.argv[1], 2
data = gacc_hf.synthetic(seed=0, contexts=4)
model, tokenizer = tiny_t5([r["context"] for r in data] + [r["goal"] for r in data] + [DEFAULT_PROMPT])
rows = [dict(tokenizer(r["goal"], text_target=" ".join(r["context"].split()[:6]))) for r in data]
args = TrainingArguments(output_dir=out + "/train", max_steps=steps, per_device_train_batch_size=2, report_to="none",
                         learning_rate=0.05, use_cpu=True, save_strategy="no", logging_strategy="no")
trainer = Trainer(model=model, args=args, train_dataset=rows, eval_dataset=rows[:2],
                  data_collator=DataCollatorForSeq2Seq(tokenizer, model=model))
read = {"reader": "fields", "judge": "exact", "ratios": (0.2, 0.5), "conditions": ("own", "none")}
callback = gacc_hf.GaccCallback(data, **read, cache_dir=out + "/cache", tokenizer=tokenizer, max_new_tokens=8)
callback.attach(trainer)
trainer.train()
metrics = trainer.evaluate()
rank = dist.get_rank()
report = {"rank": rank, "world": dist.get_world_size(), "rank_calls": callback.rank_calls,
          "gacc": {k: v for k, v in metrics.items() if k.startswith("gacc/")},
          "logged": [e for e in trainer.state.log_history if "gacc/exposures" in e],
          "revision": callback.compressor.revision, "step": trainer.state.global_step}
if rank == 0:
    trainer.model.save_pretrained(out + "/model")
print(json.dumps(report))
"""


def test_two_processes_each_compress_their_share_and_equal_one_process(tmp_path):
    """A real 2-process launch (torchrun, gloo on the CPU) of a Trainer: each rank compresses the groups of
    the contexts it owns, every rank gets the merged values, and they equal a one-process evaluation of the
    same checkpoint."""
    import json
    import os
    import subprocess
    import sys

    from transformers import T5ForConditionalGeneration

    from gacc_hf.data.schema import validate
    from gacc_hf.keys import text_hash
    from gacc_hf.run.distributed import assign_contexts
    from gacc_hf.run.launch import free_port
    from tests.helpers.paths import ROOT

    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    script = tmp_path / "two_ranks.py"
    script.write_text(TWO_RANKS)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port", str(free_port()),
           "--tee", "1", str(script), str(tmp_path)]  # fmt: skip
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    lines = [line for line in proc.stdout.splitlines() if '"rank_calls"' in line]
    reports = sorted((json.loads(line[line.index("{") :]) for line in lines), key=lambda r: r["rank"])
    assert [r["rank"] for r in reports] == [0, 1] and reports[0]["world"] == 2

    data = gacc_hf.synthetic(seed=0, contexts=4)
    assert reports[0]["gacc"] == reports[1]["gacc"] and reports[0]["revision"] == reports[1]["revision"]
    assert reports[0]["rank_calls"] == reports[1]["rank_calls"]
    assert len(reports[0]["logged"]) == len(reports[1]["logged"]) == 1

    model = T5ForConditionalGeneration.from_pretrained(tmp_path / "model")
    _, tokenizer = tiny_t5([r["context"] for r in data] + [r["goal"] for r in data] + [DEFAULT_PROMPT])
    alone = gacc_hf.compressor_from_model(model, tokenizer, max_new_tokens=8, step=reports[0]["step"])
    assert alone.revision == reports[0]["revision"]
    one = gacc_hf.run_benchmark(data, alone, reader="fields", judge="exact", ratios=(0.2, 0.5),
                                conditions=("own", "none"), progress=False)  # fmt: skip
    assert reports[0]["gacc"] == gacc_metrics(one)
    # each rank made the distinct memories of the contexts it owns, and only those
    owner = assign_contexts(validate(data), 2)
    context_of = {r["context_id"]: text_hash(r["context"]) for r in data}
    share = [{m["memory_key"] for m in one.memories if owner[context_of[m["context_id"]]] == rank} for rank in (0, 1)]
    assert [calls["compressor"] for calls in reports[0]["rank_calls"]] == [len(s) for s in share]
    assert all(share) and sum(map(len, share)) == one.calls["compressor"]  # both worked, none twice
