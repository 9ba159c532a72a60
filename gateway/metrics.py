"""Prometheus metrics of one gateway app (its own registry: no global state)."""
from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class GatewayMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("semcache_requests", "Chat completion requests by cache outcome",
                                ["cache"], registry=self.registry)
        self.latency = Histogram("semcache_request_duration_seconds", "Gateway latency by cache outcome",
                                 ["cache"], buckets=LATENCY_BUCKETS, registry=self.registry)
        self.upstream_errors = Counter("semcache_upstream_errors", "Upstream failures by kind",
                                       ["kind"], registry=self.registry)
        self.rejected = Counter("semcache_rejected_requests", "Requests rejected before forwarding, by status",
                                ["status"], registry=self.registry)

    def render(self) -> bytes:
        return generate_latest(self.registry)
