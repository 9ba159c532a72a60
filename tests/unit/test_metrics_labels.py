"""The labelled decision metrics: bounded reason and domain labels, and a tenant label that is off by default
and capped when on (a scrape never grows with the customer list)."""
from prometheus_client import generate_latest

from gateway.metrics import OTHER, GatewayMetrics, domain_label, reason_label


def samples(metrics: GatewayMetrics, name: str) -> list[dict]:
    return [s.labels for m in metrics.registry.collect() for s in m.samples if s.name == name]


def test_reasons_and_domains_are_a_bounded_set():
    assert reason_label("intent:modify") == "intent" and reason_label("validator:number") == "validator"
    assert reason_label("fail_open:redis") == "fail_open" and reason_label("accept") == "accept"
    assert reason_label("x" * 500) == OTHER and reason_label("made-up:thing") == OTHER
    assert domain_label("travel_planning") == "travel_planning" and domain_label(None) == "none"
    assert domain_label("a client's own words") == OTHER


def test_tenant_label_is_off_by_default():
    metrics = GatewayMetrics()
    for i in range(20):
        metrics.decided("MISS", "no_candidate", "chitchat", f"tenant-{i}")
    rows = samples(metrics, "semcache_decisions_total")
    assert rows == [{"outcome": "MISS", "reason": "no_candidate", "domain": "chitchat", "tenant": ""}]
    assert b"tenant-3" not in generate_latest(metrics.registry)


def test_tenant_label_cardinality_is_capped():
    metrics = GatewayMetrics(tenant_label=True, tenant_cap=5)
    for i in range(200):
        metrics.decided("HIT", "accept", "travel_planning", f"tenant-{i}")
        metrics.decided("PARTIAL", f"intent:{i}", "unknown-domain-{i}", f"tenant-{i}")
    tenants = {row["tenant"] for row in samples(metrics, "semcache_decisions_total")}
    assert tenants == {f"tenant-{i}" for i in range(5)} | {OTHER}
    reasons = {row["reason"] for row in samples(metrics, "semcache_decisions_total")}
    assert reasons == {"accept", "intent"}
    assert len(samples(metrics, "semcache_decisions_total")) == 12          # 6 tenant values x 2 rows
    # the first tenants keep their own label after the cap is reached
    metrics.decided("HIT", "accept", "travel_planning", "tenant-1")
    counts = {(s.labels["tenant"], s.labels["outcome"]): s.value for m in metrics.decisions.collect()
              for s in m.samples if s.name == "semcache_decisions_total"}
    assert counts[("tenant-1", "HIT")] == 2 and counts[(OTHER, "HIT")] == 195


def test_pollution_is_counted_in_total_and_by_kind():
    metrics = GatewayMetrics()
    metrics.polluted("regenerate", "implicit")
    metrics.polluted("negative", "explicit")
    assert metrics.rates()["cache_pollution"] == 2
    kinds = {(r["kind"], r["source"]) for r in samples(metrics, "semcache_pollution_signals_total")}
    assert kinds == {("regenerate", "implicit"), ("negative", "explicit")}


def test_gate_candidates_count_only_decisions_that_judged_more_than_one():
    metrics = GatewayMetrics()
    metrics.gated({"band": "accept", "intent": "same"})          # one candidate: nothing to count
    metrics.gated(None)
    metrics.gated({"tried": [{"cache_id": "a", "score": 0.98, "reason": "intent:modify"},
                             {"cache_id": "b", "score": 0.97, "reason": "accept"}]})
    metrics.gated({"tried": [{"cache_id": "a", "score": 0.98, "reason": "intent:modify"},
                             {"cache_id": "b", "score": 0.97, "reason": "validator:number"}]})
    metrics.gated({"tried": [{"cache_id": "a", "score": 0.98, "reason": "intent:switch"},
                             {"cache_id": "b", "score": 0.96, "reason": "intent:modify"}]})
    counts = {tuple(s.labels.values()): s.value for m in metrics.registry.collect() for s in m.samples
              if s.name == "semcache_gate_candidates_total"}
    assert counts == {("later",): 1.0, ("none",): 2.0}
