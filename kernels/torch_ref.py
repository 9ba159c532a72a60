"""Reference implementations of the paged-KV ops in plain torch.

They define the semantics the Triton kernels must match, and they are what the
engine runs on the CPU. Shapes:
  k_cache, v_cache: [num_blocks, block_size, Hkv, D]
  block_tables:     [B, max_blocks] int32 (unused tail entries are ignored)
Arithmetic is done in fp32 whatever the storage dtype. With `cold`, table
entries >= cold.first_id name INT8 blocks of the cold pool (see kernels.int8).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from kernels import int4
from kernels.int8 import ColdBlocks, dequantize


def store_kv(k: torch.Tensor, v: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
             slot_mapping: torch.Tensor) -> None:
    """Write k, v [T, Hkv, D] into the caches at flat slots; slot -1 is skipped."""
    num_blocks, block_size = k_cache.shape[:2]
    keep = slot_mapping >= 0
    if not bool(keep.all()):
        k, v, slot_mapping = k[keep], v[keep], slot_mapping[keep]
    slots = slot_mapping.long()
    k_cache.view(num_blocks * block_size, *k_cache.shape[2:]).index_copy_(0, slots, k.to(k_cache.dtype))
    v_cache.view(num_blocks * block_size, *v_cache.shape[2:]).index_copy_(0, slots, v.to(v_cache.dtype))


def _blocks(cache: torch.Tensor, ids: torch.Tensor, cold: ColdBlocks | None, which: str) -> torch.Tensor:
    """Blocks `ids` [n] of the pool as [n, block_size, Hkv, D], INT8 cold ones dequantized."""
    ids = ids.long()
    if cold is None:
        return cache.index_select(0, ids)      # several times faster than advanced indexing on CPU
    is_cold = ids >= cold.first_id
    hot = cache.index_select(0, torch.where(is_cold, 0, ids)).float()
    if not bool(is_cold.any()):
        return hot
    cold_ids = torch.where(is_cold, ids - cold.first_id, 0)
    pool, scales = (cold.k, cold.k_scale) if which == "k" else (cold.v, cold.v_scale)
    deq = dequantize(pool.index_select(0, cold_ids), scales.index_select(0, cold_ids))
    return torch.where(is_cold[:, None, None, None], deq, hot)


def _gather(cache: torch.Tensor, block_table: torch.Tensor, length: int, cold: ColdBlocks | None,
            which: str) -> torch.Tensor:
    """The first `length` cached tokens of one sequence: [length, Hkv, D]."""
    block_size = cache.shape[1]
    num = (length + block_size - 1) // block_size
    blocks = _blocks(cache, block_table[:num], cold, which)
    return blocks.reshape(num * block_size, *cache.shape[2:])[:length]


def paged_decode_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                           block_tables: torch.Tensor, seq_lens: torch.Tensor,
                           scale: float, cold: ColdBlocks | None = None) -> torch.Tensor:
    """One query token per sequence attending to its first seq_lens[b] cached tokens.

    q: [B, Hq, D] -> out [B, Hq, D].
    """
    batch, num_q_heads, head_dim = q.shape
    num_kv_heads = k_cache.shape[2]
    block_size = k_cache.shape[1]
    lens = seq_lens.tolist()
    max_len = max(lens)
    num = (max_len + block_size - 1) // block_size
    table = block_tables[:, :num].reshape(-1)
    k = _blocks(k_cache, table, cold, "k").view(batch, num * block_size, num_kv_heads, head_dim)[:, :max_len]
    v = _blocks(v_cache, table, cold, "v").view(batch, num * block_size, num_kv_heads, head_dim)[:, :max_len]
    mask = None
    if min(lens) != max_len:        # equal lengths (always so for one sequence) skip the mask: SDPA's fast path
        positions = torch.arange(max_len, device=q.device)
        mask = (positions[None, :] < seq_lens.to(q.device).long()[:, None])[:, None, None, :]   # [B, 1, 1, L]
    out = F.scaled_dot_product_attention(
        q.float().unsqueeze(2),                                               # [B, Hq, 1, D]
        k.float().transpose(1, 2), v.float().transpose(1, 2),                 # [B, Hkv, L, D]
        attn_mask=mask, scale=scale, enable_gqa=num_q_heads != num_kv_heads,
    )
    return out.squeeze(2).to(q.dtype)


def paged_extend_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                           block_tables: torch.Tensor, prefix_lens: torch.Tensor,
                           extend_lens: torch.Tensor, scale: float,
                           cold: ColdBlocks | None = None) -> torch.Tensor:
    """Incremental prefill: new token i of sequence b sees positions < prefix_lens[b] + i + 1.

    q is packed [sum(extend_lens), Hq, D]; the new tokens' K/V are already in the cache.
    """
    return _per_sequence(q, k_cache, v_cache, block_tables, prefix_lens, extend_lens, scale, cold, _extend_one)


def _per_sequence(q, k_cache, v_cache, block_tables, prefix_lens, extend_lens, scale, cold, one) -> torch.Tensor:
    """Each sequence's new tokens through `one(q_rows, k_cache, v_cache, block_table, prefix, cold, scale)`."""
    out = torch.empty_like(q)
    start = 0
    for b, (prefix, extend) in enumerate(zip(prefix_lens.tolist(), extend_lens.tolist())):
        if extend:
            out[start:start + extend] = one(q[start:start + extend], k_cache, v_cache, block_tables[b], prefix,
                                            cold, scale)
        start += extend
    return out


