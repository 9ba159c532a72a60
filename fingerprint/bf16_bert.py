"""The e5 encoder run in bfloat16 by torch, for CPUs with native bf16 matmuls (AMX, AVX512-BF16).

On such a CPU oneDNN multiplies bf16 matrices several times faster than fp32,
and an encoding costs 25-40% less CPU than ONNX Runtime's fp32 run
(docs/benchmarks.md). Weights are stored in bf16; sums, softmax and layer norms
accumulate in fp32 inside the kernels, so the unit vectors stay within a cosine
of 0.9999 of the fp32 ones. On a CPU without native bf16 the same matmuls are
emulated and slower, so `TextEncoder` uses this only where it measured it
cheaper (`backend_choice`).
"""
from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import numpy as np


def native_bf16() -> bool:
    """The CPU multiplies bf16 natively (Linux cpuinfo flags); elsewhere assume not."""
    try:
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False
    return "amx_bf16" in flags or "avx512_bf16" in flags


class Bf16Bert:
    """A BERT encoder (mean pooling, unit vectors) from a sentence-transformers folder's safetensors."""

    def __init__(self, folder: Path, threads: int | None = None):
        import torch
        from safetensors import safe_open
        self.torch = torch
        if threads:
            # torch's pool is per process: only the gateway's own encoder budget is given here (one worker of
            # several), never the embedded engine's
            torch.set_num_threads(threads)
        config = json.loads((folder / "config.json").read_text())
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        bf16 = torch.bfloat16
        with safe_open(str(folder / "model.safetensors"), "pt") as f:
            names = set(f.keys())
            prefix = "bert." if "bert.embeddings.word_embeddings.weight" in names else ""

            def get(name: str, dtype=bf16):
                return f.get_tensor(prefix + name).to(dtype).contiguous()
            self.word = get("embeddings.word_embeddings.weight")
            self.position = get("embeddings.position_embeddings.weight", torch.float32)
            self.token_type = get("embeddings.token_type_embeddings.weight", torch.float32)[0]
            self.embed_norm = (get("embeddings.LayerNorm.weight", torch.float32),
                               get("embeddings.LayerNorm.bias", torch.float32))
            self.layers = []
            for i in range(int(config["num_hidden_layers"])):
                p = f"encoder.layer.{i}."
                qkv = [f"{p}attention.self.{n}" for n in ("query", "key", "value")]
                self.layers.append((
                    torch.cat([get(n + ".weight") for n in qkv]), torch.cat([get(n + ".bias") for n in qkv]),
                    get(p + "attention.output.dense.weight"), get(p + "attention.output.dense.bias"),
                    get(p + "attention.output.LayerNorm.weight"), get(p + "attention.output.LayerNorm.bias"),
                    get(p + "intermediate.dense.weight"), get(p + "intermediate.dense.bias"),
                    get(p + "output.dense.weight"), get(p + "output.dense.bias"),
                    get(p + "output.LayerNorm.weight"), get(p + "output.LayerNorm.bias")))
        self.dim = int(self.word.shape[1])
        with torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore", torch.jit.TracerWarning)     # sizes are traced as sizes, by design
            # one traced call per run: torch then releases the GIL once, not at each of ~150 small ops, which
            # under load queued every op behind the event loop's thread (an encoding took 900 ms beside a
            # busy Python thread, against 25 ms traced)
            example = (torch.ones(2, 8, dtype=torch.long), torch.ones(2, 8, dtype=torch.long))
            self._traced = torch.jit.trace(self._forward, example, check_trace=False)

    def _forward(self, ids, mask):
        torch, fn = self.torch, self.torch.nn.functional
        rows, width = ids.shape
        x = self.word[ids].float() + self.position[:width] + self.token_type
        x = fn.layer_norm(x, (self.dim,), *self.embed_norm, self.eps).to(torch.bfloat16)
        keep = (mask > 0)[:, None, None, :]
        d = self.dim // self.heads
        for qkv_w, qkv_b, o_w, o_b, n1_w, n1_b, i_w, i_b, f_w, f_b, n2_w, n2_b in self.layers:
            q, k, v = fn.linear(x, qkv_w, qkv_b).view(rows, width, 3, self.heads, d).permute(2, 0, 3, 1, 4)
            ctx = fn.scaled_dot_product_attention(q, k, v, attn_mask=keep).transpose(1, 2).reshape(rows, width,
                                                                                                     self.dim)
            x = fn.layer_norm(x + fn.linear(ctx, o_w, o_b), (self.dim,), n1_w, n1_b, self.eps)
            x = fn.layer_norm(x + fn.linear(fn.gelu(fn.linear(x, i_w, i_b)), f_w, f_b), (self.dim,), n2_w, n2_b,
                              self.eps)
        m = mask[:, :, None].float()
        pooled = (x.float() * m).sum(1) / m.sum(1).clamp(min=1.0)
        return fn.normalize(pooled, dim=-1)

    def run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Unit vectors [rows, dim] (float32) of padded token ids (int64) and their attention mask."""
        with self.torch.inference_mode():
            return self._traced(self.torch.from_numpy(ids), self.torch.from_numpy(mask)).numpy()


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
