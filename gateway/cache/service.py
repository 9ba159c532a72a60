"""The semantic cache as the app sees it: the decision pipeline, request coalescing, and bookkeeping
(hit counts, saved tokens, the session's last turn) done off the response path.

The cache fails open: when the database, Redis or the encoder fails, the request is forwarded as
BYPASS `fail_open:<dependency>` and nothing is written; after `breaker_failures` consecutive failures
the circuit breaker opens and requests skip the cache (BYPASS `cache:degraded`) until a probe succeeds."""
from __future__ import annotations

import asyncio
import json
import logging
import time
from functools import partial
from pathlib import Path

from fingerprint import Fingerprinter, TextEncoder
from fingerprint.encoder import default_data_dir, native_bf16, resolve_encoder_dir
from gateway.cache.breaker import CLOSED, OPEN, STATE_VALUES, CircuitBreaker, dependency_of
from gateway.cache.decision import CacheRequest, Decision, DecisionPipeline
from gateway.cache.promotion import EvidenceJudge, PromotionConfig
from gateway.metrics import GatewayMetrics
from gateway.store import CacheStore
from validator import RiskPolicy
from validator.pair_judge import PairJudge

log = logging.getLogger("semcache.cache")


def bf16_judge(e5_folder: Path, threads: int | None = None, weights: Path | None = None):
    """The pair judge's trained network (the shipped weights, or `weights`), run by the encoder's bf16 runner
    (the validator package stays free of the fingerprint package: the two meet here)."""
    from fingerprint.bf16_bert import Bf16Bert
    from validator.pair_network import WEIGHTS_FILE, hf_state
    config = json.loads((e5_folder / "config.json").read_text())
    return Bf16Bert.from_tensors(hf_state(e5_folder, weights or WEIGHTS_FILE), config, threads or None)


def judge_in_bf16(encoder: TextEncoder) -> bool:
    """The pair judge runs in bf16 where the encoder does, and beside the INT8 encoder wherever the CPU has native
    bf16: the judge decides hits, so it is never quantised below the bf16 it was measured in (docs/validator.md)."""
    return encoder.backend == "bf16" or (encoder.backend == "int8" and native_bf16())


def load_gates(embedding_model: str = "e5-small", models_dir: Path | None = None, risk_policy: Path | None = None,
               thresholds: dict[str, dict[str, float]] | None = None,
               encoder_threads: int | None = None,
               encoder_backend: str = "auto") -> tuple[Fingerprinter, PairJudge, RiskPolicy]:
    """The fingerprinter (encoder), the pair judge and the risk policy with calibrated thresholds (seconds)."""
    encoder = TextEncoder(embedding_model, backend=encoder_backend, models_dir=models_dir,
                          threads=encoder_threads or None)
    models_dir = models_dir or default_data_dir() / "models"
    # the pair model is e5 underneath, whichever encoder the fingerprint uses
    # the same thread budget as the encoder: N workers must not each run the judge on every core
    # and the same backend: bf16 where the encoder measured it cheaper on this CPU (p(same) moves by float
    # noise only: docs/validator.md)
    e5_folder = resolve_encoder_dir("e5-small", models_dir=models_dir)[0]
    judge = PairJudge.prepared(e5_folder, models_dir, threads=encoder_threads or None,
                               runner=bf16_judge(e5_folder, encoder_threads) if judge_in_bf16(encoder) else None)
    # no topic-switch function: a switch skips the lookup, and both trained detectors (a switch head, the pair
    # model against the previous turn) lost more hits to false switches than they saved lookups; the judge
    # reads a switch on every candidate instead (`intent:switch`)
    fingerprinter = Fingerprinter(encoder)
    policies = RiskPolicy.load(risk_policy)
    for domain, values in (thresholds or {}).items():      # calibrated thresholds win over the table
        policies.domains[domain] = {**policies.domains.get(domain, {}),
                                    **{k: float(v) for k, v in values.items() if k in ("accept", "candidate")}}
    return fingerprinter, judge, policies


WRITE_WAIT_S = 5.0            # the longest a request waits for an earlier answer's write (a stuck database)


async def _wait_for(tasks: list[asyncio.Task]) -> None:
    if tasks:
        await asyncio.wait(tasks, timeout=WRITE_WAIT_S)


