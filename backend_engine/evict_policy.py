"""Eviction priority of a cached, unreferenced KV block: the lowest is evicted first.

Both policies only rank leaves: the block manager never offers a block whose
cached children are still alive, so a chain is always evicted tail-first.
"""
from __future__ import annotations

import math
from typing import Protocol


class BlockStats(Protocol):
    frequency: float        # accesses, exponentially decayed to `last_access`
    last_access: float
    depth_tokens: int       # tokens from the prefix start to the end of this block
    num_users: int          # distinct sequences that used the block


def cost_priority(block: BlockStats, decay_per_s: float) -> float:
    """log(expected future hits x rebuild cost).

    expected hits = frequency * exp(-decay * (now - last_access)). The common
    factor exp(-decay * now) is dropped, so a block's priority stays fixed
    while it sits in the free pool and a heap ordering stays valid.
    """
    hits = math.log(max(block.frequency, 1e-9)) + decay_per_s * block.last_access
    rebuild = math.log(block.depth_tokens * max(block.num_users, 1))
    return hits + rebuild


def lru_priority(block: BlockStats, decay_per_s: float) -> float:
    return block.last_access


POLICIES = {"cost": cost_priority, "lru": lru_priority}
