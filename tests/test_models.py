import hashlib
import subprocess
import sys

import pytest
from huggingface_hub import constants
from model_helpers import save_tiny_chat_model

from gacc_hf import models
from gacc_hf.models import ModelLoadError, folder_identity, load_causal_lm, load_sentence_encoder, resolve_model
from gacc_hf.registry import resolve


def test_model_cache_dir_follows_the_env_var_then_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("GACC_HF_CACHE", str(tmp_path / "mine"))
    assert models.model_cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("GACC_HF_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert models.model_cache_dir() == tmp_path / "xdg" / "gacc-hf"


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
    from gacc_hf.runner import run_benchmark
    from gacc_hf.synthetic import synthetic

    with pytest.raises(ModelLoadError, match="does not exist"):
        run_benchmark(synthetic(contexts=1), reader=f"hf:{tmp_path / 'missing'}", cache_dir=str(tmp_path / "c"))
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


def test_importing_gacc_hf_and_naming_rule_methods_never_imports_torch():
    code = (
        "import sys, gacc_hf\n"
        "from gacc_hf.registry import known, resolve\n"
        "resolve('compressor', 'truncate'); known('reader')\n"
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, 'heavy import'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_unknown_names_list_the_local_models():
    with pytest.raises(ValueError, match=r"known readers:.*smollm2.*hf:\.\.\."):
        resolve("reader", "smollm3")
    with pytest.raises(ValueError, match=r"known compressors:.*embed.*smollm2"):
        resolve("compressor", "embedding")