# Promotion evidence is shed while this many decisions and evidence matches already run in the process: it
# never changes an outcome, and under load its pair-judge runs (one in six forwarded requests of the load
# bench, ~12 ms of CPU each) took CPU from the decisions themselves. Sequential traffic always gathers it.
EVIDENCE_SHED_AT = 2


class SemanticCache:
    def __init__(self, pipeline: DecisionPipeline, metrics: GatewayMetrics, breaker: CircuitBreaker | None = None):
        self.pipeline = pipeline
        self.store = pipeline.store
        self.metrics = metrics
        self.breaker = breaker or CircuitBreaker()
        self.breaker._on_change = lambda state: metrics.breaker_state.set(STATE_VALUES[state])
        # identical requests in flight: followers wait for the leader's answer instead of computing it again
        self.flights: dict[tuple, asyncio.Future] = {}
        self._background: set[asyncio.Task] = set()
        # answers being written after their response went out: cache id -> (tenant, session id), task
        self._writing: dict[str, tuple[tuple, asyncio.Task]] = {}
        self.evidence_judge = EvidenceJudge(pipeline.fingerprinter.encoder, pipeline.extractor, pipeline.promotion)
        self._deciding = self._matching = 0     # decisions and evidence matches running in this process

    @classmethod
    def build(cls, store: CacheStore, metrics: GatewayMetrics, embedding_model: str = "e5-small",
              models_dir: Path | None = None, risk_policy: Path | None = None, search_k: int = 5,
              duplicate_window_s: float = 2.0, mode: str = "semantic",
              thresholds: dict[str, dict[str, float]] | None = None,
              encoder_threads: int | None = None, breaker_failures: int = 3,
              breaker_cooldown_s: float = 5.0, allow_sampled_hits: bool = True,
              promotion: PromotionConfig | None = None, encoder_backend: str = "auto",
              gate_k: int = 2) -> "SemanticCache":
        """Loads the encoder and the classifier (seconds): call it from a worker thread."""
        fingerprinter, judge, policies = load_gates(embedding_model, models_dir, risk_policy, thresholds,
                                                    encoder_threads, encoder_backend)
        if fingerprinter.encoder.dim != store.config.dim:
            raise ValueError(f"the embedding model {embedding_model!r} gives {fingerprinter.encoder.dim}-d vectors "
                             f"but the store holds {store.config.dim}-d ones")
        pipeline = DecisionPipeline(store, fingerprinter, judge,
                                    policies=policies, search_k=search_k,
                                    duplicate_window_s=duplicate_window_s, mode=mode,
                                    allow_sampled_hits=allow_sampled_hits, promotion=promotion, gate_k=gate_k)
        return cls(pipeline, metrics, CircuitBreaker(breaker_failures, breaker_cooldown_s))

    async def decide(self, req: CacheRequest) -> Decision:
        """The decision, or BYPASS when the cache cannot decide: it never raises for a dependency failure."""
        await self.settle(req)
        go, probe = self.breaker.allow()
        if not go:
            dependency = self.breaker.last_dependency or "store"
            self.metrics.fail_open.labels(dependency, "skipped").inc()
            req.degraded = True
            return Decision("BYPASS", "cache:degraded", cacheable=False,
                            gates={"fail_open": dependency, "breaker": self.breaker.state})
        try:
            if probe:                  # half-open: the failed dependencies must answer before the cache is used
                down = await self._down()
                if down:
                    return self._fail_open(req, down, "unreachable", "decide")
            self._deciding += 1
            try:
                decision = await asyncio.to_thread(self.pipeline.decide, req, False)
            finally:
                self._deciding -= 1
        except Exception as exc:
            return self._fail_open(req, dependency_of(exc), exc.__class__.__name__, "decide", exc)
        self.breaker.success()
        for stage, ms in decision.timings_ms.items():
            self.metrics.decision_seconds.labels(stage).observe(ms / 1e3)
        if self.pipeline.wants_evidence(decision):
            if self._deciding + self._matching >= EVIDENCE_SHED_AT:
                self.metrics.evidence_shed.inc()
            else:
                # the evidence match never changes this outcome: it runs while the backend answers, and the
                # write waits for it (under load it took up to 48 ms at the front of forwarded requests)
                decision.evidence_pending = self._spawn(self._find_evidence(req, decision))
        feedback = decision.implicit_feedback
        if feedback:
            self.metrics.feedback.labels(feedback["signal"], "implicit").inc()
            if feedback.get("demoted"):
                self.metrics.promotions.labels("demoted").inc()
            if feedback["was_hit"]:
                domain = decision.fingerprint.tags.intent_domain if decision.fingerprint is not None else None
                self.metrics.polluted(feedback["signal"], "implicit", domain)
        return decision

    def _fail_open(self, req: CacheRequest, dependency: str | None, error: str, stage: str,
                   exc: BaseException | None = None) -> Decision:
        self.failed(dependency, error, stage, exc)
        req.degraded = True
        label = dependency or "internal"
        return Decision("BYPASS", f"fail_open:{label}", cacheable=False, gates={"fail_open": label, "error": error})

    def failed(self, dependency: str | None, error: str, stage: str, exc: BaseException | None = None) -> None:
        """A cache dependency failed (the request goes on without the cache): count it, log it, and tell the
        breaker. Anything that is not a dependency (a bug, bad input) is logged with its traceback and does
        not open the breaker."""
        label = dependency or "internal"
        self.metrics.fail_open.labels(label, stage).inc()
        log.warning("cache failed open: %s %s", label, error, exc_info=exc if dependency is None else None,
                    extra={"fields": {"dependency": label, "error": error, "stage": stage,
                                      "breaker": self.breaker.state}})
        if dependency is not None:
            self.breaker.failure(dependency, error)

    async def probe(self) -> None:
        """Close the breaker as soon as the database and Redis answer again, without waiting for a request
        (called every half second by the app). An encoder failure is left to the next request's probe."""
        if self.breaker.state == CLOSED or self.breaker.last_dependency not in ("store", "redis"):
            return
        go, probe = self.breaker.allow()
        if not probe:
            return
        down = await self._down()
        if down:
            self.breaker.failure(down, "unreachable")
        else:
            self.breaker.success()

    async def _down(self) -> str | None:
        """The dependency that does not answer ("store" or "redis"), or None when both do."""
        health = await asyncio.to_thread(self.store.health)
        return "store" if not health["database"] else "redis" if health["redis"] is False else None

    def touchable(self, req: CacheRequest) -> bool:
        """May this request still read or write the cache (bookkeeping, writes)?"""
        return not req.degraded and self.breaker.state != OPEN

    async def draft_elsewhere(self, req: CacheRequest, decision: Decision) -> str | None:
        """`DecisionPipeline.draft_elsewhere`, or None when the store fails (a draft is only a speed-up)."""
        if not self.touchable(req):
            return None
        try:
            return await asyncio.to_thread(self.pipeline.draft_elsewhere, req, decision)
        except Exception as exc:
            self.failed(dependency_of(exc), exc.__class__.__name__, "draft", exc)
            return None

    async def _find_evidence(self, req: CacheRequest, decision: Decision) -> None:
        self._matching += 1
        try:
            await asyncio.to_thread(self.pipeline.find_evidence, req, decision)
        except Exception as exc:          # evidence is bookkeeping: the request goes on without it
            self.failed(dependency_of(exc), exc.__class__.__name__, "evidence", exc)
            return
        finally:
            self._matching -= 1
        if "evidence" in decision.timings_ms:
            self.metrics.decision_seconds.labels("evidence").observe(decision.timings_ms["evidence"] / 1e3)

    def write_later(self, req: CacheRequest, decision: Decision, text: str, usage: dict, cache_id: str) -> None:
        """Write a forwarded answer without holding its response: the write (key facts, the insert, the commit)
        had sat between the backend's answer and the client on every forwarded request. What the write before
        the response guaranteed stays: the session's next decision, a feedback on `cache_id` and the admin
        reads wait for it (`settle`, `written`)."""
        task = self._spawn(self.write(req, decision, text, usage, cache_id))
        self._writing[cache_id] = ((req.tenant, req.session_id), task)
        task.add_done_callback(lambda _: self._writing.pop(cache_id, None))

    async def settle(self, req: CacheRequest | None = None) -> None:
        """Wait for the writes a decision must see: the same session's (its next turn finds its last answer,
        and a "that's wrong" finds the entry); every write under way when new answers are servable at once
        (ready_delay_s 0) or for a reader of the whole store (req None: admin routes). With a ready delay no
        decision could serve another session's answer that young, so none is waited for."""
        everything = req is None or self.store.config.ready_delay_s <= 0
        session = None if req is None else (req.tenant, req.session_id)
        await _wait_for([task for key, task in self._writing.values()
                         if everything or (req.session_id and key == session)])

    async def written(self, cache_id: str) -> None:
        """Wait for the write of `cache_id` if it is under way (a feedback may follow its response at once)."""
        pending = self._writing.get(cache_id)
        await _wait_for([pending[1]] if pending else [])

    async def write(self, req: CacheRequest, decision: Decision, text: str, usage: dict, cache_id: str) -> str | None:
        """Write a forwarded answer; a failure only loses the entry (the answer is already on its way)."""
        if decision.evidence_pending is not None:
            await decision.evidence_pending          # whether this answer is evidence decides how it is written
        if not self.touchable(req):
            return None
        try:
            written = await asyncio.to_thread(self.pipeline.write, req, decision, text, usage, cache_id)
        except Exception as exc:
            self.failed(dependency_of(exc), exc.__class__.__name__, "write", exc)
            return None
        if decision.evidence is not None and written:
            self.later(self.record_evidence, req, decision.evidence, text, written)
        return written

    def record_evidence(self, req: CacheRequest, match: dict, answer: str, own_cache_id: str) -> dict | None:
        """This session matched another session's candidate and has its own answer now: compare the two and
        add the result to the candidate's evidence (which may promote it). Runs after the response."""
        entry = match["entry"]
        config = self.pipeline.promotion
        agreement = self.evidence_judge.agreement(entry["answer_text"], entry.get("key_facts"), answer)
        if agreement["pii"]:
            return None                  # this answer carries someone's personal data: it proves nothing
        item = {"score": match["score"], **{k: agreement[k] for k in ("facts_equal", "similarity", "agree")},
                "entry": own_cache_id}
        # in a tenant with several API keys, one key's sessions (which it names itself) never promote alone
        result = self.store.add_evidence(entry["cache_id"], req.session_id, item, min_sessions=config.min_sessions,
                                         mode=config.mode, min_clients=2 if req.client_scope else 1)
        if result is None:
            return None
        self.metrics.promotion_evidence.labels(match["state"] or "candidate",
                                               "agree" if item["agree"] else "disagree").inc()
        if result["changed"]:
            self.metrics.promotions.labels(result["promotion"]).inc()
            log.info("promotion: %s is now %s", entry["cache_id"], result["promotion"],
                     extra={"fields": {"cache_id": entry["cache_id"], "promotion": result["promotion"]}})
        return result

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
            except Exception as exc:
                self.failed(dependency_of(exc), f"{exc.__class__.__name__} in {getattr(fn, '__name__', fn)}",
                            "bookkeeping", exc)
        self._spawn(run())

    def _spawn(self, work) -> asyncio.Task:
        """A task held until done, even when the request that started it ends first (drained at shutdown)."""
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def served(self, req: CacheRequest, outcome: str, cache_id: str | None, answer: str | None = None) -> None:
        """Remember the session's last answer, so a regenerate or "that's wrong" can be traced to it (awaited
        before the response ends: the client's next turn may follow at once), and encode the conversation
        with its answer in the background, so the next turn's fingerprint only encodes the new message."""
        if not self.touchable(req):
            return                     # failed open: the cache is not touched again for this request
        if answer and not req.unsupported:
            # only a head start for a next turn that may never come: under load it is dropped, and a next
            # turn encodes what it needs itself
            fingerprinter = self.pipeline.fingerprinter
            fingerprinter.encoder.when_idle(
                partial(fingerprinter.prime, [*req.messages, {"role": "assistant", "content": answer}]))
        if not req.session_id:
            return
        record = {"request_hash": req.request_hash, "cache_id": cache_id, "outcome": outcome, "at": time.time()}
        try:
            await asyncio.to_thread(self.store.remember_turn, req.tenant, req.session_id, record)
        except Exception as exc:
            self.failed(dependency_of(exc), exc.__class__.__name__, "bookkeeping", exc)

    def saved(self, prefill: int, decode: int) -> None:
        if prefill:
            self.metrics.saved_prefill.inc(prefill)
        if decode:
            self.metrics.saved_decode.inc(decode)
        if prefill or decode:
            self.metrics.timeline.saved(prefill, decode)

    async def drain(self) -> None:
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
