"""The e5 encoder run in bfloat16 by torch, for CPUs with native bf16 matmuls (AMX, AVX512-BF16).

On such a CPU oneDNN multiplies bf16 matrices several times faster than fp32,
and an encoding costs 25-40% less CPU than ONNX Runtime's fp32 run
(docs/benchmarks.md). Weights are stored in bf16, packed once into oneDNN's
blocked layout where the CPU has native bf16 (a plain bf16 matmul re-blocks its
weights on every call, a third of its time at a few rows); sums, softmax and
layer norms accumulate in fp32 inside the kernels, so the unit vectors stay
within a cosine of 0.9999 of the fp32 ones. On a CPU without native bf16 the
same matmuls are emulated and slower, so `TextEncoder` uses this only where it
measured it cheaper.

The forward pass is a TorchScript module: one call per batch, so torch releases
the GIL once rather than at each of ~150 small ops. Eager, under load, every op
queued behind the event loop's thread: an encoding took 900 ms beside a busy
Python thread, against 25 ms as one call.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional, Union

import numpy as np
import torch

from fingerprint.encoder import native_bf16
from torch import nn
from torch.nn import functional as fn


class _Linear(nn.Module):
    def __init__(self, weight: torch.Tensor, bias: torch.Tensor, packed: bool):
        super().__init__()
        self.packed = packed
        self.weight = torch.ops.mkldnn._reorder_linear_weight(weight, None) if packed else weight
        self.bias = bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.packed:
            no_scalars: List[Optional[Union[int, float, complex]]] = []
            return torch.ops.mkldnn._linear_pointwise(x, self.weight, self.bias, "none", no_scalars, "")
        return fn.linear(x, self.weight, self.bias)


class _Layer(nn.Module):
    def __init__(self, get, prefix: str, heads: int, eps: float, packed: bool):
        super().__init__()
        qkv = [f"{prefix}attention.self.{n}" for n in ("query", "key", "value")]
        self.qkv = _Linear(torch.cat([get(n + ".weight") for n in qkv]), torch.cat([get(n + ".bias") for n in qkv]),
                           packed)
        self.attn_out = _Linear(get(prefix + "attention.output.dense.weight"),
                                get(prefix + "attention.output.dense.bias"), packed)
        self.ff_in = _Linear(get(prefix + "intermediate.dense.weight"), get(prefix + "intermediate.dense.bias"), packed)
        self.ff_out = _Linear(get(prefix + "output.dense.weight"), get(prefix + "output.dense.bias"), packed)
        self.norm1_w, self.norm1_b = get(prefix + "attention.output.LayerNorm.weight"), \
            get(prefix + "attention.output.LayerNorm.bias")
        self.norm2_w, self.norm2_b = get(prefix + "output.LayerNorm.weight"), get(prefix + "output.LayerNorm.bias")
        self.heads, self.eps = heads, eps

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        rows, width, dim = x.shape[0], x.shape[1], x.shape[2]
        qkv = self.qkv(x).view(rows, width, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        ctx = fn.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], attn_mask=keep)
        x = fn.layer_norm(x + self.attn_out(ctx.transpose(1, 2).reshape(rows, width, dim)), [dim], self.norm1_w,
                          self.norm1_b, self.eps)
        return fn.layer_norm(x + self.ff_out(fn.gelu(self.ff_in(x))), [dim], self.norm2_w, self.norm2_b, self.eps)


class _Encoder(nn.Module):
    def __init__(self, get, config: dict, packed: bool, head: bool):
        super().__init__()
        heads, self.eps = int(config["num_attention_heads"]), float(config.get("layer_norm_eps", 1e-12))
        self.word = get("embeddings.word_embeddings.weight")
        self.position = get("embeddings.position_embeddings.weight", torch.float32)
        self.token_type = get("embeddings.token_type_embeddings.weight", torch.float32)[0]
        self.norm_w = get("embeddings.LayerNorm.weight", torch.float32)
        self.norm_b = get("embeddings.LayerNorm.bias", torch.float32)
        self.layers = nn.ModuleList(_Layer(get, f"encoder.layer.{i}.", heads, self.eps, packed)
                                    for i in range(int(config["num_hidden_layers"])))
        # a classification head on the pooled vector (fp32), or none: unit vectors
        self.head = head
        self.head_w = get("head.weight", torch.float32) if head else torch.zeros(0)
        self.head_b = get("head.bias", torch.float32) if head else torch.zeros(0)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        width, dim = ids.shape[1], self.word.shape[1]
        x = self.word[ids].float() + self.position[:width] + self.token_type
        x = fn.layer_norm(x, [dim], self.norm_w, self.norm_b, self.eps).to(torch.bfloat16)
        keep = (mask > 0)[:, None, None, :]
        for layer in self.layers:
            x = layer(x, keep)
        m = mask[:, :, None].float()
        pooled = (x.float() * m).sum(1) / m.sum(1).clamp(min=1.0)
        if self.head:
            return torch.softmax(fn.linear(pooled, self.head_w, self.head_b), dim=-1)
        return fn.normalize(pooled, dim=-1)


class Bf16Bert:
    """A BERT encoder from a sentence-transformers folder's safetensors (mean pooling, unit vectors), or from
    tensors under the same names plus `head.weight` / `head.bias` (mean pooling, a softmax head: the pair
    judge's network, `validator.pair_network.hf_state`)."""

    name = "bf16"

    def __init__(self, folder: Path, threads: int | None = None, packed: bool | None = None):
        from safetensors import safe_open
        with safe_open(str(folder / "model.safetensors"), "pt") as f:
            prefix = "bert." if "bert.embeddings.word_embeddings.weight" in set(f.keys()) else ""
            self._build(lambda name: f.get_tensor(prefix + name), json.loads((folder / "config.json").read_text()),
                        threads, packed, head=False)

    @classmethod
    def from_tensors(cls, tensors: dict[str, torch.Tensor], config: dict, threads: int | None = None,
                     packed: bool | None = None) -> "Bf16Bert":
        self = cls.__new__(cls)
        self._build(tensors.__getitem__, config, threads, packed, head="head.weight" in tensors)
        return self

    def _build(self, read, config: dict, threads: int | None, packed: bool | None, head: bool) -> None:
        self.threads = threads

        def get(name: str, dtype=torch.bfloat16):
            return read(name).to(dtype).contiguous()
        encoder = _Encoder(get, config, native_bf16() if packed is None else packed, head)
        self.dim = int(encoder.word.shape[1])
        self._module = torch.jit.script(encoder.eval())

    def run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Unit vectors [rows, dim] (float32), or the head's probabilities, of padded token ids (int64) and their
        attention mask."""
        if self.threads and torch.get_num_threads() != self.threads:
            # torch keeps its thread count per OS thread: set it in the thread that runs (a worker thread of
            # the gateway), never process-wide, so an engine in the same process keeps its own
            torch.set_num_threads(self.threads)
        with torch.inference_mode():
            return self._module(torch.from_numpy(ids), torch.from_numpy(mask)).numpy()
