"""Triton versions of the paged-KV ops; same names, signatures and semantics as `kernels.torch_ref`.

Launch configs are fixed (no autotune: it crashes under TRITON_INTERPRET=1 and
makes first requests slow). Arithmetic is fp32 whatever the storage dtype.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from kernels.int8 import ColdBlocks

DECODE_PAGES_PER_SPLIT = 8      # KV pages one decode program walks before its partial result is merged
EXTEND_BLOCK_M = 16             # query rows per extend program
MIN_DOT = 16                    # tl.dot needs every dimension >= 16


def _pow2(n: int, floor: int = 1) -> int:
    return max(triton.next_power_of_2(int(n)), floor)


# ---- store_kv ---------------------------------------------------------------
@triton.jit
def _store_kv_kernel(k_ptr, v_ptr, k_cache_ptr, v_cache_ptr, slot_ptr,
                     stride_k, stride_v, ROW: tl.constexpr, BLOCK: tl.constexpr):
    token = tl.program_id(0)
    slot = tl.load(slot_ptr + token).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < tl.where(slot >= 0, ROW, 0)       # a -1 slot writes nothing
    k = tl.load(k_ptr + token * stride_k + offs, mask=mask)
    v = tl.load(v_ptr + token * stride_v + offs, mask=mask)
    tl.store(k_cache_ptr + slot * ROW + offs, k.to(k_cache_ptr.dtype.element_ty), mask=mask)
    tl.store(v_cache_ptr + slot * ROW + offs, v.to(v_cache_ptr.dtype.element_ty), mask=mask)


def store_kv(k: torch.Tensor, v: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
             slot_mapping: torch.Tensor) -> None:
    tokens = k.shape[0]
    if tokens == 0:
        return
    k = k.reshape(tokens, -1).contiguous()
    v = v.reshape(tokens, -1).contiguous()
    row = k.shape[1]
    _store_kv_kernel[(tokens,)](k, v, k_cache, v_cache, slot_mapping.contiguous(), k.stride(0), v.stride(0),
                                ROW=row, BLOCK=_pow2(row))


# ---- one KV page, hot or INT8 cold -----------------------------------------------
@triton.jit
def _load_page(k_cache_ptr, v_cache_ptr, kq_ptr, vq_ptr, ks_ptr, vs_ptr, block, first_cold, kv_head,
               offs_n, offs_d, pos_ok, d_ok, stride_cb, stride_cs, stride_ch, num_kv_heads,
               PAGE: tl.constexpr, HAS_COLD: tl.constexpr):
    """K and V of one page as fp32 [PAGE, BLOCK_D]; cold pages are dequantized inline."""
    if HAS_COLD:
        is_cold = block >= first_cold
        hot_rows = tl.where(is_cold, 0, PAGE)          # rows to read from each pool (scalar predicates
        cold_rows = PAGE - hot_rows                    # folded into the row bound)
        hot_block = tl.where(is_cold, 0, block)
        cold_block = tl.where(is_cold, block - first_cold, 0)
        hot_ok = pos_ok & (offs_n < hot_rows)
        cold_ok = pos_ok & (offs_n < cold_rows)
        hot_off = hot_block * stride_cb + offs_n[:, None] * stride_cs + kv_head * stride_ch + offs_d[None, :]
        cold_off = cold_block * stride_cb + offs_n[:, None] * stride_cs + kv_head * stride_ch + offs_d[None, :]
        scale_off = (cold_block * PAGE + offs_n) * num_kv_heads + kv_head
        k_scale = tl.load(ks_ptr + scale_off, mask=cold_ok, other=0.0)
        v_scale = tl.load(vs_ptr + scale_off, mask=cold_ok, other=0.0)
        hot_mask = hot_ok[:, None] & d_ok[None, :]
        cold_mask = cold_ok[:, None] & d_ok[None, :]
        k = tl.load(k_cache_ptr + hot_off, mask=hot_mask, other=0.0).to(tl.float32) \
            + tl.load(kq_ptr + cold_off, mask=cold_mask, other=0).to(tl.float32) * k_scale[:, None]
        v = tl.load(v_cache_ptr + hot_off, mask=hot_mask, other=0.0).to(tl.float32) \
            + tl.load(vq_ptr + cold_off, mask=cold_mask, other=0).to(tl.float32) * v_scale[:, None]
    else:
        off = block * stride_cb + offs_n[:, None] * stride_cs + kv_head * stride_ch + offs_d[None, :]
        mask = pos_ok[:, None] & d_ok[None, :]
        k = tl.load(k_cache_ptr + off, mask=mask, other=0.0).to(tl.float32)
        v = tl.load(v_cache_ptr + off, mask=mask, other=0.0).to(tl.float32)
    return k, v


@triton.jit
def _softmax_step(q, k, v, visible, scale, m_i, l_i, acc):
    """One page of online softmax: rows of q against the page's keys where `visible`."""
    scores = tl.where(visible, tl.dot(q, tl.trans(k)) * scale, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(scores, 1))
    p = tl.exp(scores - m_new[:, None])
    alpha = tl.exp(m_i - m_new)
    return m_new, l_i * alpha + tl.sum(p, 1), acc * alpha[:, None] + tl.dot(p, v)


