"""Each Triton kernel against its torch reference, under TRITON_INTERPRET=1 on the CPU.

conftest.py sets TRITON_INTERPRET=1 before anything imports triton.
"""
import dataclasses
import math
import os

import pytest
import torch

from kernels import torch_ref
from kernels.int8 import ColdBlocks

triton_ops = pytest.importorskip("kernels.triton_ops")
# bench/device_check.sh runs these compiled for real on a GPU: inputs are built on the CPU, moved there
DEVICE = os.environ.get("SEMCACHE_TEST_DEVICE", "cpu")


def on_device(fn, *args):
    """Call a Triton op with its tensor arguments on DEVICE; the result comes back to the CPU."""
    def move(a):
        if isinstance(a, torch.Tensor):
            return a.to(DEVICE)
        if isinstance(a, ColdBlocks):
            return dataclasses.replace(a, **{f: getattr(a, f).to(DEVICE) for f in ("k", "v", "k_scale", "v_scale")})
        return a
    moved = [move(a) for a in args]
    out = fn(*moved)
    return out.cpu() if out is not None else moved

CASES = [(16, 1), (16, 4), (32, 1), (32, 4), (64, 1), (64, 4)]     # (block size, GQA ratio)


def paged_case(lengths, block_size, hkv, d, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    pages = [-(-n // block_size) for n in lengths]
    num_blocks = sum(pages) + 3
    k_cache = torch.randn(num_blocks, block_size, hkv, d, generator=g).to(dtype)
    v_cache = torch.randn(num_blocks, block_size, hkv, d, generator=g).to(dtype)
    order = torch.randperm(num_blocks, generator=g).tolist()
    width = max(pages) + 1                              # ragged tables: padded tail entries
    table = torch.zeros(len(lengths), width, dtype=torch.int32)
    for b, n in enumerate(pages):
        table[b, :n] = torch.tensor([order.pop() for _ in range(n)], dtype=torch.int32)
    return k_cache, v_cache, table


@pytest.mark.parametrize("block_size,group", CASES)
def test_store_kv_matches_reference(block_size, group):
    hkv, d, tokens = 2, 16, 37
    g = torch.Generator().manual_seed(1)
    k = torch.randn(tokens, hkv, d, generator=g)
    v = torch.randn(tokens, hkv, d, generator=g)
    slots = torch.randperm(4 * block_size, generator=g)[:tokens]
    slots[::5] = -1                                     # skipped slots
    caches = [torch.zeros(4, block_size, hkv, d) for _ in range(4)]
    torch_ref.store_kv(k, v, caches[0], caches[1], slots)
    moved = on_device(triton_ops.store_kv, k, v, caches[2], caches[3], slots)
    caches[2], caches[3] = moved[2].cpu(), moved[3].cpu()
    assert torch.equal(caches[0], caches[2]) and torch.equal(caches[1], caches[3])
    assert caches[2].abs().sum() > 0


@pytest.mark.parametrize("block_size,group", CASES)
def test_decode_matches_reference(block_size, group):
    hkv, d = 2, 32
    lengths = [1, block_size, 3 * block_size + 5, 9 * block_size + 1]   # masked tails, several splits
    k_cache, v_cache, table = paged_case(lengths, block_size, hkv, d)
    q = torch.randn(len(lengths), hkv * group, d, generator=torch.Generator().manual_seed(2))
    lens = torch.tensor(lengths, dtype=torch.int32)
    scale = 1 / math.sqrt(d)
    ref = torch_ref.paged_decode_attention(q, k_cache, v_cache, table, lens, scale)
    out = on_device(triton_ops.paged_decode_attention, q, k_cache, v_cache, table, lens, scale)
    torch.testing.assert_close(out, ref, atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize("block_size,group", CASES)
def test_extend_matches_reference(block_size, group):
    hkv, d = 2, 16
    prefixes = [0, block_size, 5, 2 * block_size + 3]
    extends = [block_size + 3, 1, 20, 0 if block_size == 64 else 7]   # ragged, one empty sequence
    lengths = [max(p + e, 1) for p, e in zip(prefixes, extends)]
    k_cache, v_cache, table = paged_case(lengths, block_size, hkv, d)
    q = torch.randn(sum(extends), hkv * group, d, generator=torch.Generator().manual_seed(3))
    args = (table, torch.tensor(prefixes, dtype=torch.int32), torch.tensor(extends, dtype=torch.int32), 0.25)
    ref = torch_ref.paged_extend_attention(q, k_cache, v_cache, *args)
    out = on_device(triton_ops.paged_extend_attention, q, k_cache, v_cache, *args)
    torch.testing.assert_close(out, ref, atol=2e-5, rtol=2e-5)


def test_bf16_cache_accumulates_in_fp32():
    lengths = [21, 40]
    k_cache, v_cache, table = paged_case(lengths, 16, 2, 16, dtype=torch.bfloat16)
    q = torch.randn(2, 8, 16, generator=torch.Generator().manual_seed(4)).to(torch.bfloat16)
    lens = torch.tensor(lengths, dtype=torch.int32)
    ref = torch_ref.paged_decode_attention(q, k_cache, v_cache, table, lens, 0.25)
    out = on_device(triton_ops.paged_decode_attention, q, k_cache, v_cache, table, lens, 0.25)
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(out.float(), ref.float(), atol=1e-2, rtol=1e-2)


def test_engine_end_to_end_through_the_interpreter(monkeypatch):
    from backend_engine import EngineConfig, LLMEngine, SamplingParams
    from backend_engine.loader import load_model
    loaded = load_model("demo", max_model_len=256)
    prompt = list(range(10, 50))
    params = SamplingParams(max_tokens=6, temperature=0, ignore_eos=True)
    results = {}
    for choice in ("torch", "triton"):
        monkeypatch.setenv("SEMCACHE_KERNELS", choice)
        engine = LLMEngine(EngineConfig(model="demo", num_blocks=16, max_model_len=256), loaded)
        first = engine.generate([prompt], params)[0]
        again = engine.generate([prompt + first["token_ids"] + [7, 8, 9]], params)[0]   # prefix reuse path
        assert again["cached_tokens"] > 0
        results[choice] = (first["token_ids"], again["token_ids"])
    assert results["triton"] == results["torch"]


def test_bad_kernel_choice_is_a_clear_error(monkeypatch):
    import kernels
    monkeypatch.setenv("SEMCACHE_KERNELS", "cuda-magic")
    with pytest.raises(ValueError, match="SEMCACHE_KERNELS"):
        kernels.backend_for(torch.zeros(1))


def mixed_case(block_size, group, hkv=2, d=32, seed=5):
    """A pool where every other block of each sequence is demoted to INT8."""
    from kernels.int8 import ColdBlocks, demote_blocks
    lengths = [3 * block_size + 7, 2 * block_size]
    k_cache, v_cache, table = paged_case(lengths, block_size, hkv, d, seed=seed)
    num_hot = k_cache.shape[0]
    cold = ColdBlocks.allocate(num_hot, block_size, hkv, d, first_id=num_hot)
    mixed = table.clone()
    hot_ids, cold_ids = [], []
    for b in range(table.shape[0]):
        for p in range(0, -(-lengths[b] // block_size), 2):
            hot_ids.append(int(table[b, p]))
            cold_ids.append(len(cold_ids))
            mixed[b, p] = num_hot + cold_ids[-1]
    demote_blocks(k_cache, v_cache, cold, hot_ids, cold_ids)
    return lengths, k_cache, v_cache, table, mixed, cold


@pytest.mark.parametrize("block_size,group", [(16, 1), (32, 4)])
def test_int8_cold_blocks_in_both_kernels(block_size, group):
    lengths, k_cache, v_cache, table, mixed, cold = mixed_case(block_size, group)
    g = torch.Generator().manual_seed(6)
    hq, d = 2 * group, 32
    lens = torch.tensor(lengths, dtype=torch.int32)
    q = torch.randn(2, hq, d, generator=g)
    exact = torch_ref.paged_decode_attention(q, k_cache, v_cache, table, lens, 0.2)
    ref = torch_ref.paged_decode_attention(q, k_cache, v_cache, mixed, lens, 0.2, cold)
    out = on_device(triton_ops.paged_decode_attention, q, k_cache, v_cache, mixed, lens, 0.2, cold)
    torch.testing.assert_close(out, ref, atol=2e-5, rtol=2e-5)           # kernel == reference, same INT8 data
    assert (ref - exact).abs().max() < 0.02                              # stated INT8 error bound
    prefixes = torch.tensor([block_size, 5], dtype=torch.int32)
    extends = lens - prefixes
    qx = torch.randn(int(extends.sum()), hq, d, generator=g)
    ref = torch_ref.paged_extend_attention(qx, k_cache, v_cache, mixed, prefixes, extends, 0.2, cold)
    out = on_device(triton_ops.paged_extend_attention, qx, k_cache, v_cache, mixed, prefixes, extends, 0.2, cold)
    torch.testing.assert_close(out, ref, atol=2e-5, rtol=2e-5)
    exact = torch_ref.paged_extend_attention(qx, k_cache, v_cache, table, prefixes, extends, 0.2)
    assert (ref - exact).abs().max() < 0.02
