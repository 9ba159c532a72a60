"""Which CPU matmul serves a pass of few rows: the dense weight or its oneDNN-packed copy, measured here.

Why measured: the packed layout (model.onednn_pack) made a 1-row decode step 1.47x cheaper on the AMD EPYC
it was written on, while on a Xeon with AVX-512 and AMX the dense weight runs 1- and 2-row passes 17-27%
faster than the packed one, and the packed one wins from about 5 rows (docs/benchmarks.md, "CPU matmuls").
So at load the runner times whole forward passes of a few rows both ways, interleaved, and serves passes up
to the largest row count where dense is clearly faster with the dense weight. Both paths compute the same
products; only rounding differs.
"""
from __future__ import annotations

import time

import torch

from backend_engine.model import AttentionBatch, CausalLM

ROWS = (1, 2, 4)                 # pass sizes measured: a decode step and short draft verifications
REPEATS = 3
MARGIN = 0.95                    # dense must be at least 5% faster: timing noise never flips a pass size


def _pass_seconds(model: CausalLM, rows: int, dense_rows: int) -> float:
    cfg = model.config
    block = max(16, rows)
    kv = [(torch.zeros(1, block, cfg.num_kv_heads, cfg.head_dim), torch.zeros(1, block, cfg.num_kv_heads,
                                                                               cfg.head_dim), None)
          for _ in range(cfg.num_layers)]
    positions = torch.arange(rows)
    batch = AttentionBatch(slot_mapping=positions.clone(), block_tables=torch.zeros((1, 1), dtype=torch.int32),
                           prefix_lens=torch.zeros(1, dtype=torch.int32),
                           extend_lens=torch.tensor([rows], dtype=torch.int32), is_decode=rows == 1)
    ids = torch.zeros(rows, dtype=torch.long)
    model.use_dense_rows(dense_rows)
    with torch.inference_mode():
        started = time.perf_counter()
        model.compute_logits(model(ids, positions, batch, kv))
        return time.perf_counter() - started


def choose_dense_rows(model: CausalLM) -> int:
    """The largest measured row count up to which dense passes beat packed ones (0: always packed); leaves
    the model set to it. Only for a model whose weights `pack_weights` packed."""
    best = {(rows, mode): float("inf") for rows in ROWS for mode in ("dense", "packed")}
    for round_ in range(REPEATS + 1):            # round 0 warms both paths up and is not kept
        for rows in ROWS:
            for mode, dense_rows in (("dense", rows), ("packed", 0)):
                seconds = _pass_seconds(model, rows, dense_rows)
                if round_:
                    best[rows, mode] = min(best[rows, mode], seconds)
    chosen = 0
    for rows in ROWS:
        if best[rows, "dense"] >= MARGIN * best[rows, "packed"]:
            break
        chosen = rows
    model.use_dense_rows(chosen)
    return chosen
