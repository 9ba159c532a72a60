"""The promotion-evidence match runs while the backend answers, not in front of the forward: `SemanticCache.decide`
returns before it, and the answer's write waits for it, so a request that is evidence for another session's
candidate is still written as evidence (not as a rival candidate).

In process: the real pipeline (prepared models) over a fresh SQLite store, promotion `shadow`."""
import asyncio
import threading
import uuid
from pathlib import Path

import pytest

from gateway.cache import CacheRequest, SemanticCache
from gateway.cache.promotion import PromotionConfig
from gateway.metrics import GatewayMetrics
from gateway.store import StoreConfig, open_store
from tests.conftest import models_dir

SYSTEM = {"role": "system", "content": "You are a travel assistant. Give short day-by-day plans."}
QUESTION = [SYSTEM, {"role": "user", "content": "Plan a 3-day trip to Salzburg for a couple who like hiking."}]
ANSWER = ("Day 1: old town, Hohensalzburg fortress, dinner in the Augustiner Brau beer hall.\n"
          "Day 2: Untersberg cable car and the ridge trail, back by bus 25.\n"
          "Day 3: Kapuzinerberg loop in the morning, Hellbrunn palace in the afternoon.")


@pytest.fixture
def cache(tmp_path: Path):
    store = open_store(None, None, tmp_path, StoreConfig(ready_delay_s=0))
    cache = SemanticCache.build(store, GatewayMetrics(), models_dir=Path(models_dir()),
                                promotion=PromotionConfig(mode="shadow"))
    yield cache
    store.close()


def test_the_evidence_match_runs_beside_the_forward_and_the_write_waits_for_it(cache, monkeypatch):
    pipeline = cache.pipeline
    first = CacheRequest("acme", "user-1", QUESTION)
    candidate = pipeline.write(first, pipeline.decide(first), ANSWER, {}, uuid.uuid4().hex)
    assert pipeline.store.get(candidate)["promotion"] == "candidate"

    forwarded = threading.Event()           # set where the backend has answered
    waited: list[bool] = []
    find = pipeline.find_evidence

    def find_after_the_forward(req, decision):
        waited.append(forwarded.wait(timeout=20))      # False: the match ran before the request went out
        find(req, decision)
    monkeypatch.setattr(pipeline, "find_evidence", find_after_the_forward)

    async def turn():
        second = CacheRequest("acme", "user-2", QUESTION)
        decision = await cache.decide(second)
        assert decision.outcome == "MISS" and decision.evidence_pending is not None
        forwarded.set()
        written = await cache.write(second, decision, ANSWER, {}, uuid.uuid4().hex)
        return decision, written

    decision, written = asyncio.run(turn())
    assert waited == [True]
    assert decision.gates["promotion"]["cache_id"] == candidate and decision.gates["promotion"]["passed"]
    assert decision.evidence is not None
    assert pipeline.store.get(written)["promotion"] is None     # evidence for the candidate, not a rival of it


def test_in_process_decide_still_includes_the_evidence_match(cache):
    pipeline = cache.pipeline
    first = CacheRequest("acme", "user-1", QUESTION)
    candidate = pipeline.write(first, pipeline.decide(first), ANSWER, {}, uuid.uuid4().hex)
    decision = pipeline.decide(CacheRequest("acme", "user-3", QUESTION))
    assert decision.evidence is not None and decision.evidence["cache_id"] == candidate
    assert "evidence" in decision.timings_ms
    assert pipeline.decide(CacheRequest("acme", "user-4", QUESTION), evidence=False).evidence is None


def test_evidence_is_shed_while_the_process_is_busy_and_gathered_again_after(cache, monkeypatch):
    """Under load the match is skipped (counted), never the decision; once the other decisions are done, the
    next request of another session is evidence again."""
    from gateway.cache import service
    pipeline = cache.pipeline
    first = CacheRequest("acme", "user-1", QUESTION)
    pipeline.write(first, pipeline.decide(first), ANSWER, {}, uuid.uuid4().hex)
    release = threading.Event()
    entered = threading.Semaphore(0)
    decide = pipeline.decide

    def held(req, evidence=True):                     # the other sessions' decisions, held while they run
        if req.session_id.startswith("busy"):
            entered.release()
            release.wait(timeout=20)
        return decide(req, evidence)
    monkeypatch.setattr(pipeline, "decide", held)

    async def turns():
        others = [asyncio.create_task(cache.decide(CacheRequest("acme", f"busy-{i}", QUESTION)))
                  for i in range(service.EVIDENCE_SHED_AT)]
        for _ in others:
            await asyncio.to_thread(entered.acquire)
        shed = await cache.decide(CacheRequest("acme", "user-2", QUESTION))
        release.set()
        for decision in await asyncio.gather(*others):       # their own matches, once they are decided
            if decision.evidence_pending is not None:
                await decision.evidence_pending
        gathered = await cache.decide(CacheRequest("acme", "user-3", QUESTION))
        await gathered.evidence_pending
        return shed, gathered

    shed, gathered = asyncio.run(turns())
    assert shed.outcome == gathered.outcome == "MISS"
    assert shed.evidence_pending is None and "promotion" not in shed.gates
    assert cache.metrics.evidence_shed._value.get() >= 1
    assert gathered.gates["promotion"]["passed"]
