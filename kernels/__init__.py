"""Paged-KV attention and KV-write ops.

`kernels.torch_ref` holds the reference implementations; the names exported
here dispatch to them (the Triton versions plug in behind the same names).
"""
from kernels.torch_ref import paged_decode_attention, paged_extend_attention, store_kv

__all__ = ["store_kv", "paged_decode_attention", "paged_extend_attention"]
