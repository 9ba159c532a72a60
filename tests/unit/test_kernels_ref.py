"""The torch reference ops against a dense, unpaged attention computed by hand."""
import math

import torch

from kernels import paged_decode_attention, paged_exact_attention, paged_extend_attention, store_kv


def dense_attention(q, k, v, prefix, scale):
    # q [E, Hq, D], k/v [prefix+E, Hkv, D]
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    scores = torch.einsum("ehd,thd->het", q, k) * scale
    e, t = q.shape[0], k.shape[0]
    allowed = torch.arange(t)[None, :] <= (torch.arange(e)[:, None] + prefix)
    scores = scores.masked_fill(~allowed[None], float("-inf"))
    return torch.einsum("het,thd->ehd", scores.softmax(-1), v)


def make_paged(lengths, block_size=4, hkv=2, d=8, num_blocks=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    k_cache = torch.zeros(num_blocks, block_size, hkv, d)
    v_cache = torch.zeros_like(k_cache)
    perm = torch.randperm(num_blocks, generator=g).tolist()     # scattered, non-contiguous blocks
    tables, dense = [], []
    for length in lengths:
        nb = -(-length // block_size)
        blocks = [perm.pop() for _ in range(nb)]
        tables.append(blocks)
        k = torch.randn(length, hkv, d, generator=g)
        v = torch.randn(length, hkv, d, generator=g)
        slots = torch.tensor([blocks[p // block_size] * block_size + p % block_size for p in range(length)])
        store_kv(k, v, k_cache, v_cache, slots)
        dense.append((k, v))
    width = max(len(t) for t in tables)
    table = torch.tensor([t + [0] * (width - len(t)) for t in tables], dtype=torch.int32)
    return k_cache, v_cache, table, dense


def test_store_kv_skips_negative_slots():
    k_cache = torch.zeros(2, 4, 1, 2)
    v_cache = torch.zeros_like(k_cache)
    k = torch.ones(3, 1, 2)
    store_kv(k, k * 2, k_cache, v_cache, torch.tensor([0, -1, 5]))
    flat = k_cache.view(8, 1, 2)
    assert flat[0].sum() == 2 and flat[5].sum() == 2
    assert flat.sum() == 4                   # the -1 slot wrote nothing
    assert v_cache.view(8, 1, 2)[5].sum() == 4


def test_extend_matches_dense_attention_with_prefixes():
    lengths = [9, 5, 13]
    prefixes = [4, 0, 10]
    k_cache, v_cache, table, dense = make_paged(lengths)
    hq, d = 4, 8
    g = torch.Generator().manual_seed(1)
    extends = [n - p for n, p in zip(lengths, prefixes)]
    q = torch.randn(sum(extends), hq, d, generator=g)
    scale = 1 / math.sqrt(d)
    out = paged_extend_attention(q, k_cache, v_cache, table, torch.tensor(prefixes), torch.tensor(extends), scale)
    start = 0
    for (k, v), p, e in zip(dense, prefixes, extends):
        expected = dense_attention(q[start:start + e], k, v, p, scale)
        torch.testing.assert_close(out[start:start + e], expected, atol=1e-5, rtol=1e-5)
        start += e


def test_decode_matches_dense_attention():
    lengths = [7, 1, 16]
    k_cache, v_cache, table, dense = make_paged(lengths)
    g = torch.Generator().manual_seed(2)
    q = torch.randn(3, 4, 8, generator=g)
    out = paged_decode_attention(q, k_cache, v_cache, table, torch.tensor(lengths), 0.3)
    for b, (k, v) in enumerate(dense):
        expected = dense_attention(q[b:b + 1], k, v, lengths[b] - 1, 0.3)
        torch.testing.assert_close(out[b:b + 1], expected, atol=1e-5, rtol=1e-5)


def test_bf16_inputs_accumulate_in_fp32():
    k_cache, v_cache, table, dense = make_paged([6])
    q = torch.randn(1, 4, 8)
    ref = paged_decode_attention(q, k_cache, v_cache, table, torch.tensor([6]), 0.35)
    out = paged_decode_attention(q.bfloat16(), k_cache.bfloat16(), v_cache.bfloat16(), table, torch.tensor([6]), 0.35)
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(out.float(), ref, atol=3e-2, rtol=3e-2)


def test_exact_attention_matches_dense_and_gives_each_token_the_same_bits_in_any_pass():
    # what lossless speculation rests on: a verified token's row is the row a plain decode step computes
    lengths = [40, 23]
    prefixes = [33, 18]                       # 7 and 5 tokens verified in one pass, beside another sequence
    k_cache, v_cache, table, dense = make_paged(lengths, hkv=2, d=8)
    g = torch.Generator().manual_seed(3)
    extends = [n - p for n, p in zip(lengths, prefixes)]
    q = torch.randn(sum(extends), 6, 8, generator=g)    # 3 query heads per KV head
    scale = 1 / math.sqrt(8)
    out = paged_exact_attention(q, k_cache, v_cache, table, torch.tensor(prefixes), torch.tensor(extends), scale)
    start = 0
    for b, ((k, v), p, e) in enumerate(zip(dense, prefixes, extends)):
        torch.testing.assert_close(out[start:start + e], dense_attention(q[start:start + e], k, v, p, scale),
                                   atol=1e-5, rtol=1e-5)
        for i in range(e):                    # the same token decoded alone, its sequence one token long
            alone = paged_exact_attention(q[start + i:start + i + 1], k_cache, v_cache, table[b:b + 1],
                                          torch.tensor([p + i]), torch.tensor([1]), scale)
            assert torch.equal(alone[0], out[start + i])
        start += e