def _cold_args(k_cache: torch.Tensor, v_cache: torch.Tensor, cold: ColdBlocks | None) -> tuple:
    if cold is None:       # the loader never reads these when HAS_COLD is off
        return k_cache, v_cache, k_cache, v_cache, 1 << 30
    assert cold.k.shape[1:] == k_cache.shape[1:] and cold.k.is_contiguous() and k_cache.is_contiguous()
    return cold.k, cold.v, cold.k_scale, cold.v_scale, cold.first_id


# ---- decode: split-KV, two stages ------------------------------------------
@triton.jit
def _decode_split_kernel(q_ptr, k_cache_ptr, v_cache_ptr, kq_ptr, vq_ptr, ks_ptr, vs_ptr, first_cold,
                         table_ptr, lens_ptr, part_out_ptr, part_lse_ptr,
                         scale, stride_qb, stride_qh, stride_cb, stride_cs, stride_ch, stride_tb,
                         stride_pb, stride_ph, stride_ps, num_kv_heads, GROUP: tl.constexpr,
                         GROUP_PAD: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr,
                         PAGE: tl.constexpr, PAGES_PER_SPLIT: tl.constexpr, HAS_COLD: tl.constexpr):
    b = tl.program_id(0)
    kv_head = tl.program_id(1)
    split = tl.program_id(2)
    seq_len = tl.load(lens_ptr + b)
    num_pages = tl.cdiv(seq_len, PAGE)
    first = split * PAGES_PER_SPLIT
    last = tl.minimum(first + PAGES_PER_SPLIT, num_pages)

    heads = kv_head * GROUP + tl.arange(0, GROUP_PAD)
    head_ok = tl.arange(0, GROUP_PAD) < GROUP
    offs_d = tl.arange(0, BLOCK_D)
    d_ok = offs_d < HEAD_DIM
    q = tl.load(q_ptr + b * stride_qb + heads[:, None] * stride_qh + offs_d[None, :],
                mask=head_ok[:, None] & d_ok[None, :], other=0.0).to(tl.float32)
    offs_n = tl.arange(0, PAGE)

    m_i = tl.full([GROUP_PAD], float("-inf"), tl.float32)
    l_i = tl.zeros([GROUP_PAD], tl.float32)
    acc = tl.zeros([GROUP_PAD, BLOCK_D], tl.float32)
    for page in range(first, last):
        block = tl.load(table_ptr + b * stride_tb + page).to(tl.int64)
        pos = page * PAGE + offs_n
        pos_ok = pos < seq_len
        k, v = _load_page(k_cache_ptr, v_cache_ptr, kq_ptr, vq_ptr, ks_ptr, vs_ptr, block, first_cold, kv_head,
                          offs_n, offs_d, pos_ok, d_ok, stride_cb, stride_cs, stride_ch, num_kv_heads,
                          PAGE, HAS_COLD)
        m_i, l_i, acc = _softmax_step(q, k, v, pos_ok[None, :], scale, m_i, l_i, acc)

    has_work = last > first
    out = acc / tl.where(l_i > 0, l_i, 1.0)[:, None]
    lse = tl.where(has_work, m_i + tl.log(tl.where(l_i > 0, l_i, 1.0)), float("-inf"))
    base = b * stride_pb + heads * stride_ph + split * stride_ps
    tl.store(part_out_ptr + base[:, None] + offs_d[None, :], out, mask=head_ok[:, None] & d_ok[None, :])
    tl.store(part_lse_ptr + b * stride_pb // BLOCK_D + heads * stride_ph // BLOCK_D + split, lse, mask=head_ok)


@triton.jit
def _decode_merge_kernel(part_out_ptr, part_lse_ptr, out_ptr, num_splits, stride_pb, stride_ph, stride_ps,
                         stride_ob, stride_oh, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr,
                         SPLITS_PAD: tl.constexpr):
    b = tl.program_id(0)
    h = tl.program_id(1)
    offs_s = tl.arange(0, SPLITS_PAD)
    s_ok = offs_s < num_splits
    offs_d = tl.arange(0, BLOCK_D)
    lse = tl.load(part_lse_ptr + b * stride_pb // BLOCK_D + h * stride_ph // BLOCK_D + offs_s,
                  mask=s_ok, other=float("-inf"))
    top = tl.max(lse, 0)
    weight = tl.exp(lse - top)                                   # splits without work weigh 0
    parts = tl.load(part_out_ptr + b * stride_pb + h * stride_ph + offs_s[:, None] * stride_ps + offs_d[None, :],
                    mask=s_ok[:, None] & (offs_d[None, :] < HEAD_DIM), other=0.0)
    out = tl.sum(parts * weight[:, None], 0) / tl.sum(weight, 0)
    tl.store(out_ptr + b * stride_ob + h * stride_oh + offs_d, out.to(out_ptr.dtype.element_ty),
             mask=offs_d < HEAD_DIM)


def paged_decode_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                           block_tables: torch.Tensor, seq_lens: torch.Tensor, scale: float,
                           cold: ColdBlocks | None = None) -> torch.Tensor:
    batch, num_q_heads, head_dim = q.shape
    _, page, num_kv_heads, _ = k_cache.shape
    group = num_q_heads // num_kv_heads
    block_d = _pow2(head_dim, MIN_DOT)
    q = q.contiguous()
    tables = block_tables.contiguous()
    max_pages = tables.shape[1]
    num_splits = max(triton.cdiv(max_pages, DECODE_PAGES_PER_SPLIT), 1)
    # partials are padded to BLOCK_D so one stride layout serves both buffers
    part_out = torch.empty((batch, num_q_heads, num_splits, block_d), dtype=torch.float32, device=q.device)
    part_lse = torch.empty((batch, num_q_heads, num_splits), dtype=torch.float32, device=q.device)
    assert part_lse.stride(0) * block_d == part_out.stride(0) and part_lse.stride(1) * block_d == part_out.stride(1)
    _decode_split_kernel[(batch, num_kv_heads, num_splits)](
        q, k_cache, v_cache, *_cold_args(k_cache, v_cache, cold), tables, seq_lens.contiguous(), part_out,
        part_lse, scale, q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        tables.stride(0), part_out.stride(0), part_out.stride(1), part_out.stride(2), num_kv_heads,
        GROUP=group, GROUP_PAD=_pow2(group, MIN_DOT), HEAD_DIM=head_dim, BLOCK_D=block_d, PAGE=page,
        PAGES_PER_SPLIT=DECODE_PAGES_PER_SPLIT, HAS_COLD=cold is not None)
    out = torch.empty_like(q)
    _decode_merge_kernel[(batch, num_q_heads)](
        part_out, part_lse, out, num_splits, part_out.stride(0), part_out.stride(1), part_out.stride(2),
        out.stride(0), out.stride(1), HEAD_DIM=head_dim, BLOCK_D=block_d, SPLITS_PAD=_pow2(num_splits))
    return out


