"""The semantic cache as the app sees it: the decision pipeline, request coalescing, and bookkeeping
(hit counts, saved tokens, the session's last turn) done off the response path."""
from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

from fingerprint import Fingerprinter, TextEncoder
from gateway.cache.decision import CacheRequest, Decision, DecisionPipeline
from gateway.metrics import GatewayMetrics
from gateway.store import CacheStore
from validator import RiskPolicy
from validator.change_intent import ChangeIntentClassifier

log = logging.getLogger("semcache.cache")


class SemanticCache:
    def __init__(self, pipeline: DecisionPipeline, metrics: GatewayMetrics):
        self.pipeline = pipeline
        self.store = pipeline.store
        self.metrics = metrics
        # identical requests in flight: followers wait for the leader's answer instead of computing it again
        self.flights: dict[tuple, asyncio.Future] = {}
        self._background: set[asyncio.Task] = set()

    @classmethod
    def build(cls, store: CacheStore, metrics: GatewayMetrics, embedding_model: str = "e5-small",
              models_dir: Path | None = None, risk_policy: Path | None = None, search_k: int = 5,
              duplicate_window_s: float = 2.0, mode: str = "semantic",
              thresholds: dict[str, dict[str, float]] | None = None) -> "SemanticCache":
        """Loads the encoder and the classifier (seconds): call it from a worker thread."""
        encoder = TextEncoder(embedding_model, models_dir=models_dir)
        if encoder.dim != store.config.dim:
            raise ValueError(f"the embedding model {embedding_model!r} gives {encoder.dim}-d vectors but the store "
                             f"holds {store.config.dim}-d ones")
        fingerprinter = Fingerprinter(encoder)
        policies = RiskPolicy.load(risk_policy)
        for domain, values in (thresholds or {}).items():      # calibrated thresholds win over the table
            policies.domains[domain] = {**policies.domains.get(domain, {}),
                                        **{k: float(v) for k, v in values.items() if k in ("accept", "candidate")}}
        pipeline = DecisionPipeline(store, fingerprinter, ChangeIntentClassifier(fingerprinter.embed),
                                    policies=policies, search_k=search_k,
                                    duplicate_window_s=duplicate_window_s, mode=mode)
        return cls(pipeline, metrics)

    async def decide(self, req: CacheRequest) -> Decision:
        decision = await asyncio.to_thread(self.pipeline.decide, req)
        for stage, ms in decision.timings_ms.items():
            self.metrics.decision_seconds.labels(stage).observe(ms / 1e3)
        feedback = decision.implicit_feedback
        if feedback:
            self.metrics.feedback.labels(feedback["signal"], "implicit").inc()
            if feedback["was_hit"]:
                self.metrics.pollution.inc()
        return decision

    # ---- coalescing ---------------------------------------------------------------
    def join(self, key: tuple) -> asyncio.Future | None:
        return self.flights.get(key)

    def lead(self, key: tuple) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        self.flights[key] = future
        return future

    def land(self, key: tuple, future: asyncio.Future, result: dict | None) -> None:
        if self.flights.get(key) is future:
            del self.flights[key]
        if not future.done():
            future.set_result(result)

    # ---- bookkeeping -----------------------------------------------------------------
    def later(self, fn, *args, **kwargs) -> None:
        """Run a store call in a worker thread after the response; failures are logged, never raised."""
        async def run():
            try:
                await asyncio.to_thread(fn, *args, **kwargs)
            except Exception:
                log.exception("cache bookkeeping failed: %s", getattr(fn, "__name__", fn))
        task = asyncio.get_running_loop().create_task(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def served(self, req: CacheRequest, outcome: str, cache_id: str | None, answer: str | None = None) -> None:
        """Remember the session's last answer, so a regenerate or "that's wrong" can be traced to it (awaited
        before the response ends: the client's next turn may follow at once), and encode the conversation
        with its answer in the background, so the next turn's fingerprint only encodes the new message."""
        if answer and not req.unsupported:
            self.later(self.pipeline.fingerprinter.prime, [*req.messages, {"role": "assistant", "content": answer}])
        if not req.session_id:
            return
        record = {"request_hash": req.request_hash, "cache_id": cache_id, "outcome": outcome, "at": time.time()}
        try:
            await asyncio.to_thread(self.store.remember_turn, req.tenant, req.session_id, record)
        except Exception:
            log.exception("could not remember the session's last turn")

    def saved(self, prefill: int, decode: int) -> None:
        if prefill:
            self.metrics.saved_prefill.inc(prefill)
        if decode:
            self.metrics.saved_decode.inc(decode)

    async def drain(self) -> None:
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
