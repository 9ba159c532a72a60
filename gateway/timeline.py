"""The dashboard's history: decisions counted in 5-minute buckets, kept in the store's events table.

Each gateway process counts its requests per (bucket, outcome, reason family, domain) in memory, with a
latency histogram, saved tokens and pollution signals, and the upkeep loop writes the counts as `stats`
events every few seconds: one row per key and flush, never one per request. Replicas and workers each write
their own rows; a query sums them. Rows older than the longest window (a week, plus a day) are deleted.
"""
from __future__ import annotations

import bisect
import threading
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone

from sqlalchemy import delete, func, select

from gateway.store.models import CacheEntry, CacheEvent

BUCKET_S = 300
WINDOWS = {"hour": 3600, "day": 86_400, "week": 7 * 86_400}
KEEP_S = WINDOWS["week"] + 86_400
PRUNE_EVERY_S = 3600.0
LATENCY_EDGES_MS = (5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000)


def _bucket(ts: float) -> int:
    return int(ts // BUCKET_S * BUCKET_S)


class DecisionTimeline:
    """In-memory counts since the last flush (thread-safe: decisions finish on the event loop, pollution
    signals can come from worker threads)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._rows: dict[tuple, dict] = {}
        self._extra: dict[int, dict] = defaultdict(lambda: {"saved_prefill": 0, "saved_decode": 0})
        self._pruned = 0.0

    def decided(self, outcome: str, reason: str, domain: str, latency_s: float | None) -> None:
        key = (_bucket(time.time()), outcome, reason, domain)
        with self._lock:
            row = self._rows.get(key)
            if row is None:
                row = self._rows[key] = {"count": 0, "latency": [0] * (len(LATENCY_EDGES_MS) + 1), "pollution": 0}
            row["count"] += 1
            if latency_s is not None:
                row["latency"][bisect.bisect_left(LATENCY_EDGES_MS, latency_s * 1e3)] += 1

    def polluted(self, domain: str) -> None:
        key = (_bucket(time.time()), "POLLUTION", "", domain)
        with self._lock:
            row = self._rows.setdefault(key, {"count": 0, "latency": [], "pollution": 0})
            row["pollution"] += 1

    def saved(self, prefill: int, decode: int) -> None:
        with self._lock:
            extra = self._extra[_bucket(time.time())]
            extra["saved_prefill"] += int(prefill)
            extra["saved_decode"] += int(decode)

    def drain(self) -> list[dict]:
        """The counts as event details, and a fresh start."""
        with self._lock:
            rows, self._rows = self._rows, {}
            extra, self._extra = self._extra, defaultdict(lambda: {"saved_prefill": 0, "saved_decode": 0})
        out = [{"bucket": b, "outcome": o, "reason": r, "domain": d, **v} for (b, o, r, d), v in rows.items()]
        out += [{"bucket": b, "outcome": "SAVED", "reason": "", "domain": "", **v} for b, v in extra.items()]
        return out

    def flush(self, store) -> int:
        """Writes the counts (lost if the database is down: the dashboard shows a gap, the metrics do not)."""
        rows = self.drain()
        now = datetime.now(timezone.utc)
        with store.sessions.begin() as db:
            if rows:
                db.add_all([CacheEvent(at=now, kind="stats", detail=row) for row in rows])
            if time.monotonic() - self._pruned >= PRUNE_EVERY_S:
                self._pruned = time.monotonic()
                db.execute(delete(CacheEvent).where(CacheEvent.kind == "stats",
                                                    CacheEvent.at < now - timedelta(seconds=KEEP_S)))
        return len(rows)


def _quantile(histogram: list[int], q: float) -> float | None:
    """The upper edge (ms) of the bucket holding the q-quantile; None without samples."""
    total = sum(histogram)
    if not total:
        return None
    seen = 0
    for i, n in enumerate(histogram):
        seen += n
        if seen >= q * total:
            return float(LATENCY_EDGES_MS[i]) if i < len(LATENCY_EDGES_MS) else float(LATENCY_EDGES_MS[-1] * 2)
    return None


def load(store, window: str) -> dict:
    """The dashboard's series for the last `window` (hour, day, week), in 5-minute buckets."""
    span = WINDOWS[window]
    now = time.time()
    start = _bucket(now - span) + BUCKET_S
    buckets = list(range(start, _bucket(now) + BUCKET_S, BUCKET_S))
    index = {b: i for i, b in enumerate(buckets)}
    since = datetime.fromtimestamp(start, timezone.utc) - timedelta(seconds=BUCKET_S)
    with store.sessions() as db:
        details = db.scalars(select(CacheEvent.detail).where(CacheEvent.kind == "stats",
                                                             CacheEvent.at >= since)).all()
    zeros = lambda: [0] * len(buckets)                                          # noqa: E731
    outcomes = {o: zeros() for o in ("HIT", "PARTIAL", "MISS", "BYPASS")}
    reasons: dict[str, list[int]] = defaultdict(zeros)
    latency: dict[str, list[list[int]]] = {}
    pollution, saved_prefill, saved_decode = zeros(), zeros(), zeros()
    domains: dict[str, dict] = defaultdict(lambda: {"requests": 0, "hits": 0, "pollution": 0})
    for d in details:
        i = index.get(d.get("bucket"))
        if i is None:
            continue
        outcome = d.get("outcome")
        if outcome == "SAVED":
            saved_prefill[i] += d.get("saved_prefill", 0)
            saved_decode[i] += d.get("saved_decode", 0)
            continue
        if outcome == "POLLUTION":
            pollution[i] += d.get("pollution", 0)
            domains[d.get("domain") or "none"]["pollution"] += d.get("pollution", 0)
            continue
        if outcome not in outcomes:
            continue
        count = d.get("count", 0)
        outcomes[outcome][i] += count
        reasons[f"{outcome} {d.get('reason')}"][i] += count
        per_bucket = latency.setdefault(outcome, [[0] * (len(LATENCY_EDGES_MS) + 1) for _ in buckets])
        for j, n in enumerate(d.get("latency") or []):
            if j < len(per_bucket[i]):
                per_bucket[i][j] += n
        row = domains[d.get("domain") or "none"]
        row["requests"] += count
        row["hits"] += count if outcome == "HIT" else 0
    hits_total = sum(outcomes["HIT"])
    top = sorted(reasons, key=lambda r: -sum(reasons[r]))[:8]
    return {
        "window": window, "bucket_s": BUCKET_S, "buckets": buckets, "outcomes": outcomes,
        "saved_prefill": saved_prefill, "saved_decode": saved_decode, "pollution": pollution,
        "precision_proxy": [None if not h else max(0.0, (h - p) / h) for h, p in zip(outcomes["HIT"], pollution)],
        "totals": {**{o: sum(v) for o, v in outcomes.items()}, "pollution": sum(pollution),
                   "saved_prefill": sum(saved_prefill), "saved_decode": sum(saved_decode),
                   "precision_proxy": (hits_total - sum(pollution)) / hits_total if hits_total else None},
        "reasons": {r: reasons[r] for r in top},
        "latency": {o: {"p50": [_quantile(h, 0.5) for h in hs], "p95": [_quantile(h, 0.95) for h in hs]}
                    for o, hs in latency.items()},
        "domains": domains,
    }


def domain_table(store, timeline: dict) -> list[dict]:
    """Per domain: entries by state (the store) with the window's requests, hits and pollution."""
    with store.sessions() as db:
        rows = db.execute(select(CacheEntry.intent_domain, CacheEntry.state, func.count(),
                                 func.coalesce(func.sum(CacheEntry.hit_count), 0))
                          .group_by(CacheEntry.intent_domain, CacheEntry.state)).all()
    table: dict[str, dict] = {}
    for domain, state, count, hits in rows:
        row = table.setdefault(domain, {"domain": domain, "entries": {}, "entry_hits": 0})
        row["entries"][state] = int(count)
        row["entry_hits"] += int(hits)
    for domain, numbers in timeline["domains"].items():
        table.setdefault(domain, {"domain": domain, "entries": {}, "entry_hits": 0}).update(numbers)
    return sorted(table.values(), key=lambda r: r["domain"])


def entry_events(store, cache_id: str, limit: int = 200) -> list[dict]:
    """An entry's history, oldest first: ready, hits, feedback, invalidation."""
    with store.sessions() as db:
        rows = db.execute(select(CacheEvent.at, CacheEvent.kind, CacheEvent.detail)
                          .where(CacheEvent.cache_id == cache_id).order_by(CacheEvent.id.desc())
                          .limit(limit)).all()
    return [{"at": at.isoformat(), "kind": kind, "detail": detail} for at, kind, detail in reversed(rows)]
