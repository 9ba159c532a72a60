"""INT8 cold KV blocks: one fp32 scale per (token, head), symmetric, round to nearest.

Cold blocks live in their own pool; a block-table entry >= `first_id` refers
to cold block `entry - first_id`. The attention ops dequantize them inline.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class ColdBlocks:
    k: torch.Tensor            # int8 [num_cold, block_size, Hkv, D]
    v: torch.Tensor
    k_scale: torch.Tensor      # fp32 [num_cold, block_size, Hkv]
    v_scale: torch.Tensor
    first_id: int              # block ids at or above this are cold

    @classmethod
    def allocate(cls, num_cold: int, block_size: int, num_kv_heads: int, head_dim: int, first_id: int,
                 device: torch.device | str = "cpu") -> "ColdBlocks":
        shape = (num_cold, block_size, num_kv_heads, head_dim)
        return cls(torch.zeros(shape, dtype=torch.int8, device=device),
                   torch.zeros(shape, dtype=torch.int8, device=device),
                   torch.zeros(shape[:3], dtype=torch.float32, device=device),
                   torch.zeros(shape[:3], dtype=torch.float32, device=device), first_id)

    @staticmethod
    def bytes_per_block(block_size: int, num_kv_heads: int, head_dim: int, num_layers: int) -> int:
        return 2 * num_layers * block_size * num_kv_heads * (head_dim + 4)


def quantize(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """x [..., D] -> (int8 [..., D], fp32 scale [...]) with x ≈ q * scale."""
    x = x.float()
    scale = x.abs().amax(dim=-1).clamp(min=1e-8) / 127.0
    q = torch.round(x / scale.unsqueeze(-1)).clamp(-127, 127).to(torch.int8)
    return q, scale


def dequantize(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return q.float() * scale.unsqueeze(-1)


def demote_blocks(k_cache: torch.Tensor, v_cache: torch.Tensor, cold: ColdBlocks,
                  hot_ids: list[int], cold_ids: list[int]) -> None:
    """Copy full hot blocks into cold slots as INT8 (before the hot blocks are reused)."""
    if not hot_ids:
        return
    src = torch.tensor(hot_ids, dtype=torch.long, device=k_cache.device)
    dst = torch.tensor(cold_ids, dtype=torch.long, device=k_cache.device)
    for cache, q_pool, s_pool in ((k_cache, cold.k, cold.k_scale), (v_cache, cold.v, cold.v_scale)):
        q, s = quantize(cache.index_select(0, src))
        q_pool.index_copy_(0, dst, q)
        s_pool.index_copy_(0, dst, s)
