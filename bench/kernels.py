"""Paged-KV kernels on CUDA: time and achieved memory bandwidth, Triton vs the torch reference.

    python bench/kernels.py [--peak-gbps 4800]

For each kernel and shape it prints time per call for both backends, the
bytes the kernel must move, the achieved GB/s and that as a share of the
GPU's HBM peak (H200: 4.8 TB/s; pass --peak-gbps for another GPU). On a CPU it
says that it needs a GPU and exits. It asserts nothing.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernels import ColdBlocks, demote_blocks, torch_ref  # noqa: E402


def cuda_time(fn, iters: int = 50) -> float:
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters / 1000


def paged(batch: int, ctx: int, hkv: int, d: int, block: int, dtype):
    pages = -(-ctx // block)
    num_blocks = batch * pages
    k = torch.randn(num_blocks, block, hkv, d, device="cuda", dtype=dtype)
    v = torch.randn_like(k)
    table = torch.randperm(num_blocks, device="cuda", dtype=torch.int32).view(batch, pages)
    return k, v, table


def row(name, seconds_triton, seconds_ref, nbytes, peak):
    gbps = nbytes / seconds_triton / 1e9
    print(f"{name:<44} {seconds_triton * 1e6:>9.1f} {seconds_ref * 1e6:>10.1f} {seconds_ref / seconds_triton:>7.1f}x "
          f"{nbytes / 1e6:>9.1f} {gbps:>8.0f} {100 * gbps / peak:>6.1f}%")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--peak-gbps", type=float, default=4800.0, help="HBM peak in GB/s (H200: 4800)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("bench/kernels.py needs a CUDA GPU; on this machine the kernels run only under TRITON_INTERPRET=1 "
              "(see tests/unit/test_triton_kernels.py).")
        return
    from kernels import triton_ops
    print(f"GPU: {torch.cuda.get_device_name()}, peak {args.peak_gbps:.0f} GB/s")
    print(f"{'kernel / shape':<44} {'triton us':>9} {'torch us':>10} {'speedup':>8} {'MB moved':>9} {'GB/s':>8} "
          f"{'% peak':>7}")
    hq, hkv, d, block = 32, 8, 128, 16
    for dtype in (torch.bfloat16,):
        size = torch.finfo(dtype).bits // 8
        for batch, ctx in ((1, 4096), (32, 1024), (32, 4096), (64, 4096)):
            k, v, table = paged(batch, ctx, hkv, d, block, dtype)
            q = torch.randn(batch, hq, d, device="cuda", dtype=dtype)
            lens = torch.full((batch,), ctx, device="cuda", dtype=torch.int32)
            t = cuda_time(lambda: triton_ops.paged_decode_attention(q, k, v, table, lens, d ** -0.5))
            r = cuda_time(lambda: torch_ref.paged_decode_attention(q, k, v, table, lens, d ** -0.5), iters=10)
            nbytes = 2 * batch * ctx * hkv * d * size + 2 * q.numel() * size
            row(f"decode bf16 B={batch} ctx={ctx}", t, r, nbytes, args.peak_gbps)
            if (batch, ctx) == (32, 4096):
                cold = ColdBlocks.allocate(k.shape[0], block, hkv, d, first_id=k.shape[0], device="cuda")
                ids = list(range(k.shape[0]))
                demote_blocks(k, v, cold, ids, ids)
                cold_table = table + k.shape[0]
                t = cuda_time(lambda: triton_ops.paged_decode_attention(q, k, v, cold_table, lens, d ** -0.5, cold))
                r = cuda_time(lambda: torch_ref.paged_decode_attention(q, k, v, cold_table, lens, d ** -0.5, cold),
                              iters=5)
                row(f"decode int8 cold B={batch} ctx={ctx}", t, r, 2 * batch * ctx * hkv * (d + 4), args.peak_gbps)
        for batch, prefix, extend in ((8, 2048, 128), (1, 0, 2048)):
            k, v, table = paged(batch, prefix + extend, hkv, d, block, dtype)
            q = torch.randn(batch * extend, hq, d, device="cuda", dtype=dtype)
            pl = torch.full((batch,), prefix, device="cuda", dtype=torch.int32)
            el = torch.full((batch,), extend, device="cuda", dtype=torch.int32)
            t = cuda_time(lambda: triton_ops.paged_extend_attention(q, k, v, table, pl, el, d ** -0.5), iters=20)
            r = cuda_time(lambda: torch_ref.paged_extend_attention(q, k, v, table, pl, el, d ** -0.5), iters=5)
            nbytes = 2 * batch * (prefix + extend) * hkv * d * size + 2 * q.numel() * size
            row(f"extend bf16 B={batch} prefix={prefix} new={extend}", t, r, nbytes, args.peak_gbps)
        tokens = 4096
        kn = torch.randn(tokens, hkv, d, device="cuda", dtype=dtype)
        k, v, _ = paged(1, tokens * 2, hkv, d, block, dtype)
        slots = torch.randperm(k.shape[0] * block, device="cuda")[:tokens]
        t = cuda_time(lambda: triton_ops.store_kv(kn, kn, k, v, slots))
        r = cuda_time(lambda: torch_ref.store_kv(kn, kn, k, v, slots))
        row(f"store_kv bf16 T={tokens}", t, r, 4 * kn.numel() * size, args.peak_gbps)


if __name__ == "__main__":
    main()
