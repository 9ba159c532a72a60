"""The loader thread: brings a run of tier blocks up (read, verify, dequantize) off the step loop.

It never writes the pool: a finished job's block data waits until the engine
thread installs it at the start of a step, so the pool has one writer.
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque

import torch

from backend_engine import kv_codec
from backend_engine.kv_tiers import TierEntry, TierStore

log = logging.getLogger("semcache.engine.kv_tier")


class LoadJob:
    def __init__(self, entries: list[TierEntry], parent_hash: int | None, first_token: int):
        self.entries = entries              # a chain, in order; entries[0]'s parent is `parent_hash`
        self.parent_hash = parent_hash
        self.first_token = first_token      # position of entries[0]'s first token
        self.results: list[tuple[TierEntry, torch.Tensor]] = []   # a prefix of entries, decoded
        self.waiters: list = []             # sequences waiting for this job
        self.probes: list = []              # prefetch probes: sequences that will never be scheduled
        self.timings: list[tuple[str, int, float]] = []          # (tier, bytes, seconds) per block read
        self.seconds = 0.0


class Loader:
    def __init__(self, store: TierStore, device: torch.device, dtype: torch.dtype):
        self.store, self.device, self.dtype = store, device, dtype
        self._jobs: queue.Queue[LoadJob | None] = queue.Queue()
        self._finished: deque[LoadJob] = deque()
        self._event = threading.Event()
        self.in_flight = 0
        self._thread: threading.Thread | None = None     # started by the first load: most engines never load

    def submit(self, job: LoadJob) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="semcache-kv-loader", daemon=True)
            self._thread.start()
        self.in_flight += 1
        self._jobs.put(job)

    def take_finished(self) -> list[LoadJob]:
        done = []
        while self._finished:
            done.append(self._finished.popleft())
        self.in_flight -= len(done)
        return done

    def wait(self, timeout: float) -> None:
        """Block the step loop briefly when it has nothing to run but loads to wait for."""
        if self.in_flight and not self._finished:
            self._event.wait(timeout)
        self._event.clear()

    def close(self) -> None:
        """Stop the thread after the queued jobs; a later load starts a new one (an app restarted in tests)."""
        if self._thread is not None:
            self._jobs.put(None)
            self._thread = None

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            started = time.perf_counter()
            try:
                for entry in job.entries:
                    tier, block_started = entry.tier, time.perf_counter()
                    got = self.store.read(entry)
                    if got is None:          # evicted meanwhile, or a corrupt file: the rest is recomputed
                        break
                    payload, dtype = got
                    payload = {k: t.to(self.device, non_blocking=True) for k, t in payload.items()}
                    job.results.append((entry, kv_codec.decode(payload, dtype, self.dtype)))
                    job.timings.append((tier, entry.nbytes, time.perf_counter() - block_started))
            except Exception:                # a failed load only costs a recompute
                log.exception("loading KV blocks from the tiers failed")
            job.seconds = time.perf_counter() - started
            self._finished.append(job)
            self._event.set()
