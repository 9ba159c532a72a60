"""Paged KV block pool with prefix caching.

A full block is identified by a chained hash of (parent hash, its token ids,
extra keys such as the tenant salt). Hash hits are confirmed by comparing
token ids, so a hash collision can never hand out a wrong block. Blocks of
finished requests stay cached (ref count 0) until the space is needed; then
the eviction policy picks the lowest-priority leaf.
"""
from __future__ import annotations

import hashlib
import heapq
import math
import time
from collections import deque
from typing import Callable

from backend_engine.evict_policy import POLICIES
from backend_engine.sequence import Sequence


def hash_block(parent_hash: int | None, token_ids: tuple[int, ...], extra_keys: str = "") -> int:
    h = hashlib.blake2b(digest_size=16)
    h.update((parent_hash or 0).to_bytes(16, "little"))
    h.update(len(token_ids).to_bytes(4, "little"))
    h.update(b"".join(t.to_bytes(4, "little") for t in token_ids))
    h.update(extra_keys.encode())
    return int.from_bytes(h.digest(), "little")


class Block:
    __slots__ = ("block_id", "ref_count", "hash", "token_ids", "parent", "num_children",
                 "frequency", "last_access", "depth_tokens", "num_users", "version")

    def __init__(self, block_id: int):
        self.block_id = block_id
        self.ref_count = 0
        self.hash: int | None = None
        self.token_ids: tuple[int, ...] = ()
        self.parent: Block | None = None
        self.num_children = 0          # cached blocks whose parent this is
        self.frequency = 0.0
        self.last_access = 0.0
        self.depth_tokens = 0
        self.num_users = 0
        self.version = 0               # bumps invalidate stale heap entries

    def reset(self) -> None:
        self.hash, self.token_ids, self.parent = None, (), None
        self.num_children = 0
        self.frequency, self.last_access, self.num_users = 0.0, 0.0, 0


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int, policy: str = "cost",
                 half_life_s: float = 600.0, clock: Callable[[], float] = time.monotonic):
        if policy not in POLICIES:
            raise ValueError(f"unknown eviction policy {policy!r} (choose {', '.join(POLICIES)})")
        self.block_size = block_size
        self.blocks = [Block(i) for i in range(num_blocks)]
        self.empty: deque[int] = deque(range(num_blocks))      # never hashed, or evicted
        self.cached: dict[int, Block] = {}                        # hash -> block
        self.evictable: list[tuple[float, int, int, int]] = []    # (priority, tie, block_id, version)
        self.num_evictable = 0
        self.priority = POLICIES[policy]
        self.decay = math.log(2) / half_life_s
        self.clock = clock
        self._tie = 0
        self.num_evictions = 0

    # ---- capacity -------------------------------------------------------
    @property
    def num_blocks(self) -> int:
        return len(self.blocks)

    @property
    def num_free(self) -> int:
        return len(self.empty) + self.num_evictable

    @property
    def num_used(self) -> int:
        return self.num_blocks - self.num_free

    def blocks_needed(self, num_tokens: int) -> int:
        return -(-num_tokens // self.block_size)

    # ---- prefix cache ---------------------------------------------------
    def match_prefix(self, seq: Sequence) -> list[Block]:
        """Longest run of cached full blocks for the sequence, leaving at least one token to compute."""
        matched: list[Block] = []
        parent: int | None = None
        limit = (len(seq) - 1) // self.block_size
        for i in range(limit):
            tokens = tuple(seq.token_ids[i * self.block_size:(i + 1) * self.block_size])
            h = hash_block(parent, tokens, seq.cache_salt)
            block = self.cached.get(h)
            if block is None or block.token_ids != tokens:
                break
            matched.append(block)
            parent = h
        return matched

    def can_admit(self, seq: Sequence, num_new_tokens: int) -> tuple[bool, list[Block]]:
        """Whether the sequence's prefix plus `num_new_tokens` more tokens fit now."""
        matched = self.match_prefix(seq)
        start = len(matched) * self.block_size
        new_tokens = min(num_new_tokens, len(seq) - start)
        needed = self.blocks_needed(start + new_tokens) - len(matched)
        reclaimed = sum(1 for b in matched if b.ref_count == 0)
        return self.num_free - reclaimed >= needed, matched

    def admit(self, seq: Sequence, matched: list[Block]) -> None:
        """Attach the cached prefix blocks to a sequence that holds no blocks yet."""
        assert not seq.block_table
        now = self.clock()
        for block in matched:
            self._acquire(block)
            self._touch(block, now)
            seq.block_table.append(block.block_id)
            seq.block_hashes.append(block.hash)
        seq.num_computed_tokens = len(matched) * self.block_size
        if seq.num_output_tokens == 0:      # a preempted sequence's re-admission is not a prompt hit
            seq.num_cached_tokens = seq.num_computed_tokens

    def ensure_slots(self, seq: Sequence, num_new_tokens: int) -> bool:
        """Grow the block table to hold `num_new_tokens` more tokens; False if out of blocks."""
        needed = self.blocks_needed(seq.num_computed_tokens + num_new_tokens) - len(seq.block_table)
        if needed <= 0:
            return True
        if needed > self.num_free:
            return False
        for _ in range(needed):
            block = self._take_free()
            block.ref_count = 1
            seq.block_table.append(block.block_id)
        return True

    def commit_full_blocks(self, seq: Sequence) -> None:
        """Publish the hashes of blocks that became full of computed tokens."""
        full = seq.num_computed_tokens // self.block_size
        now = self.clock()
        while len(seq.block_hashes) < full:
            i = len(seq.block_hashes)
            parent_hash = seq.block_hashes[-1] if seq.block_hashes else None
            tokens = tuple(seq.token_ids[i * self.block_size:(i + 1) * self.block_size])
            h = hash_block(parent_hash, tokens, seq.cache_salt)
            seq.block_hashes.append(h)
            block = self.blocks[seq.block_table[i]]
            if block.hash is not None or h in self.cached:
                continue    # already published, or an identical block exists (computed concurrently)
            block.hash, block.token_ids = h, tokens
            block.depth_tokens = (i + 1) * self.block_size
            # link to whichever block the chain lookup reaches, so it cannot be evicted before us
            parent = self.cached.get(parent_hash) if parent_hash is not None else None
            if parent is not None:
                block.parent = parent
                parent.num_children += 1
            self.cached[h] = block
            self._touch(block, now)

    def free(self, seq: Sequence) -> None:
        """Release a sequence's blocks, tail first; hashed blocks stay cached."""
        for block_id in reversed(seq.block_table):
            block = self.blocks[block_id]
            block.ref_count -= 1
            if block.ref_count == 0:
                if block.hash is None:
                    self.empty.append(block_id)
                else:
                    self.num_evictable += 1
                    if block.num_children == 0:
                        self._push(block)
        seq.block_table = []
        seq.block_hashes = []

    # ---- internals ------------------------------------------------------
    def _touch(self, block: Block, now: float) -> None:
        if block.frequency:
            block.frequency *= math.exp(-self.decay * max(now - block.last_access, 0.0))
        block.frequency += 1.0
        block.last_access = now
        block.num_users += 1

    def _acquire(self, block: Block) -> None:
        if block.ref_count == 0:
            self.num_evictable -= 1
            block.version += 1          # drop its heap entry lazily
        block.ref_count += 1

    def _push(self, block: Block) -> None:
        block.version += 1
        self._tie += 1
        heapq.heappush(self.evictable, (self.priority(block, self.decay), self._tie, block.block_id, block.version))

    def _take_free(self) -> Block:
        if self.empty:
            return self.blocks[self.empty.popleft()]
        while self.evictable:
            _, _, block_id, version = heapq.heappop(self.evictable)
            block = self.blocks[block_id]
            if version != block.version or block.ref_count or block.hash is None or block.num_children:
                continue
            self._evict(block)
            return block
        raise RuntimeError("no free KV block (caller must check num_free first)")

    def _evict(self, block: Block) -> None:
        del self.cached[block.hash]
        parent = block.parent
        self.num_evictable -= 1
        self.num_evictions += 1
        block.reset()
        block.version += 1
        if parent is not None:
            parent.num_children -= 1
            if parent.num_children == 0 and parent.ref_count == 0 and parent.hash is not None:
                self._push(parent)
