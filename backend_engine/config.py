"""Engine configuration (the `semcache backend` flags)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class EngineConfig:
    model: str = "smollm2"
    block_size: int = 16
    num_blocks: int | None = None           # wins over kv_cache_memory
    kv_cache_memory: int = 512 * 2**20      # bytes for the K/V pool
    max_model_len: int = 2048
    max_num_seqs: int = 32
    max_num_batched_tokens: int = 512       # chunked-prefill token budget per step
    eviction: str = "cost"                  # cost | lru
    kv_cold_dtype: str | None = None        # "int8": demote cached unreferenced blocks to an INT8 pool
    num_cold_blocks: int | None = None      # default: as many as hot blocks (or half the memory budget)
    enable_prefix_caching: bool = True
    speculative: str = "auto"               # auto | ngram | draft | off: where decode drafts come from
    phrase_drafts: bool = True              # auto and ngram also draft from the model's phrase store, if any
    dtype: str = "auto"                     # auto | float32 | bfloat16 (auto: dtype_choice.py)
    # torch threads of whichever thread runs the steps (None: torch's default, every core). torch keeps this
    # per OS thread, so an engine that shares its process (the gateway's encoder) sets only its own
    threads: int | None = None
    dense_rows: int | None = None           # CPU: passes of up to this many rows use dense weights (None: measured)
    data_dir: str | None = None
    models_dir: str | None = None           # prepared models (None: <data_dir>/models)
    # KV tiers below the pool (kv_tiers.py): capacities in bytes, None = the default, 0 = off.
    # Host: a safe share of available memory. Disk: on when data_dir is set, under <data_dir>/kv_tier.
    kv_host_tier: int | None = None
    kv_disk_tier: int | None = None
    kv_host_dtype: str = "int8"             # fp | int8 | int4 (system-prompt blocks: always fp)
    kv_disk_dtype: str = "int4"
    kv_tier_policy: str = "cost"            # cost | load | recompute: what to do with a prefix found in a tier

    def __post_init__(self) -> None:
        if self.block_size not in (16, 32, 64):
            raise ValueError("block_size must be 16, 32 or 64")
        if self.kv_cold_dtype not in (None, "int8"):
            raise ValueError("kv_cold_dtype must be 'int8' or unset")
        if self.speculative not in ("auto", "ngram", "draft", "off"):
            raise ValueError("speculative must be auto, ngram, draft or off")
        if self.eviction not in ("cost", "lru"):
            raise ValueError("eviction must be 'cost' or 'lru'")
        for dtype in (self.kv_host_dtype, self.kv_disk_dtype):
            if dtype not in ("fp", "int8", "int4"):
                raise ValueError("kv tier dtypes must be fp, int8 or int4")
        if self.threads is not None and self.threads < 1:
            raise ValueError("threads must be at least 1 (or unset: every core)")
        if self.kv_tier_policy not in ("cost", "load", "recompute"):
            raise ValueError("kv_tier_policy must be cost, load or recompute")
        if (self.kv_host_tier or 0) < 0 or (self.kv_disk_tier or 0) < 0:
            raise ValueError("kv tier sizes must be >= 0")
        if self.max_num_batched_tokens < 1 or self.max_num_seqs < 1 or self.max_model_len < 2:
            raise ValueError("max_num_batched_tokens, max_num_seqs and max_model_len must be positive")
