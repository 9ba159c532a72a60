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
import time
from pathlib import Path
from typing import List, Optional, Union

import numpy as np
import torch
from torch import nn
from torch.nn import functional as fn


def native_bf16() -> bool:
    """The CPU multiplies bf16 natively (Linux cpuinfo flags); elsewhere assume not."""
    try:
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False
    return "amx_bf16" in flags or "avx512_bf16" in flags


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
    def __init__(self, get, config: dict, packed: bool):
        super().__init__()
        heads, self.eps = int(config["num_attention_heads"]), float(config.get("layer_norm_eps", 1e-12))
        self.word = get("embeddings.word_embeddings.weight")
        self.position = get("embeddings.position_embeddings.weight", torch.float32)
        self.token_type = get("embeddings.token_type_embeddings.weight", torch.float32)[0]
        self.norm_w = get("embeddings.LayerNorm.weight", torch.float32)
        self.norm_b = get("embeddings.LayerNorm.bias", torch.float32)
        self.layers = nn.ModuleList(_Layer(get, f"encoder.layer.{i}.", heads, self.eps, packed)
                                    for i in range(int(config["num_hidden_layers"])))

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        width, dim = ids.shape[1], self.word.shape[1]
        x = self.word[ids].float() + self.position[:width] + self.token_type
        x = fn.layer_norm(x, [dim], self.norm_w, self.norm_b, self.eps).to(torch.bfloat16)
        keep = (mask > 0)[:, None, None, :]
        for layer in self.layers:
            x = layer(x, keep)
        m = mask[:, :, None].float()
        pooled = (x.float() * m).sum(1) / m.sum(1).clamp(min=1.0)
        return fn.normalize(pooled, dim=-1)


class Bf16Bert:
    """A BERT encoder (mean pooling, unit vectors) from a sentence-transformers folder's safetensors."""

    def __init__(self, folder: Path, threads: int | None = None, packed: bool | None = None):
        from safetensors import safe_open
        if threads:
            # torch's pool is per process: only the gateway's own encoder budget is given here (one worker of
            # several), never the embedded engine's
            torch.set_num_threads(threads)
        config = json.loads((folder / "config.json").read_text())
        with safe_open(str(folder / "model.safetensors"), "pt") as f:
            prefix = "bert." if "bert.embeddings.word_embeddings.weight" in set(f.keys()) else ""

            def get(name: str, dtype=torch.bfloat16):
                return f.get_tensor(prefix + name).to(dtype).contiguous()
            encoder = _Encoder(get, config, native_bf16() if packed is None else packed)
        self.dim = int(encoder.word.shape[1])
        self._module = torch.jit.script(encoder.eval())

    def run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Unit vectors [rows, dim] (float32) of padded token ids (int64) and their attention mask."""
        with torch.inference_mode():
            return self._module(torch.from_numpy(ids), torch.from_numpy(mask)).numpy()


def cpu_seconds(fn, repeats: int) -> float:
    """The least process CPU time of one call over `repeats` (after one warm-up): the cost that competes with
    other requests for the cores, which wall time on an idle machine hides."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def faster_by(onnx_seconds: float, bf16_seconds: float, margin: float = 0.15) -> bool:
    """bf16 is used only when it saves at least `margin` of the CPU: a smaller gain is within the noise of the
    measurement, and fp32 is the reference the thresholds were fit on."""
    return bf16_seconds <= (1.0 - margin) * onnx_seconds
