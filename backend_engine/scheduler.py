"""Continuous batching with chunked prefill under a token budget and preemption by recompute."""
from __future__ import annotations

from collections import deque

from backend_engine.block_manager import BlockManager
from backend_engine.config import EngineConfig
from backend_engine.sequence import Sequence, SequenceStatus


class Scheduler:
    def __init__(self, config: EngineConfig, block_manager: BlockManager):
        self.config = config
        self.block_manager = block_manager
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self.num_preemptions = 0
        self.prefix_query_tokens = 0
        self.prefix_hit_tokens = 0

    def add(self, seq: Sequence) -> None:
        self.waiting.append(seq)

    def has_work(self) -> bool:
        return bool(self.waiting or self.running)

    def schedule(self) -> list[tuple[Sequence, int]]:
        """Pick (sequence, tokens to compute) pairs for one step; running sequences first."""
        budget = self.config.max_num_batched_tokens
        scheduled: list[tuple[Sequence, int]] = []
        preempted = False
        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            num = min(seq.num_uncomputed_tokens, budget)
            while not self.block_manager.ensure_slots(seq, num):
                victim = self.running.pop()          # the newest arrival gives way
                self._preempt(victim)
                preempted = True
                if victim is seq:
                    break
            else:
                scheduled.append((seq, num))
                budget -= num
                i += 1
                continue
            break
        for seq in list(self.waiting):
            if budget <= 0 or preempted or len(self.running) >= self.config.max_num_seqs:
                break
            if seq.loading is not None:
                continue                    # its prefix is coming up from a KV tier; others go meanwhile
            matched = []
            if self.config.enable_prefix_caching:
                ok, matched = self.block_manager.can_admit(seq, budget)
            else:
                ok = self.block_manager.num_free >= self.block_manager.blocks_needed(min(len(seq), budget))
            if not ok:
                break
            self.waiting.remove(seq)
            self.block_manager.admit(seq, matched)
            if seq.num_output_tokens == 0:
                self.prefix_query_tokens += len(seq)
                self.prefix_hit_tokens += seq.num_computed_tokens
            num = min(seq.num_uncomputed_tokens, budget)
            assert self.block_manager.ensure_slots(seq, num)
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            scheduled.append((seq, num))
            budget -= num
        return scheduled

    def finish(self, seq: Sequence, reason: str) -> None:
        seq.status = SequenceStatus.FINISHED
        seq.finish_reason = reason
        if seq in self.running:
            self.running.remove(seq)
        else:
            try:
                self.waiting.remove(seq)
            except ValueError:
                pass
        self.block_manager.free(seq)

    def _preempt(self, seq: Sequence) -> None:
        # recompute later: computed blocks stay in the prefix cache, so most come back as hits
        self.block_manager.free(seq)
        seq.num_computed_tokens = 0
        seq.tier_checked = False             # what it loses may be found in the tiers again
        seq.status = SequenceStatus.WAITING
        self.waiting.appendleft(seq)
        self.num_preemptions += 1
