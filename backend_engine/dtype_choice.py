"""Which dtype the engine computes in: bfloat16 on a CPU that multiplies it natively and keeps each row's
product independent of the rows beside it, float32 elsewhere.

Why bf16 there: with the weights packed for oneDNN (model.onednn_pack), a bf16 matmul on AMX or AVX512-BF16
reads half the bytes of an fp32 one and a pass of 1 to 16 rows costs about the same, so a plain decode step
is cheaper and a draft verification nearly free (docs/engine.md, "Compute dtype").

Why the row check: speculative decoding is lossless only if a token's logits are the same whether it is
decoded alone or verified with the draft beside it. An fp32 row that differs in its last bits almost never
changes the greedy token; a bf16 one that differs in its last bit often does (an earlier attempt with dense,
unpacked bf16 weights gave the same tokens on 1 of 6 requests). So `auto` takes bf16 only where every
packed product has a row floor (model.row_floor: the pass size from which each row is bit for bit the same
whatever the pass), and the engine pads smaller passes to it and never mixes in dense bf16 matmuls
(`ModelRunner`).
"""
from __future__ import annotations

import logging
from pathlib import Path

import torch

from backend_engine.model import row_floor

log = logging.getLogger("semcache.engine")
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}
# (out, in) shapes like SmolLM2's projections, and a wide one like its lm_head: every blocking oneDNN picks
CHECK_SHAPES = ((1536, 576), (576, 1536), (8192, 576))


def native_bf16() -> bool:
    """The CPU multiplies bf16 natively: AMX tiles or AVX512-BF16 (Linux cpuinfo flags); elsewhere assume
    not. (From 2026-12-05 to 12-06 AVX512-BF16 alone did not count: on an AMD EPYC with it greedy SmolLM2
    with prompt lookup parted from plain decoding, because a lone row of the down projection went through a
    kernel of its own; the row floor now sends it through the one larger passes use.)"""
    try:
        flags = set(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        return False
    return "amx_bf16" in flags or "avx512_bf16" in flags


def packed_rows_agree() -> bool:
    """Every checked shape's packed bf16 product has a row floor (model.row_floor)."""
    return all(row_floor(out_features, in_features, torch.bfloat16) is not None
               for out_features, in_features in CHECK_SHAPES)


def choose_dtype(requested: str, device: torch.device | str = "cpu") -> torch.dtype:
    """`float32`, `bfloat16`, or `auto`: bf16 on a CPU with native bf16 whose packed rows agree (see above),
    float32 anywhere else (a GPU keeps the float32 path its kernels were checked with)."""
    if requested not in (*DTYPES, "auto"):
        raise ValueError(f"dtype must be auto, float32 or bfloat16, not {requested!r}")
    if requested != "auto":
        return DTYPES[requested]
    if torch.device(device).type != "cpu" or not native_bf16() or not torch.backends.mkldnn.is_available():
        return torch.float32
    try:
        agree = packed_rows_agree()
    except RuntimeError:                      # a oneDNN without bf16 kernels: float32 is always there
        agree = False
    if not agree:
        log.info("bf16 rows change with the pass size on this CPU: the engine computes in float32")
    return torch.bfloat16 if agree else torch.float32