# ---- extend (incremental prefill) -------------------------------------------
@triton.jit
def _extend_kernel(q_ptr, k_cache_ptr, v_cache_ptr, kq_ptr, vq_ptr, ks_ptr, vs_ptr, first_cold,
                   table_ptr, prefix_ptr, extend_ptr, start_ptr, out_ptr,
                   scale, stride_qt, stride_qh, stride_cb, stride_cs, stride_ch, stride_tb, stride_ot, stride_oh,
                   num_kv_heads, GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr,
                   PAGE: tl.constexpr, BLOCK_M: tl.constexpr, HAS_COLD: tl.constexpr):
    b = tl.program_id(0)
    h = tl.program_id(1)
    m_block = tl.program_id(2)
    extend = tl.load(extend_ptr + b)
    if m_block * BLOCK_M < extend:
        prefix = tl.load(prefix_ptr + b)
        start = tl.load(start_ptr + b)
        kv_head = h // GROUP
        rows = m_block * BLOCK_M + tl.arange(0, BLOCK_M)
        row_ok = rows < extend
        offs_d = tl.arange(0, BLOCK_D)
        d_ok = offs_d < HEAD_DIM
        q = tl.load(q_ptr + (start + rows)[:, None] * stride_qt + h * stride_qh + offs_d[None, :],
                    mask=row_ok[:, None] & d_ok[None, :], other=0.0).to(tl.float32)
        offs_n = tl.arange(0, PAGE)
        m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK_M], tl.float32)
        acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
        visible = prefix + tl.minimum(extend, (m_block + 1) * BLOCK_M)     # keys any row here may see
        for page in range(0, tl.cdiv(visible, PAGE)):
            block = tl.load(table_ptr + b * stride_tb + page).to(tl.int64)
            pos = page * PAGE + offs_n
            k, v = _load_page(k_cache_ptr, v_cache_ptr, kq_ptr, vq_ptr, ks_ptr, vs_ptr, block, first_cold,
                              kv_head, offs_n, offs_d, pos < visible, d_ok, stride_cb, stride_cs, stride_ch,
                              num_kv_heads, PAGE, HAS_COLD)
            causal = pos[None, :] <= (prefix + rows)[:, None]
            m_i, l_i, acc = _softmax_step(q, k, v, causal, scale, m_i, l_i, acc)
        out = acc / l_i[:, None]
        tl.store(out_ptr + (start + rows)[:, None] * stride_ot + h * stride_oh + offs_d[None, :],
                 out.to(out_ptr.dtype.element_ty), mask=row_ok[:, None] & d_ok[None, :])


