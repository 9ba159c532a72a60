"""Prometheus metrics of one gateway app (its own registry: no global state)."""
from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from fingerprint.domain import CLASSES
from gateway.timeline import DecisionTimeline

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
DECISION_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1)
TTFT_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
# a decision reason's family (the part before ':'): a bounded label set; anything else is "other"
REASONS = frozenset({"accept", "exact", "duplicate", "coalesced", "band", "intent", "validator", "entities",
                     "params", "policy", "topic_switch", "reset", "no_entry", "no_candidate", "no_user_turn",
                     "signal", "unsupported", "fail_open", "cache", "client", "route", "context"})
DOMAINS = frozenset(CLASSES)
OTHER = "other"


def reason_label(reason: str) -> str:
    family = reason.split(":", 1)[0]
    return family if family in REASONS else OTHER


def domain_label(domain: str | None) -> str:
    return domain if domain in DOMAINS else ("none" if domain is None else OTHER)


def _total(counter: Counter) -> dict[tuple, float]:
    return {tuple(s.labels.values()): s.value for m in counter.collect() for s in m.samples
            if s.name.endswith("_total")}


class GatewayMetrics:
    def __init__(self, tenant_label: bool = False, tenant_cap: int = 50) -> None:
        # tenant names are client-facing and unbounded: off by default, and at most `tenant_cap` distinct
        # values when on (the rest share "other"), so a scrape never grows with the customer list
        self.tenant_label, self.tenant_cap = tenant_label, tenant_cap
        self._tenants: set[str] = set()
        self.timeline = DecisionTimeline()       # the dashboard's history (flushed to the events table)
        r = self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("semcache_requests", "Chat completion requests by cache outcome", ["cache"],
                                registry=r)
        self.latency = Histogram("semcache_request_duration_seconds", "Gateway latency by cache outcome",
                                 ["cache"], buckets=LATENCY_BUCKETS, registry=r)
        self.upstream_errors = Counter("semcache_upstream_errors", "Upstream failures by kind", ["kind"], registry=r)
        self.upstream_retries = Counter("semcache_upstream_retries", "Upstream requests sent again once after the connection failed before any response byte (a pooled keep-alive connection closed under us), by error",
                                         ["error"], registry=r)
        self.fail_open = Counter("semcache_fail_open", "Cache operations that failed open (the request was forwarded or answered without the cache), by dependency (redis, store, encoder, internal) and stage (decide: a dependency failed while deciding; skipped: the breaker was open; evidence: the promotion-evidence match beside the forward; bookkeeping, write)",
                                 ["dependency", "stage"], registry=r)
        self.breaker_state = Gauge("semcache_cache_breaker_state", "The cache circuit breaker: 0 closed, 1 half-open, 2 open (requests bypass the cache)", registry=r)
        self.index_catch_up = Counter("semcache_index_catch_up_changes", "Index entries added or removed by the catch-up replay (events that never arrived, e.g. during a Redis outage), by action", ["action"], registry=r)
        self.rejected = Counter("semcache_rejected_requests", "Requests rejected before forwarding, by status",
                                ["status"], registry=r)
        self.gate_candidates = Counter("semcache_gate_candidates", "Decisions whose hit gates judged more than "
                                       "the nearest agreeing candidate (gate_k), by result: later (a later one "
                                       "passed) or none (none passed: the nearest one's failure decided)",
                                       ["result"], registry=r)
        self.early_forwards = Counter("semcache_early_forwards", "Requests sent to the backend before the "
                                      "decision (backend_early_forward), by what became of them: used (the "
                                      "request was forwarded) or cancelled (a HIT answered it)", ["result"],
                                      registry=r)
        self.rate_limited = Counter("semcache_rate_limited", "Requests refused with 429 by the per-caller rate "
                                    "limit, by route (chat, feedback)", ["route"], registry=r)
        self.decision_seconds = Histogram("semcache_decision_seconds", "Decision latency by stage "
                                          "(signals, fingerprint, search, gates, total; evidence: the promotion-evidence match, run beside the forward and not in total)", ["stage"],
                                          buckets=DECISION_BUCKETS, registry=r)
        self.saved_prefill = Counter("semcache_saved_prefill_tokens", "Prompt tokens not computed: HITs, and "
                                     "the backend's cached_tokens on forwarded requests", registry=r)
        self.saved_decode = Counter("semcache_saved_decode_tokens", "Answer tokens not generated (HITs)",
                                    registry=r)
        self.pollution = Counter("semcache_cache_pollution", "HITs followed by a negative signal "
                                 "(feedback, regenerate, \"that's wrong\")", registry=r)
        self.feedback = Counter("semcache_feedback", "Feedback signals by kind and source", ["signal", "source"],
                                registry=r)
        self.decisions = Counter("semcache_decisions", "Chat requests by outcome, decision reason family "
                                 "(bounded set), intent domain and tenant (\"\" unless tenant labels are on)",
                                 ["outcome", "reason", "domain", "tenant"], registry=r)
        self.ttft = Histogram("semcache_time_to_first_token_seconds", "Time from the request's arrival to the "
                              "first answer byte sent, by cache outcome (a HIT against forwarded requests)",
                              ["cache"], buckets=TTFT_BUCKETS, registry=r)
        self.pollution_signals = Counter("semcache_pollution_signals", "Negative signals after a HIT, by kind "
                                         "(negative, regenerate; explicit feedback or implicit)",
                                         ["kind", "source"], registry=r)
        self.promotions = Counter("semcache_promotions", "Promotion changes by action: promote / demote (by "
                                  "hand), shadow / promoted / rejected (by evidence), demoted (a negative "
                                  "signal)", ["action"], registry=r)
        self.promotion_evidence = Counter("semcache_promotion_evidence", "Requests of another session that "
                                          "matched a promotion candidate through every gate, by the candidate's "
                                          "state (candidate, or shadow: a HIT it would have served) and whether "
                                          "the request's own answer agreed", ["state", "result"], registry=r)
        self.evidence_shed = Counter("semcache_promotion_evidence_shed", "Forwarded requests whose promotion-"
                                     "evidence match was skipped because the process was busy deciding others "
                                     "(gateway/cache/service.py EVIDENCE_SHED_AT)", registry=r)
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

    def tenant(self, tenant: str | None) -> str:
        """The tenant label value: "" when tenant labels are off, the tenant for the first `tenant_cap`
        tenants seen, "other" after."""
        if not self.tenant_label:
            return ""
        tenant = tenant or ""
        if tenant in self._tenants:
            return tenant
        if len(self._tenants) < self.tenant_cap:
            self._tenants.add(tenant)
            return tenant
        return OTHER

    def decided(self, outcome: str, reason: str, domain: str | None, tenant: str | None,
                latency_s: float | None = None) -> None:
        reason, domain = reason_label(reason), domain_label(domain)
        self.decisions.labels(outcome, reason, domain, self.tenant(tenant)).inc()
        self.timeline.decided(outcome, reason, domain, latency_s)

    def gated(self, gates: dict | None) -> None:
        """A decision's `gates.tried` (present only when more than one candidate was judged)."""
        tried = (gates or {}).get("tried")
        if tried:
            self.gate_candidates.labels("later" if tried[-1].get("reason") == "accept" else "none").inc()

    def polluted(self, kind: str, source: str, domain: str | None = None) -> None:
        self.pollution.inc()
        self.pollution_signals.labels(kind, source).inc()
        self.timeline.polluted(domain_label(domain))

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
