"""Promotion by evidence in the store, on PostgreSQL + Redis and on SQLite: the candidate pool, evidence,
promotion to the global pool, demotion on one signal, and no promotion across tenants."""
import numpy as np
import pytest

from gateway.index import SearchFilter
from gateway.store import NewEntry, StoreConfig, open_store

DIM = 8


def vec(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def candidate(seed: int, tenant="acme", session="u1", promotion="candidate"):
    return NewEntry(tenant=tenant, session_id=session, vector=vec(seed), tags={"intent_domain": "customer_support"},
                    answer_text=f"answer {seed}", system_prompt_version="v1", context_fingerprint="v1:cs",
                    state="ready", promotion=promotion)


def where(tenant="acme", session="u2"):
    return SearchFilter(tenant, session, "customer_support", "v1")


@pytest.fixture(params=["postgresql", "sqlite"])
def store(request, tmp_path, pg_url, redis_url):
    url = pg_url if request.param == "postgresql" else None
    redis = redis_url if request.param == "postgresql" else None
    s = open_store(url, redis, tmp_path, StoreConfig(ready_delay_s=0.0, dim=DIM), migrate=True,
                   redis_prefix=f"promo-{tmp_path.name}")
    yield s
    s.close()


def agree(entry_id=None, yes=True):
    return {"score": 0.97, "facts_equal": yes, "similarity": 0.95 if yes else 0.4, "agree": yes, "entry": entry_id}


def test_other_sessions_find_candidates_but_the_index_does_not_serve_them(store):
    cid = store.write(candidate(1))
    assert [e["cache_id"] for e, _ in store.search_pool(vec(1), where())] == [cid]
    assert store.search(vec(1), where(), 5) == []                     # another session: not served
    assert store.search_pool(vec(1), where(session="u1")) == []       # its own session is no evidence
    assert [e["cache_id"] for e, _ in store.search(vec(1), where(session="u1"), 5)] == [cid]


def test_no_promotion_across_tenants(store):
    store.write(candidate(2, tenant="acme"))
    assert store.search_pool(vec(2), where(tenant="globex")) == []
    cid = store.write(candidate(3, tenant="acme"))
    for s in ("u2", "u3", "u4"):
        store.add_evidence(cid, s, agree(), min_sessions=3, mode="auto")
    assert store.get(cid)["scope"] == "global"
    assert store.search(vec(3), where(tenant="globex", session="g1"), 5) == []
    assert [e["cache_id"] for e, _ in store.search(vec(3), where(session="u9"), 5)] == [cid]


def test_auto_promotes_after_distinct_agreeing_sessions(store):
    cid = store.write(candidate(4))
    assert store.add_evidence(cid, "u2", agree(), min_sessions=3, mode="auto") == {"promotion": "candidate",
                                                                                  "changed": False}
    store.add_evidence(cid, "u2", agree(), min_sessions=3, mode="auto")          # the same session again
    store.add_evidence(cid, "u1", agree(), min_sessions=3, mode="auto")          # its own session
    assert store.get(cid)["promotion"] == "candidate"
    store.add_evidence(cid, "u3", agree(), min_sessions=3, mode="auto")
    assert store.add_evidence(cid, "u4", agree(), min_sessions=3, mode="auto") == {"promotion": "promoted",
                                                                                  "changed": True}
    entry = store.get(cid)
    assert entry["scope"] == "global" and sorted(entry["evidence"]["sessions"]) == ["u2", "u3", "u4"]
    assert store.search_pool(vec(4), where()) == []                  # served now, no longer a candidate


def test_shadow_is_recorded_and_measured_not_served(store):
    cid = store.write(candidate(5))
    for s in ("u2", "u3", "u4"):
        store.add_evidence(cid, s, agree(), min_sessions=3, mode="shadow")
    entry = store.get(cid)
    assert entry["promotion"] == "shadow" and entry["scope"] == "session"
    assert store.search(vec(5), where(session="u5"), 5) == []
    store.add_evidence(cid, "u5", agree(), min_sessions=3, mode="shadow")
    store.add_evidence(cid, "u6", agree(yes=False), min_sessions=3, mode="shadow")
    evidence = store.get(cid)["evidence"]
    assert evidence["would_hit"] == 2 and evidence["shadow_agree"] == 1 and evidence["shadow_disagree"] == 1
    assert store.get(cid)["promotion"] == "rejected"                  # a disagreeing answer ends it


def test_a_disagreeing_answer_or_a_negative_signal_blocks_promotion(store):
    cid = store.write(candidate(6))
    store.add_evidence(cid, "u2", agree(yes=False), min_sessions=1, mode="auto")
    assert store.get(cid)["promotion"] == "rejected" and store.search_pool(vec(6), where()) == []
    other = store.write(candidate(7))
    own = store.write(candidate(8, session="u2", promotion=None))
    store.feedback(own, "negative", "u2", voter="v-u2")                # u2's own answer was called wrong
    store.add_evidence(other, "u2", agree(own), min_sessions=1, mode="auto")
    assert store.get(other)["promotion"] == "candidate"


def test_one_signal_from_anyone_demotes_a_promoted_entry(store):
    cid = store.write(candidate(9))
    for s in ("u2", "u3", "u4"):
        store.add_evidence(cid, s, agree(), min_sessions=3, mode="auto")
    assert store.get(cid)["scope"] == "global"
    result = store.feedback(cid, "negative", "u7", voter="v-u7")
    assert result["demoted"] and result["promotion"] == "demoted"
    entry = store.get(cid)
    assert entry["scope"] == "session" and entry["evidence"]["last"]["why"] == "signal:negative"
    assert store.search(vec(9), where(session="u8"), 5) == []
    assert [e["cache_id"] for e, _ in store.search(vec(9), where(session="u1"), 5)] == [cid]


def test_the_pool_is_rebuilt_on_restart(tmp_path):
    config = StoreConfig(ready_delay_s=0.0, dim=DIM)
    s = open_store(None, None, tmp_path, config, migrate=True)
    cid = s.write(candidate(10))
    s.close()
    again = open_store(None, None, tmp_path, StoreConfig(ready_delay_s=0.0, dim=DIM), migrate=True)
    try:
        assert [e["cache_id"] for e, _ in again.search_pool(vec(10), where())] == [cid]
    finally:
        again.close()


def test_in_a_tenant_of_several_clients_one_client_never_promotes_alone(store):
    """Found by an outside probe: one API key named five sessions itself and promoted its own answer. Where a
    tenant has several keys, sessions are kept under their key's scope, and evidence needs two scopes."""
    cache_id = store.write(candidate(31, session="kaaaa/u1"))
    for session in ("kaaaa/u2", "kaaaa/u3", "kaaaa/u4"):
        result = store.add_evidence(cache_id, session, agree(), min_sessions=2, mode="auto", min_clients=2)
        assert result["promotion"] == "candidate"
    result = store.add_evidence(cache_id, "kbbbb/u9", agree(), min_sessions=2, mode="auto", min_clients=2)
    assert result == {"promotion": "promoted", "changed": True}
    # a tenant of one key (its app vouches for its users' sessions) counts sessions, as before
    other = store.write(candidate(32, session="u1"))
    for n, session in enumerate(("u2", "u3")):
        result = store.add_evidence(other, session, agree(), min_sessions=2, mode="auto")
    assert result["promotion"] == "promoted"
