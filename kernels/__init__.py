"""Paged-KV attention and KV-write ops, dispatched per call.

`kernels.torch_ref` and `kernels.triton_ops` have the same names and
signatures. By default CUDA tensors go to Triton and everything else to the
torch reference; `SEMCACHE_KERNELS=torch|triton` forces one (Triton on CPU
tensors needs `TRITON_INTERPRET=1`, set before triton is imported).
"""
from __future__ import annotations

import os
from types import ModuleType

import torch

from kernels import torch_ref
from kernels.int8 import ColdBlocks, demote_blocks

_CHOICES = ("auto", "torch", "triton")


def _triton() -> ModuleType:
    from kernels import triton_ops      # imported on first use: triton's import is slow and optional on CPU
    return triton_ops


def backend_for(tensor: torch.Tensor) -> ModuleType:
    choice = os.environ.get("SEMCACHE_KERNELS", "auto").lower()
    if choice not in _CHOICES:
        raise ValueError(f"SEMCACHE_KERNELS must be one of {', '.join(_CHOICES)}, got {choice!r}")
    if choice == "torch" or (choice == "auto" and not tensor.is_cuda):
        return torch_ref
    return _triton()


def store_kv(k, v, k_cache, v_cache, slot_mapping) -> None:
    backend_for(k_cache).store_kv(k, v, k_cache, v_cache, slot_mapping)


def paged_decode_attention(q, k_cache, v_cache, block_tables, seq_lens, scale, cold: ColdBlocks | None = None):
    return backend_for(q).paged_decode_attention(q, k_cache, v_cache, block_tables, seq_lens, scale, cold)


def paged_extend_attention(q, k_cache, v_cache, block_tables, prefix_lens, extend_lens, scale,
                           cold: ColdBlocks | None = None):
    return backend_for(q).paged_extend_attention(q, k_cache, v_cache, block_tables, prefix_lens, extend_lens,
                                                 scale, cold)


def paged_exact_attention(q, k_cache, v_cache, block_tables, prefix_lens, extend_lens, scale,
                          cold: ColdBlocks | None = None):
    """Decode and extend with each decoded or verified token computed alone (the bf16 engine, CPU only)."""
    return torch_ref.paged_exact_attention(q, k_cache, v_cache, block_tables, prefix_lens, extend_lens, scale,
                                           cold)


def dequantize_int4(packed, scale, zero, dtype=torch.float32):
    return backend_for(packed).dequantize_int4(packed, scale, zero, dtype)


__all__ = ["ColdBlocks", "backend_for", "demote_blocks", "dequantize_int4", "paged_decode_attention",
           "paged_exact_attention", "paged_extend_attention", "store_kv"]
