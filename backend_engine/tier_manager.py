"""The pool and the KV tiers together: spill on eviction, look up past the pool, load or recompute.

- spill: a cached block evicted from the pool is copied into the host tier
  (the block manager calls us before the slot is reused).
- lookup: a waiting sequence's prefix is matched in the pool, then the chain
  hash keeps walking in the tiers; the missing run is split by the cost rule
  (tier_cost.plan) into blocks to load and blocks to recompute, and a load job
  goes to the loader thread. The sequence is not scheduled until it is done.
- install: at the start of a step, finished jobs' blocks enter the pool as
  cached blocks, pinned for their waiting sequences until admission.
- prefetch: the same lookup for a prompt that has not arrived yet.

Everything here runs on the engine thread, except the loader's reads.
"""
from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass

from backend_engine.block_manager import Block, BlockManager, hash_block
from backend_engine.kv_tiers import TierEntry, TierStore
from backend_engine.sampling import SamplingParams
from backend_engine.sequence import Sequence, SequenceStatus
from backend_engine.tier_cost import Rates, plan
from backend_engine.tier_loader import LoadJob, Loader

log = logging.getLogger("semcache.engine.kv_tier")
_probe_ids = itertools.count()


@dataclass
class TierCounters:
    loaded_blocks: int = 0          # blocks installed into the pool from a tier
    recomputed_blocks: int = 0      # blocks found in a tier but recomputed (cost rule, no room, failed read)
    load_jobs: int = 0
    prefetches: int = 0
    prefill_seconds_saved: float = 0.0   # estimated prefill of the loaded blocks minus the loads' time