def paged_extend_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                           block_tables: torch.Tensor, prefix_lens: torch.Tensor, extend_lens: torch.Tensor,
                           scale: float, cold: ColdBlocks | None = None) -> torch.Tensor:
    _, num_q_heads, head_dim = q.shape
    _, page, num_kv_heads, _ = k_cache.shape
    batch = extend_lens.shape[0]
    q = q.contiguous()
    out = torch.empty_like(q)
    extend_lens = extend_lens.to(torch.int32).contiguous()
    starts = (torch.cumsum(extend_lens, 0) - extend_lens).to(torch.int32)
    max_extend = int(extend_lens.max()) if batch else 0
    if max_extend == 0:
        return out
    tables = block_tables.contiguous()
    grid = (batch, num_q_heads, triton.cdiv(max_extend, EXTEND_BLOCK_M))
    _extend_kernel[grid](
        q, k_cache, v_cache, *_cold_args(k_cache, v_cache, cold), tables, prefix_lens.to(torch.int32).contiguous(),
        extend_lens, starts, out, scale, q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1),
        k_cache.stride(2), tables.stride(0), out.stride(0), out.stride(1), num_kv_heads,
        GROUP=num_q_heads // num_kv_heads, HEAD_DIM=head_dim, BLOCK_D=_pow2(head_dim, MIN_DOT), PAGE=page,
        BLOCK_M=EXTEND_BLOCK_M, HAS_COLD=cold is not None)
    return out


# ---- INT4 dequantization (tier blocks coming back into the pool) -------------
@triton.jit
def _dequantize_int4_kernel(packed_ptr, scale_ptr, zero_ptr, out_ptr, HEAD_DIM: tl.constexpr,
                            GROUP: tl.constexpr, BLOCK_D: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_D)
    ok = offs < HEAD_DIM
    byte = tl.load(packed_ptr + row * (HEAD_DIM // 2) + offs // 2, mask=ok, other=0).to(tl.int32)
    nibble = tl.where(offs % 2 == 0, byte & 15, byte >> 4).to(tl.float32)
    groups: tl.constexpr = HEAD_DIM // GROUP
    scale = tl.load(scale_ptr + row * groups + offs // GROUP, mask=ok, other=0.0)
    zero = tl.load(zero_ptr + row * groups + offs // GROUP, mask=ok, other=0.0)
    tl.store(out_ptr + row * HEAD_DIM + offs, (nibble * scale + zero).to(out_ptr.dtype.element_ty), mask=ok)


def dequantize_int4(packed: torch.Tensor, scale: torch.Tensor, zero: torch.Tensor,
                    dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Same semantics as `kernels.int4.dequantize`: [..., D/2] uint8 -> [..., D]."""
    head_dim = packed.shape[-1] * 2
    group = head_dim // scale.shape[-1]
    out = torch.empty((*packed.shape[:-1], head_dim), dtype=dtype, device=packed.device)
    rows = out.numel() // head_dim
    if rows:
        _dequantize_int4_kernel[(rows,)](packed.contiguous(), scale.float().contiguous(), zero.float().contiguous(),
                                         out, HEAD_DIM=head_dim, GROUP=group, BLOCK_D=_pow2(head_dim))
    return out
