"""GACC scores of the compressor being trained, at every evaluation of a `transformers.Trainer`.

At each `on_evaluate` the model being trained compresses the benchmark's sources (`compressor_from_model`),
the fixed reader and judge answer and score through `run_benchmark`, and the scores join the evaluation's
metrics and the Trainer's log, so every logger the Trainer reports to receives them. With several processes
(`accelerate launch`, `torchrun`) each rank compresses, reads and judges its share of the data, sharded by
context as `gacc run --num-processes` shards a run (`gacc_hf.run.distributed`); rank 0 merges the parts into
the result one process would have made and every rank gets it, so each rank's metrics hold the same values
(a `metric_for_best_model` among them works on all) while the Trainer's loggers write from rank 0 only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from transformers import TrainerCallback

from gacc_hf.budget import RatioLike
from gacc_hf.methods.trained import DEFAULT_PROMPT, ModelCompressor, compressor_from_model
from gacc_hf.run.distributed import run_benchmark_sharded
from gacc_hf.run.rank import detect
from gacc_hf.scoring.retention import retention_rows

SCORES = ("micro", "macro", "evidence_micro", "evidence_macro", "n_errors")
INTEGRITY = ("budget_violations", "count_errors", "exposures")


class GaccCallback(TrainerCallback):
    """Runs the benchmark with the model being trained as its compressor at every evaluation.

    Bind it with `attach(trainer)`, so its values go through `trainer.log` to every logger; the
    evaluation's `metrics` dict (what `trainer.evaluate()` returns) gets them too. `last_result` is the
    last `BenchmarkResult` (merged over the ranks), `rank_calls` the calls each rank made in it. Keys are
    `gacc/<name>` for one method cell, `gacc/<condition>/r<ratio>/<name>` for several. `generation_batch_size`
    prompts go through one `generate` call.
    """

    def __init__(
        self,
        dataset: Any,
        *,
        reader: Any,
        judge: Any,
        ratios: RatioLike | Sequence[RatioLike] = (0.1,),
        conditions: Sequence[str] = ("own",),
        cache_dir: str | None = None,
        tokenizer: Any = None,
        prompt: str = DEFAULT_PROMPT,
        max_new_tokens: int | None = None,
        generation_batch_size: int = 8,
        **run_options: Any,
    ) -> None:
        self.dataset, self.reader, self.judge, self.ratios = dataset, reader, judge, ratios
        self.conditions, self.cache_dir, self.tokenizer = tuple(conditions), cache_dir, tokenizer
        self.prompt, self.max_new_tokens, self.run_options = prompt, max_new_tokens, run_options
        self.generation_batch_size = generation_batch_size
        self.rank_calls: list[dict[str, int]] = []
        self.compressor: ModelCompressor | None = None
        self.trainer: Any = None
        self.last_result: Any = None

    def attach(self, trainer: Any) -> GaccCallback:
        """Add this callback to `trainer` and log through it; returns the callback. A model that cannot
        generate, or no tokenizer, is refused here, before any training."""
        self._build(trainer.model, trainer.processing_class)
        trainer.add_callback(self)
        self.trainer = trainer
        return self

    def _build(self, model: Any, processing_class: Any) -> None:
        tokenizer = self.tokenizer if self.tokenizer is not None else processing_class
        if tokenizer is None:
            raise ValueError("GaccCallback: no tokenizer; pass tokenizer= or give the Trainer a processing_class")
        self.compressor = compressor_from_model(
            model, tokenizer, self.prompt, max_new_tokens=self.max_new_tokens, batch_size=self.generation_batch_size
        )

    def on_evaluate(self, args: Any, state: Any, control: Any, metrics: dict | None = None, **kwargs: Any) -> None:
        """Score the model at this step and add the `gacc/...` values to `metrics` and the Trainer's log."""
        if self.compressor is None:
            self._build(kwargs["model"], kwargs.get("processing_class"))
        self.compressor.step = state.global_step
        options = {"progress": False, **self.run_options}
        self.last_result, self.rank_calls = run_benchmark_sharded(
            self.dataset, topology=detect(), to_all=True, compressor=self.compressor, reader=self.reader,
            judge=self.judge, ratios=self.ratios, conditions=self.conditions, cache_dir=self.cache_dir, **options,
        )  # fmt: skip
        values = gacc_metrics(self.last_result)
        if metrics is not None:
            metrics.update(values)
        if self.trainer is not None:
            self.trainer.log(dict(values))
        else:
            state.log_history.append({**values, "step": state.global_step})


def gacc_metrics(result: Any) -> dict[str, float]:
    """The flat `gacc/...` values of a run: each method cell's scores and retention, the integrity counters."""
    cells = [row for row in result.scores if not row["ceiling"]]
    kept = {(r["compressor"], r["condition"], r["ratio"]): r for r in retention_rows(result.answers, 0, 0)}
    out: dict[str, float] = {}
    for row in cells:
        head = "gacc/" if len(cells) == 1 else f"gacc/{row['condition']}/r{row['ratio']:g}/"
        out.update({head + name: float(row[name]) for name in SCORES})
        retention = kept.get((row["compressor"], row["condition"], row["ratio"]), {}).get("retention")
        if retention is not None:
            out[head + "retention"] = float(retention)
    out.update({f"gacc/{name}": float(result.integrity[name]) for name in INTEGRITY})
    return out
