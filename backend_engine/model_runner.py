"""Owns the model and the KV pool; turns a scheduled batch into one forward pass."""
from __future__ import annotations

import logging

import torch

from backend_engine.matmul_choice import choose_dense_rows
from backend_engine.model import AttentionBatch, CausalLM
from backend_engine.sequence import Sequence
from kernels import ColdBlocks, demote_blocks
from kernels.int8 import dequantize

log = logging.getLogger("semcache.engine")


def kv_bytes_per_block(model: CausalLM, block_size: int, dtype: torch.dtype) -> int:
    cfg = model.config
    return 2 * cfg.num_layers * block_size * cfg.num_kv_heads * cfg.head_dim * torch.finfo(dtype).bits // 8


class ModelRunner:
    def __init__(self, model: CausalLM, block_size: int, num_blocks: int,
                 device: torch.device | str = "cpu", dtype: torch.dtype = torch.float32, num_cold_blocks: int = 0,
                 dense_rows: int | None = None):
        self.model = model
        self.block_size = block_size
        self.device = torch.device(device)
        # bf16: a token's numbers must not depend on what shares its pass (dtype_choice.py): no dense matmuls,
        # whose rows round apart from the packed ones, and each decoded or verified token's attention alone
        self.exact_rows = dtype == torch.bfloat16
        if self.device.type == "cpu" and model.pack_weights() and not model.dense_rows_chosen:
            # once per loaded model: engines sharing it (benches, tests) then compute with the same path
            model.dense_rows_chosen = True
            rows = 0 if self.exact_rows else choose_dense_rows(model) if dense_rows is None else dense_rows
            model.use_dense_rows(rows)
            log.info("CPU matmuls: passes of up to %d rows use dense weights, larger ones packed", rows)
        cfg = model.config
        shape = (num_blocks, block_size, cfg.num_kv_heads, cfg.head_dim)
        self.kv_caches = [(torch.zeros(shape, dtype=dtype, device=self.device),
                           torch.zeros(shape, dtype=dtype, device=self.device),
                           ColdBlocks.allocate(num_cold_blocks, block_size, cfg.num_kv_heads, cfg.head_dim,
                                               first_id=num_blocks, device=self.device)
                           if num_cold_blocks else None)
                          for _ in range(cfg.num_layers)]

    def apply_demotions(self, demotions: list[tuple[int, int]]) -> None:
        """Quantize blocks the block manager moved to the cold pool, before their hot copies are reused."""
        if not demotions:
            return
        hot_ids = [h for h, _ in demotions]
        cold_ids = [c for _, c in demotions]
        for k_cache, v_cache, cold in self.kv_caches:
            demote_blocks(k_cache, v_cache, cold, hot_ids, cold_ids)

    @torch.inference_mode()
    def read_block(self, block_id: int) -> torch.Tensor:
        """One block's K/V for every layer, [num_layers, 2, block_size, Hkv, D] (INT8 cold blocks
        dequantized), copied out of the pool for a KV tier."""
        layers = []
        for k_cache, v_cache, cold in self.kv_caches:
            if cold is not None and block_id >= cold.first_id:
                i = block_id - cold.first_id
                kv = (dequantize(cold.k[i], cold.k_scale[i]), dequantize(cold.v[i], cold.v_scale[i]))
                layers.append(torch.stack(kv).to(k_cache.dtype))
            else:
                layers.append(torch.stack((k_cache[block_id], v_cache[block_id])))
        return torch.stack(layers)

    @torch.inference_mode()
    def write_block(self, block_id: int, data: torch.Tensor) -> None:
        """Copy a block loaded from a KV tier into a hot block of the pool."""
        data = data.to(self.device)
        for layer, (k_cache, v_cache, _) in enumerate(self.kv_caches):
            k_cache[block_id].copy_(data[layer, 0])
            v_cache[block_id].copy_(data[layer, 1])

    @torch.inference_mode()
    def run(self, scheduled: list[tuple[Sequence, int]]) -> dict[int, torch.Tensor]:
        """Compute the scheduled tokens; logits [vocab] for sequences whose chunk reaches their end, and
        [1 + drafts, vocab] for a sequence verifying `num_draft` draft tokens (one row per position)."""
        input_ids: list[int] = []
        positions: list[int] = []
        slots: list[int] = []
        prefix_lens: list[int] = []
        extend_lens: list[int] = []
        logits_at: list[tuple[int, int]] = []
        bs = self.block_size
        for seq, num in scheduled:
            start = seq.num_computed_tokens
            input_ids.extend(seq.token_ids[start:start + num])
            for pos in range(start, start + num):
                positions.append(pos)
                slots.append(seq.block_table[pos // bs] * bs + pos % bs)
            prefix_lens.append(start)
            extend_lens.append(num)
            if start + num == len(seq):
                for back in range(seq.num_draft, -1, -1):
                    logits_at.append((seq.seq_id, len(input_ids) - 1 - back))
        max_blocks = max(len(seq.block_table) for seq, _ in scheduled)
        tables = torch.zeros((len(scheduled), max_blocks), dtype=torch.int32)
        for row, (seq, _) in enumerate(scheduled):
            tables[row, :len(seq.block_table)] = torch.tensor(seq.block_table, dtype=torch.int32)
        dev = self.device
        batch = AttentionBatch(
            slot_mapping=torch.tensor(slots, dtype=torch.int64, device=dev),
            block_tables=tables.to(dev),
            prefix_lens=torch.tensor(prefix_lens, dtype=torch.int32, device=dev),
            extend_lens=torch.tensor(extend_lens, dtype=torch.int32, device=dev),
            is_decode=all(n == 1 for n in extend_lens),
            exact_rows=self.exact_rows,
        )
        hidden = self.model(torch.tensor(input_ids, device=dev), torch.tensor(positions, device=dev),
                            batch, self.kv_caches)
        if not logits_at:
            return {}
        rows = torch.tensor([idx for _, idx in logits_at], device=dev)
        logits = self.model.compute_logits(hidden[rows]).cpu()
        out: dict[int, torch.Tensor] = {}
        i = 0
        for seq, _ in scheduled:
            if i < len(logits_at) and logits_at[i][0] == seq.seq_id:
                span = seq.num_draft + 1
                out[seq.seq_id] = logits[i:i + span] if seq.num_draft else logits[i]
                i += span
        return out
