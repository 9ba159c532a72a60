"""Prometheus metrics of one gateway app (its own registry: no global state)."""
from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
DECISION_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1)


def _total(counter: Counter) -> dict[tuple, float]:
    return {tuple(s.labels.values()): s.value for m in counter.collect() for s in m.samples
            if s.name.endswith("_total")}


class GatewayMetrics:
    def __init__(self) -> None:
        r = self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("semcache_requests", "Chat completion requests by cache outcome", ["cache"],
                                registry=r)
        self.latency = Histogram("semcache_request_duration_seconds", "Gateway latency by cache outcome",
                                 ["cache"], buckets=LATENCY_BUCKETS, registry=r)
        self.upstream_errors = Counter("semcache_upstream_errors", "Upstream failures by kind", ["kind"], registry=r)
        self.upstream_retries = Counter("semcache_upstream_retries", "Upstream requests sent again once after the connection failed before any response byte (a pooled keep-alive connection closed under us), by error",
                                         ["error"], registry=r)
        self.fail_open = Counter("semcache_fail_open", "Cache operations that failed open (the request was forwarded or answered without the cache), by dependency (redis, store, encoder, internal) and stage (decide: a dependency failed while deciding; skipped: the breaker was open; bookkeeping, write)",
                                 ["dependency", "stage"], registry=r)
        self.breaker_state = Gauge("semcache_cache_breaker_state", "The cache circuit breaker: 0 closed, 1 half-open, 2 open (requests bypass the cache)", registry=r)
        self.index_catch_up = Counter("semcache_index_catch_up_changes", "Index entries added or removed by the catch-up replay (events that never arrived, e.g. during a Redis outage), by action", ["action"], registry=r)
        self.rejected = Counter("semcache_rejected_requests", "Requests rejected before forwarding, by status",
                                ["status"], registry=r)
        self.rate_limited = Counter("semcache_rate_limited", "Requests refused with 429 by the per-caller rate "
                                    "limit, by route (chat, feedback)", ["route"], registry=r)
        self.decision_seconds = Histogram("semcache_decision_seconds", "Decision latency by stage "
                                          "(signals, fingerprint, search, gates, total)", ["stage"],
                                          buckets=DECISION_BUCKETS, registry=r)
        self.saved_prefill = Counter("semcache_saved_prefill_tokens", "Prompt tokens not computed: HITs, and "
                                     "the backend's cached_tokens on forwarded requests", registry=r)
        self.saved_decode = Counter("semcache_saved_decode_tokens", "Answer tokens not generated (HITs)",
                                    registry=r)
        self.pollution = Counter("semcache_cache_pollution", "HITs followed by a negative signal "
                                 "(feedback, regenerate, \"that's wrong\")", registry=r)
        self.feedback = Counter("semcache_feedback", "Feedback signals by kind and source", ["signal", "source"],
                                registry=r)
        # backend replicas (gateway/routing.py), labelled by the replica's URL
        self.backend_requests = Counter("semcache_backend_requests", "Requests sent to each backend replica "
                                        "(a failover counts on both)", ["replica"], registry=r)
        self.backend_errors = Counter("semcache_backend_errors", "Failed requests per backend replica, by kind "
                                      "(unreachable, timeout, failed, status_5xx, a broken stream)",
                                      ["replica", "kind"], registry=r)
        self.backend_in_flight = Gauge("semcache_backend_in_flight", "Requests in flight per backend replica",
                                       ["replica"], registry=r)
        self.backend_ejections = Counter("semcache_backend_ejections", "Times each backend replica was taken "
                                         "out of rotation", ["replica"], registry=r)
        self.backend_healthy = Gauge("semcache_backend_healthy", "1 while the backend replica is in rotation, "
                                     "0 while it is ejected", ["replica"], registry=r)
        self.backend_prompt_tokens = Counter("semcache_backend_prompt_tokens", "Prompt tokens of forwarded "
                                             "requests per backend replica", ["replica"], registry=r)
        self.backend_cached_tokens = Counter("semcache_backend_cached_prompt_tokens", "Prompt tokens the "
                                             "replica served from its KV cache (usage cached_tokens)",
                                             ["replica"], registry=r)
        self.hit_rate = Gauge("semcache_hit_rate", "HITs / cache-eligible requests", registry=r)
        self.partial_rate = Gauge("semcache_partial_rate", "PARTIALs / cache-eligible requests", registry=r)
        self.precision_proxy = Gauge("semcache_precision_proxy", "HITs not followed by a negative signal / HITs",
                                     registry=r)

    def rates(self) -> dict:
        by_outcome = {labels[0]: value for labels, value in _total(self.requests).items()}
        eligible = sum(by_outcome.get(k, 0.0) for k in ("HIT", "PARTIAL", "MISS"))
        hits = by_outcome.get("HIT", 0.0)
        pollution = _total(self.pollution).get((), 0.0)
        return {"requests": by_outcome, "hit_rate": hits / eligible if eligible else 0.0,
                "partial_rate": by_outcome.get("PARTIAL", 0.0) / eligible if eligible else 0.0,
                "precision_proxy": (hits - pollution) / hits if hits else 1.0, "cache_pollution": pollution,
                "saved_prefill_tokens": _total(self.saved_prefill).get((), 0.0),
                "saved_decode_tokens": _total(self.saved_decode).get((), 0.0)}

    def render(self) -> bytes:
        rates = self.rates()
        self.hit_rate.set(rates["hit_rate"])
        self.partial_rate.set(rates["partial_rate"])
        self.precision_proxy.set(rates["precision_proxy"])
        return generate_latest(self.registry)

    def decision_quantiles(self) -> dict:
        """Approximate p50/p99 per stage from the histogram buckets (ms), for /admin/stats."""
        out = {}
        for metric in self.decision_seconds.collect():
            buckets: dict[str, list] = {}
            for s in metric.samples:
                if s.name.endswith("_bucket"):
                    buckets.setdefault(s.labels["stage"], []).append((float(s.labels["le"]), s.value))
            for stage, pairs in buckets.items():
                pairs.sort()
                count = pairs[-1][1]
                if not count:
                    continue
                quantile = {}
                for q in (0.5, 0.99):
                    bound = next((le for le, c in pairs if c >= q * count), pairs[-1][0])
                    quantile[f"p{int(q * 100)}_ms_le"] = bound * 1e3
                out[stage] = {"count": int(count), **quantile}
        return out