def _extend_one(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_table: torch.Tensor,
                prefix: int, cold: ColdBlocks | None, scale: float) -> torch.Tensor:
    """One sequence's new tokens [E, Hq, D] in one SDPA call, causal over its prefix and themselves."""
    extend, num_q_heads = q.shape[0], q.shape[1]
    num_kv_heads = k_cache.shape[2]
    total = prefix + extend
    # 4-D [1, H, L, D]: with 3-D inputs torch's CPU SDPA falls back to a ~7x slower path
    k = _gather(k_cache, block_table, total, cold, "k").float().transpose(0, 1)[None]  # [1, Hkv, L, D]
    v = _gather(v_cache, block_table, total, cold, "v").float().transpose(0, 1)[None]
    qb = q.float().transpose(0, 1)[None]                                              # [1, Hq, E, D]
    if prefix == 0:
        o = F.scaled_dot_product_attention(qb, k, v, is_causal=True, scale=scale,
                                           enable_gqa=num_q_heads != num_kv_heads)
    else:
        rows = torch.arange(extend, device=q.device)[:, None] + prefix
        mask = torch.arange(total, device=q.device)[None, :] <= rows      # [E, total]
        o = F.scaled_dot_product_attention(qb, k, v, attn_mask=mask, scale=scale,
                                           enable_gqa=num_q_heads != num_kv_heads)
    return o[0].transpose(0, 1).to(q.dtype)


# a sequence adding at most this many tokens is decoding or verifying a draft (speculative.K_MAX + 1)
EXACT_ROWS = 17


def paged_exact_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                          block_tables: torch.Tensor, prefix_lens: torch.Tensor,
                          extend_lens: torch.Tensor, scale: float,
                          cold: ColdBlocks | None = None) -> torch.Tensor:
    """Decode and extend in one, with every decoded or verified token computed the same way whatever shares
    its pass: one SDPA call per token over exactly its own keys, no mask. Batched and masked, a token's
    output differs in its last bits from the same token's alone (2e-7 in fp32); in bf16 that turns into
    another rounding and, layers later, sometimes another greedy token, so speculation would no longer be
    lossless (backend_engine/dtype_choice.py). A sequence adding more than EXACT_ROWS tokens is a prompt,
    computed the same way in every run, and keeps the one-call path.

    q is packed [sum(extend_lens), Hq, D]; the new tokens' K/V are already in the cache."""
    return _per_sequence(q, k_cache, v_cache, block_tables, prefix_lens, extend_lens, scale, cold, _rows_alone)


def _rows_alone(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_table: torch.Tensor,
                prefix: int, cold: ColdBlocks | None, scale: float) -> torch.Tensor:
    extend, num_q_heads, dim = q.shape
    if extend > EXACT_ROWS:
        return _extend_one(q, k_cache, v_cache, block_table, prefix, cold, scale)
    num_kv_heads = k_cache.shape[2]
    group = num_q_heads // num_kv_heads
    # a token's query heads that share a KV head are that call's G query rows ([1, Hkv, G, D]): the call then
    # reads each K/V head once, without SDPA's GQA expansion (1.2-1.7x faster than [1, Hq, 1, D]), and it has
    # the same shape whatever the step verifies, so the token's output is the same bits in every pass
    rows = q.float().view(extend, num_kv_heads, group, dim)
    k = _gather(k_cache, block_table, prefix + extend, cold, "k").float().transpose(0, 1)[None]  # [1, Hkv, L, D]
    v = _gather(v_cache, block_table, prefix + extend, cold, "v").float().transpose(0, 1)[None]
    out = [F.scaled_dot_product_attention(rows[i][None], k[:, :, :prefix + i + 1], v[:, :, :prefix + i + 1],
                                          scale=scale)[0] for i in range(extend)]
    return torch.stack(out).view(extend, num_q_heads, dim).to(q.dtype)


def dequantize_int4(packed: torch.Tensor, scale: torch.Tensor, zero: torch.Tensor,
                    dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """INT4 group-wise blocks -> `dtype` (see kernels.int4)."""
    return int4.dequantize(packed, scale, zero, dtype)
