"""Paged KV block pool with prefix caching.

A full block is identified by a chained hash of (parent hash, its token ids,
extra keys such as the tenant salt). Hash hits are confirmed by comparing
token ids, so a hash collision can never hand out a wrong block. Blocks of
finished requests stay cached (ref count 0) until the space is needed; then
the eviction policy picks the lowest-priority leaf, so chains go tail first.

With an INT8 cold pool, a cached block whose last user leaves is demoted:
its identity moves to a cold block at once, the hot block is freed, and the
model runner quantizes the data before the next forward pass. Blocks of a
protected prefix (the system prompt) are never demoted.

With KV tiers (kv_tiers.py), `on_evict` sees every evicted cached block while
its data is still intact, so it can be copied to the host tier; blocks loaded
back from a tier are `install`ed as cached blocks, pinned for the sequences
waiting on them until they are admitted.
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
    __slots__ = ("block_id", "ref_count", "hash", "parent_hash", "token_ids", "parent", "children", "protected",
                 "frequency", "last_access", "depth_tokens", "num_users", "version")

    def __init__(self, block_id: int):
        self.block_id = block_id
        self.ref_count = 0
        self.version = 0               # bumps invalidate stale heap entries
        self.reset()

    def reset(self) -> None:
        self.hash: int | None = None
        self.parent_hash: int | None = None      # the chain's previous block, cached here or not
        self.token_ids: tuple[int, ...] = ()
        self.parent: Block | None = None
        self.children: set[Block] = set()      # cached blocks whose parent this is
        self.protected = False
        self.frequency, self.last_access, self.depth_tokens, self.num_users = 0.0, 0.0, 0, 0

    def take_identity(self, other: "Block") -> None:
        for name in ("hash", "parent_hash", "token_ids", "parent", "children", "protected", "frequency",
                     "last_access", "depth_tokens", "num_users"):
            setattr(self, name, getattr(other, name))


class Pool:
    """One range of block ids: never-used/evicted blocks, and cached unreferenced ones by priority."""

    def __init__(self, first: int, count: int):
        self.first, self.count = first, count
        self.empty: deque[int] = deque(range(first, first + count))
        self.evictable: list[tuple[float, int, int, int]] = []    # (priority, tie, block_id, version)
        self.num_evictable = 0

    def __contains__(self, block_id: int) -> bool:
        return self.first <= block_id < self.first + self.count

    @property
    def num_free(self) -> int:
        return len(self.empty) + self.num_evictable


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int, policy: str = "cost",
                 half_life_s: float = 600.0, clock: Callable[[], float] = time.monotonic,
                 num_cold_blocks: int = 0):
        if policy not in POLICIES:
            raise ValueError(f"unknown eviction policy {policy!r} (choose {', '.join(POLICIES)})")
        self.block_size = block_size
        self.blocks = [Block(i) for i in range(num_blocks + num_cold_blocks)]
        self.hot = Pool(0, num_blocks)
        self.cold = Pool(num_blocks, num_cold_blocks) if num_cold_blocks else None
        self.cached: dict[int, Block] = {}                        # hash -> block
        self.priority = POLICIES[policy]
        self.decay = math.log(2) / half_life_s
        self.clock = clock
        self._tie = 0
        self.num_evictions = 0
        self.num_demotions = 0
        self.pending_demotions: list[tuple[int, int]] = []       # (hot id, cold index) awaiting the copy
        self.on_evict: Callable[[Block], None] | None = None     # sees an evicted block before it is reset

    # ---- capacity (of the hot pool, where every new token is written) ---
    @property
    def num_blocks(self) -> int:
        return self.hot.count

    @property
    def num_free(self) -> int:
        return self.hot.num_free

    @property
    def num_used(self) -> int:
        return self.hot.count - self.hot.num_free

    @property
    def num_cold_cached(self) -> int:
        return 0 if self.cold is None else self.cold.count - len(self.cold.empty)

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
        reclaimed = sum(1 for b in matched if b.ref_count == 0 and b.block_id in self.hot)
        return self.num_free - reclaimed >= needed, matched

    def admit(self, seq: Sequence, matched: list[Block]) -> None:
        """Attach the cached prefix blocks to a sequence that holds no blocks yet."""
        assert not seq.block_table
        now = self.clock()
        protected = seq.num_protected_tokens // self.block_size
        for i, block in enumerate(matched):
            self._acquire(block)
            self._touch(block, now)
            block.protected |= i < protected
            seq.block_table.append(block.block_id)
            seq.block_hashes.append(block.hash)
        seq.num_computed_tokens = len(matched) * self.block_size
        if seq.num_output_tokens == 0:      # a preempted sequence's re-admission is not a prompt hit
            seq.num_cached_tokens = seq.num_computed_tokens
        self.unpin(seq)                     # its own references hold the loaded blocks now

    def ensure_slots(self, seq: Sequence, num_new_tokens: int) -> bool:
        """Grow the block table to hold `num_new_tokens` more tokens; False if out of blocks."""
        needed = self.blocks_needed(seq.num_computed_tokens + num_new_tokens) - len(seq.block_table)
        if needed <= 0:
            return True
        if needed > self.num_free:
            return False
        for _ in range(needed):
            block = self._take_free(self.hot)
            block.ref_count = 1
            seq.block_table.append(block.block_id)
        return True

    def commit_full_blocks(self, seq: Sequence) -> None:
        """Publish the hashes of blocks that became full of computed tokens."""
        full = seq.num_computed_tokens // self.block_size
        protected = seq.num_protected_tokens // self.block_size
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
            block.hash, block.parent_hash, block.token_ids = h, parent_hash, tokens
            block.depth_tokens = (i + 1) * self.block_size
            block.protected = i < protected
            # link to whichever block the chain lookup reaches, so it cannot be evicted before us
            parent = self.cached.get(parent_hash) if parent_hash is not None else None
            if parent is not None:
                block.parent = parent
                parent.children.add(block)
            self.cached[h] = block
            self._touch(block, now)

    def free(self, seq: Sequence) -> None:
        """Release a sequence's blocks, tail first; hashed blocks stay cached (demoted if cold is on)."""
        self._release_tail(seq, 0)
        seq.block_hashes = []
        self.unpin(seq)

    def trim(self, seq: Sequence, num_tokens: int) -> None:
        """Give back the blocks past the first `num_tokens` tokens (slots of rejected draft tokens)."""
        self._release_tail(seq, self.blocks_needed(num_tokens))

    def _release_tail(self, seq: Sequence, keep: int) -> None:
        for block_id in reversed(seq.block_table[keep:]):
            block = self.blocks[block_id]
            block.ref_count -= 1
            if block.ref_count:
                continue
            if block.hash is None:
                self.hot.empty.append(block_id)
            elif not self._demote(block):
                self._release(block)
        del seq.block_table[keep:]

    # ---- blocks loaded back from the KV tiers --------------------------------
    def install(self, block_hash: int, token_ids: tuple[int, ...], parent_hash: int | None, depth_tokens: int,
                protected: bool, frequency: float, last_access: float, num_users: int) -> Block:
        """A free hot block takes a tier block's identity (the caller copies its data in). It comes back
        referenced once: the caller pins it for its waiters and then `release`s that reference."""
        block = self._take_free(self.hot)
        block.ref_count = 1
        block.hash, block.parent_hash, block.token_ids = block_hash, parent_hash, token_ids
        block.depth_tokens, block.protected = depth_tokens, protected
        block.frequency, block.last_access, block.num_users = frequency, last_access, num_users
        parent = self.cached.get(parent_hash) if parent_hash is not None else None
        if parent is not None:
            block.parent = parent
            parent.children.add(block)
        self.cached[block_hash] = block
        return block

    def pin(self, seq: Sequence, blocks: list[Block]) -> None:
        """Hold blocks for a waiting sequence (its prefix, just loaded) so eviction cannot take them."""
        for block in blocks:
            self._acquire(block)
            seq.pinned.append(block.block_id)

    def unpin(self, seq: Sequence) -> None:
        pinned, seq.pinned = seq.pinned, []
        self.release([self.blocks[i] for i in pinned])

    def release(self, blocks: list[Block]) -> None:
        """Drop one reference from each block, tail first (as a finished sequence does)."""
        for block in reversed(blocks):
            block.ref_count -= 1
            if block.ref_count:
                continue
            if block.hash is None:
                self.hot.empty.append(block.block_id)
            elif not self._demote(block):
                self._release(block)

    def take_demotions(self) -> list[tuple[int, int]]:
        pending, self.pending_demotions = self.pending_demotions, []
        return pending

    # ---- internals ------------------------------------------------------
    def _pool(self, block: Block) -> Pool:
        return self.hot if block.block_id in self.hot else self.cold

    def _touch(self, block: Block, now: float) -> None:
        if block.frequency:
            block.frequency *= math.exp(-self.decay * max(now - block.last_access, 0.0))
        block.frequency += 1.0
        block.last_access = now
        block.num_users += 1

    def _acquire(self, block: Block) -> None:
        if block.ref_count == 0:
            self._pool(block).num_evictable -= 1
            block.version += 1          # drop its heap entry lazily
        block.ref_count += 1

    def _release(self, block: Block) -> None:
        """A cached block nobody references: evictable, offered to eviction once it is a leaf."""
        self._pool(block).num_evictable += 1
        if not block.children:
            self._push(block)

    def _push(self, block: Block) -> None:
        block.version += 1
        self._tie += 1
        heapq.heappush(self._pool(block).evictable,
                       (self.priority(block, self.decay), self._tie, block.block_id, block.version))

    def _take_free(self, pool: Pool) -> Block:
        if pool.empty:
            return self.blocks[pool.empty.popleft()]
        while pool.evictable:
            _, _, block_id, version = heapq.heappop(pool.evictable)
            block = self.blocks[block_id]
            if version != block.version or block.ref_count or block.hash is None or block.children:
                continue
            self._evict(block)
            return block
        raise RuntimeError("no free KV block (caller must check num_free first)")

    def _evict(self, block: Block) -> None:
        if self.on_evict is not None:
            self.on_evict(block)            # its data is intact until the caller reuses the slot
        del self.cached[block.hash]
        parent = block.parent
        self._pool(block).num_evictable -= 1
        self.num_evictions += 1
        block.reset()
        block.version += 1
        if parent is not None:
            parent.children.discard(block)
            if not parent.children and parent.ref_count == 0 and parent.hash is not None:
                self._push(parent)

    def _demote(self, block: Block) -> bool:
        """Move a hot cached block's identity into the INT8 pool; False if it stays hot."""
        if self.cold is None or block.protected or block.block_id not in self.hot or not self.cold.num_free:
            return False
        target = self._take_free(self.cold)
        target.take_identity(block)
        target.ref_count = 0
        for child in target.children:
            child.parent = target
        if target.parent is not None:
            target.parent.children.discard(block)
            target.parent.children.add(target)
        self.cached[target.hash] = target
        block.reset()
        block.version += 1
        self.hot.empty.append(block.block_id)
        self.pending_demotions.append((block.block_id, target.block_id - self.hot.count))
        self.num_demotions += 1
        self._release(target)
        return True
