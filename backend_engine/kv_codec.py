"""A KV block's payload in a lower tier: full precision, INT8 or INT4.

A block's data is one tensor [num_layers, 2 (K, V), block_size, Hkv, D] in
the model's dtype. A tier stores it as a few named tensors in its cold dtype;
`decode` gives back the model-dtype tensor that is copied into the pool.
System-prompt (protected) blocks are always stored in full precision.
"""
from __future__ import annotations

import torch

from kernels import dequantize_int4, int4, int8

DTYPES = ("fp", "int8", "int4")


def encode(data: torch.Tensor, dtype: str) -> dict[str, torch.Tensor]:
    if dtype == "fp":
        return {"x": data.contiguous()}
    if dtype == "int8":
        q, scale = int8.quantize(data)
        return {"q": q, "scale": scale}
    if dtype == "int4":
        packed, scale, zero = int4.quantize(data)
        return {"q": packed, "scale": scale, "zero": zero}
    raise ValueError(f"unknown tier dtype {dtype!r} (choose {', '.join(DTYPES)})")


def decode(payload: dict[str, torch.Tensor], dtype: str, out_dtype: torch.dtype) -> torch.Tensor:
    if dtype == "fp":
        return payload["x"].to(out_dtype)
    if dtype == "int8":
        return int8.dequantize(payload["q"], payload["scale"]).to(out_dtype)
    if dtype == "int4":
        return dequantize_int4(payload["q"], payload["scale"], payload["zero"], out_dtype)
    raise ValueError(f"unknown tier dtype {dtype!r}")


def nbytes(payload: dict[str, torch.Tensor]) -> int:
    return sum(t.numel() * t.element_size() for t in payload.values())


def pin(payload: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Page-locked host copies when a GPU is present (fast, asynchronous uploads); as is otherwise."""
    if not torch.cuda.is_available():
        return payload
    return {name: t.pin_memory() for name, t in payload.items()}
