"""gacc-hf: the Hugging Face-native harness for GACC-Bench.

A compressor sees a long source and a user's goal and must fit a cl100k_base token budget before the
follow-up questions are known; a fixed reader answers every held-out question from that one memory,
and an independent judge scores against the source and gold.
"""

from gacc_hf.budget import Memory, fit_to_budget, token_budget
from gacc_hf.protocol import CompressorInput, JudgeInput, ReaderInput, revision_of
from gacc_hf.tokenizer import Codec, TokenizerIdentityError, get_codec

__version__ = "0.1.0"

__all__ = [
    "METRIC_PATH",
    "Codec",
    "CompressorInput",
    "GaccCallback",
    "JudgeInput",
    "Memory",
    "ReaderInput",
    "TokenizerIdentityError",
    "__version__",
    "compressor_from_model",
    "fit_to_budget",
    "get_codec",
    "load_sample",
    "revision_of",
    "run_benchmark",
    "synthetic",
    "token_budget",
]


def __getattr__(name: str):  # lazy: keep `import gacc_hf` free of datasets/evaluate start-up cost
    if name == "synthetic":
        from gacc_hf.data.synthetic import synthetic

        return synthetic
    if name == "run_benchmark":
        from gacc_hf.run.benchmark import run_benchmark

        return run_benchmark
    if name == "load_sample":
        from gacc_hf.data.jsonl import load_sample

        return load_sample
    if name == "compressor_from_model":
        from gacc_hf.methods.trained import compressor_from_model

        return compressor_from_model
    if name == "GaccCallback":
        from gacc_hf.training import GaccCallback

        return GaccCallback
    if name == "METRIC_PATH":
        from gacc_hf.metric import METRIC_PATH

        return METRIC_PATH
    raise AttributeError(f"module 'gacc_hf' has no attribute {name!r}")