class TierManager:
    def __init__(self, store: TierStore, block_manager: BlockManager, runner, rates: Rates, policy: str,
                 max_num_batched_tokens: int):
        self.store, self.bm, self.runner, self.rates, self.policy = store, block_manager, runner, rates, policy
        self.max_chunk = max_num_batched_tokens
        self.block_size = block_manager.block_size
        self.loader = Loader(store, runner.device, next(runner.model.parameters()).dtype)
        self.in_flight: dict[int, LoadJob] = {}        # block hash -> job bringing it up
        self.counters = TierCounters()
        block_manager.on_evict = self.spill

    # ---- down: pool -> host ------------------------------------------------
    def spill(self, block: Block) -> None:
        if self.store.contains(block.hash):
            self.store.refresh(block.hash, block.frequency, block.last_access, block.num_users)
            return
        # a cold (INT8) slot may still wait for its copy: do the pending copies first
        self.runner.apply_demotions(self.bm.take_demotions())
        entry = TierEntry(block.hash, block.parent_hash, block.token_ids, block.depth_tokens, block.protected,
                          "fp", frequency=block.frequency, last_access=block.last_access,
                          num_users=block.num_users)
        self.store.put(entry, self.runner.read_block(block.block_id))

    # ---- up: lookup and plan ------------------------------------------------
    def before_schedule(self, waiting) -> None:
        self.install_finished()
        for seq in waiting:
            if not seq.tier_checked and seq.loading is None:
                self.lookup(seq)

    def lookup(self, seq: Sequence, probe: bool = False) -> int:
        """Start loading the part of the sequence's prefix that the tiers hold and the cost rule picks;
        returns the number of blocks requested. A probe (prefetch) only pins while its blocks go in."""
        seq.tier_checked = True
        bs = self.block_size
        matched = self.bm.match_prefix(seq)
        parent = matched[-1].hash if matched else None
        first = len(matched)
        chain: list[TierEntry] = []
        for i in range(first, (len(seq) - 1) // bs):
            tokens = tuple(seq.token_ids[i * bs:(i + 1) * bs])
            h = hash_block(parent, tokens, seq.cache_salt)
            job = self.in_flight.get(h)
            if job is not None:
                if probe:
                    return 0
                if not chain:               # already coming up (a prefetch): wait for it, then look again
                    job.waiters.append(seq)
                    seq.loading = job
                    seq.tier_checked = False
                    return 0
                break
            entry = self.store.lookup(h, tokens)
            if entry is None:
                break
            chain.append(entry)
            parent = h
        if not chain:
            return 0
        k = plan(chain, first * bs, bs, self.rates, self.policy)
        self.counters.recomputed_blocks += len(chain) - k
        if not k:
            return 0
        job = LoadJob(chain[:k], matched[-1].hash if matched else None, first * bs)
        (job.probes if probe else job.waiters).append(seq)
        seq.loading = job
        self.bm.pin(seq, matched)           # the chain's root stays in the pool while its tail comes up
        for entry in job.entries:
            self.in_flight[entry.hash] = job
        self.counters.load_jobs += 1
        self.loader.submit(job)
        return k

    def prefetch(self, token_ids: list[int], cache_salt: str) -> int:
        """Bring a future request's prefix up from the tiers into the pool (as cached, unreferenced blocks)."""
        probe = Sequence(f"prefetch-{next(_probe_ids)}", token_ids, SamplingParams(max_tokens=1), cache_salt)
        self.counters.prefetches += 1
        return self.lookup(probe, probe=True)

    # ---- install -------------------------------------------------------------
    def install_finished(self) -> None:
        for job in self.loader.take_finished():
            for tier, nbytes, seconds in job.timings:
                self.rates.observe_load(tier, nbytes, seconds)
            for entry in job.entries:
                if self.in_flight.get(entry.hash) is job:
                    del self.in_flight[entry.hash]
            self._install(job)

    def _install(self, job: LoadJob) -> None:
        bm, bs = self.bm, self.block_size
        real = [s for s in job.waiters if s.status == SequenceStatus.WAITING]     # not aborted meanwhile
        waiters = real + job.probes
        for seq in waiters:                 # the chain's root must not be evicted by the blocks going in
            if not seq.pinned:
                bm.pin(seq, bm.match_prefix(seq))
        room = bm.num_free
        if real:                            # leave room for the first waiter's first chunk of new tokens
            rest = len(real[0]) - job.first_token - len(job.results) * bs
            room -= bm.blocks_needed(min(max(rest, 1), self.max_chunk)) + 1
        blocks: list[Block] = []
        taken: list[Block] = []
        parent = job.parent_hash
        for entry, data in job.results:
            block = bm.cached.get(entry.hash)
            if block is not None and block.token_ids != entry.token_ids:
                break
            if block is None:
                if room <= 0 or (parent is not None and parent not in bm.cached):
                    break                   # no room, or the chain above is gone: recompute the rest
                block = bm.install(entry.hash, entry.token_ids, parent, entry.depth_tokens, entry.protected,
                                   entry.frequency, entry.last_access, entry.num_users)
                self.runner.write_block(block.block_id, data)
                taken.append(block)
                room -= 1
            blocks.append(block)
            parent = entry.hash
        for seq in real:
            bm.pin(seq, blocks)
            if seq.loading is job:
                seq.loading = None
        for probe in job.probes:
            bm.unpin(probe)                 # prefetched blocks stay cached, unreferenced, for the request
        bm.release(taken)
        n = len(taken)
        self.counters.loaded_blocks += n
        self.counters.recomputed_blocks += len(job.entries) - len(blocks)
        if n:
            start = job.first_token
            saved = self.rates.recompute(start, start + len(blocks) * bs) - job.seconds
            self.counters.prefill_seconds_saved += saved

    def observe_step(self, scheduled: list[tuple[Sequence, int]], seconds: float) -> None:
        """A prefill step (enough new tokens that per-step overheads do not dominate) refines the rates."""
        spans = [(seq.num_computed_tokens, seq.num_computed_tokens + num) for seq, num in scheduled]
        if sum(end - start for start, end in spans) >= 4 * self.block_size:
            self.rates.observe_prefill(spans, seconds)

    def wait_for_loads(self, timeout: float) -> None:
        if self.loader.in_flight:
            self.loader.wait(timeout)

    def close(self) -> None:
        self.loader.close()
