"""The Inspect task with the bundled SmolLM2 as its reader, through Inspect's Hugging Face provider (`hf/` on the
folder gacc-hf converts the packaged GGUF into), against `run_benchmark` with gacc-hf's own `smollm2` reader.

Like for like: the same weights and chat template, greedy decoding (`do_sample=False`), the reader's 24-token limit
and newline stop, the first line kept, and one prompt at a time (`max_connections=1`: Inspect's provider pads a
batch, which can move a float32 logit); the compressor on both sides writes the same text (its prompt, echoed)."""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

import gacc_hf
from gacc_hf.inspect_eval import gacc_bench
from gacc_hf.methods.weights import smollm2_folder
from tests.helpers.inspect_models import echo_compressor, mock_compressor


@pytest.mark.slow
def test_smollm2_reads_alike_through_inspects_hf_provider(tmp_path):
    reader = get_model(f"hf/{smollm2_folder()}", do_sample=False)
    [log] = inspect_eval(
        gacc_bench(ratio=0.2), model=mock_compressor(), model_roles={"reader": reader}, limit=1,
        log_dir=str(tmp_path), display="none", max_connections=1,
    )  # fmt: skip
    assert log.status == "success", log.error
    result = gacc_hf.run_benchmark(
        "sample", compressor=echo_compressor, reader="smollm2", judge="contains", ratios=0.2, conditions=("own",),
        limit=1, progress=False,
    )  # fmt: skip
    [sample] = log.samples
    ours = [(a["answer"], a["correct"]) for a in sample.scores["gacc_scorer"].metadata["answers"]]
    assert ours == [(a["answer"], a["correct"]) for a in result.answers]
    metrics = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    [row] = result.scores
    assert (metrics["micro"], metrics["macro"]) == (row["micro"], row["macro"])
