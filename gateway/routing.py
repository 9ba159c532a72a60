"""Several backend replicas behind one gateway: cache-affinity routing, bounded load, health and failover.

A PARTIAL is worth its KV prefix only on the replica that holds the session's blocks, so a session sticks
to one replica: rendezvous (highest-random-weight) hashing on the tenant and session id picks it, and a
replica's arrival or departure moves only the sessions it gains or loses. Load stays bounded as in
consistent hashing with bounded loads (Mirrokni, Thorup and Zadimoghaddam): a replica that already carries
more than (1 + epsilon) times its share of the requests in flight passes the request on to the next
replica in the session's hash order.

A replica that refuses connections is ejected at once; one that fails `eject_failures` times in a row (5xx,
timeouts, broken streams) too. It stays out for a back-off that doubles on each ejection, then an active
check lets it back in. A request that failed before any byte reached the client is sent once more, to the
next replica; once a streamed answer has started it never is. With every replica ejected, requests still
go out in hash order: a guess beats refusing them all.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable

import httpx

from gateway.errors import GatewayError
from gateway.metrics import GatewayMetrics
from gateway.settings import Settings, parse_backends
from gateway.upstream import Upstream, open_upstream, remote_upstream

log = logging.getLogger("semcache.gateway")
MAX_BACKOFF_S = 120.0
CHECK_TIMEOUT_S = 5.0
SESSION_MEMORY = 100_000            # sessions whose last replica is remembered (the oldest are forgotten first)


def display_name(url: str) -> str:
    """The replica's name in metrics and logs: its URL without credentials."""
    parsed = httpx.URL(url)
    return str(parsed.copy_with(username=None, password=None)) if parsed.userinfo else url


def _unit(key: str, replica: str) -> float:
    """A uniform draw in (0, 1) fixed by (key, replica)."""
    digest = hashlib.blake2b(f"{key}\0{replica}".encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return (int.from_bytes(digest, "big") + 0.5) / 2**64


@dataclass
class Replica:
    upstream: Upstream
    name: str
    weight: float = 1.0
    in_flight: int = 0
    failures: int = 0                  # consecutive failed requests or checks
    ejected_until: float = 0.0         # monotonic time; 0: in rotation
    ejections: int = 0
    backoff_s: float = 0.0
    last_error: str | None = None
    counts: dict = field(default_factory=lambda: {"requests": 0, "errors": 0, "prompt_tokens": 0,
                                                  "cached_tokens": 0})

    @property
    def ejected(self) -> bool:
        return self.ejected_until > 0

    def rank(self, key: str) -> float:
        """Weighted rendezvous score: -w / ln(u) gives each replica a share of keys proportional to its weight."""
        return -self.weight / math.log(_unit(key, self.name))


class _TrackedStream(httpx.AsyncByteStream):
    """The response body of one replica's answer: its request stays in flight until the body is closed, and a
    stream that breaks counts against the replica."""

    def __init__(self, inner, on_close: Callable[[str | None], None]):
        self.inner, self.on_close, self.closed = inner, on_close, False

    async def __aiter__(self):
        try:
            async for chunk in self.inner:
                yield chunk
        except httpx.TransportError as exc:
            self._close(exc.__class__.__name__)
            raise

    def _close(self, error: str | None) -> None:
        if not self.closed:
            self.closed = True
            self.on_close(error)

    async def aclose(self) -> None:
        self._close(None)
        await self.inner.aclose()


class ReplicaSet:
    """The gateway's backends: what handlers call `upstream`. With one replica it is that replica's Upstream
    (its own connection retry, no failover); with several it routes, balances and fails over."""

    def __init__(self, upstreams: list[tuple[Upstream, float]], policy: str = "affinity",
                 load_factor: float = 0.25, eject_failures: int = 3, eject_s: float = 5.0,
                 health_path: str = "/v1/models", health_interval_s: float = 5.0,
                 metrics: GatewayMetrics | None = None):
        if not upstreams:
            raise ValueError("no backend configured")
        self.replicas = [Replica(u, u.name, w) for u, w in upstreams]
        self.by_name = {r.name: r for r in self.replicas}
        self.policy, self.load_factor = policy, load_factor
        self.eject_failures, self.eject_s = eject_failures, eject_s
        self.health_path, self.health_interval_s = health_path, health_interval_s
        self.metrics = metrics
        self.last_replica: OrderedDict[str, str] = OrderedDict()     # affinity key -> replica of its last turn
        self._next = 0                                                 # round robin
        first = self.replicas[0].upstream
        self.embedded = first.embedded and len(self.replicas) == 1
        self.name = ",".join(r.name for r in self.replicas)
        self._on_retry: Callable[[str], None] | None = None
        self._bundled: bool | None = None          # every replica is the bundled engine (drafts), once known
        self._hints: set[asyncio.Task] = set()      # prefetch notes in flight (kept so they are not collected)
        if metrics is not None:
            for replica in self.replicas:
                metrics.backend_healthy.labels(replica.name).set(1)
                metrics.backend_in_flight.labels(replica.name).set(0)

    # ---- the Upstream interface the handlers use -------------------------------------------------------
    @property
    def internal_token(self) -> str | None:
        return self.replicas[0].upstream.internal_token

    @property
    def on_retry(self):
        return self._on_retry

    @on_retry.setter
    def on_retry(self, callback) -> None:
        self._on_retry = callback
        for replica in self.replicas:
            replica.upstream.on_retry = callback

    def headers(self, *args, **kwargs) -> dict[str, str]:
        return self.replicas[0].upstream.headers(*args, **kwargs)    # keys and tokens are the same for all

    async def send(self, method: str, path: str, headers: dict[str, str], body: bytes | None = None,
                   query: bytes = b"", affinity: str | None = None) -> httpx.Response:
        """Send to the replica chosen for `affinity` (a tenant and session; None: any replica) and return once
        the status and headers are in. The response's extensions name the replica (`semcache_replica`). A
        connection failure, timeout or 5xx is sent once more to the next replica; the body is the caller's."""
        plan = self.plan(affinity)
        for attempt, replica in enumerate(plan[:2]):
            last = attempt == len(plan[:2]) - 1
            self._started(replica)
            try:
                response = await replica.upstream.send(method, path, headers, body, query)
            except GatewayError as exc:
                self._finished(replica, exc.code or "failed", refused=exc.code == "upstream_unreachable")
                if last:
                    raise
                self._failover(replica, plan[attempt + 1], exc.code or "failed")
                continue
            except BaseException:            # cancelled (the client left): not the replica's fault
                self._finished(replica, None)
                raise
            if response.status_code >= 500 and not last:
                await response.aclose()
                self._finished(replica, f"status_{response.status_code}")
                self._failover(replica, plan[attempt + 1], f"status_{response.status_code}")
                continue
            if affinity is not None and response.status_code < 500:
                self._remember(affinity, replica)
            status_error = f"status_{response.status_code}" if response.status_code >= 500 else None
            if response.is_closed:           # read in full already (an in-memory answer): nothing stays open
                self._finished(replica, status_error)
            else:
                response.stream = _TrackedStream(response.stream,
                                                 lambda error, r=replica, s=status_error: self._finished(r, error or s))
            response.extensions = {**response.extensions, "semcache_replica": replica.name}
            return response
        raise AssertionError("unreachable: the plan has at least one replica")

    async def accepts_drafts(self, mode: str = "auto") -> bool:
        """Whether a request may carry the `semcache.draft` extension: `on`, `off`, or (auto) when every
        replica is the bundled engine (embedded, or `/v1/models` says owned_by "semcache"), asked once."""
        if mode != "auto":
            return mode == "on"
        if self._bundled is None:
            if self.embedded:
                self._bundled = True
            else:
                answers = await asyncio.gather(*(self._owned_by_semcache(r) for r in self.replicas))
                if all(a is not None for a in answers):        # a replica that did not answer: ask again later
                    self._bundled = all(answers)
                else:
                    return False
        return self._bundled

    def bundled_now(self) -> bool:
        """`accepts_drafts("auto")` without waiting: the answer once known; until then False, and the question
        goes out in the background (a request must never wait for another backend's /v1/models)."""
        if self.embedded or self._bundled is not None:
            return self.embedded or bool(self._bundled)
        if not any(t.get_name() == "semcache-bundled-check" for t in self._hints):
            task = asyncio.get_running_loop().create_task(self.accepts_drafts("auto"), name="semcache-bundled-check")
            self._hints.add(task)
            task.add_done_callback(self._hints.discard)
        return False

    def hint_soon(self, mode: str, path: str, headers: dict[str, str], body: bytes, affinity: str | None) -> None:
        """A best-effort note to the replica that will take this request (the bundled engine's KV prefetch),
        sent in the background: no in-flight accounting, no metrics, no retry, failures ignored. `mode` as
        for drafts: auto sends it only to the bundled engine."""
        if self.policy == "round_robin" and len(self.replicas) > 1:
            return                      # the next request's replica is not known before it is sent

        async def send() -> None:
            if not await self.accepts_drafts(mode):
                return
            replica = self.plan(affinity)[0]
            try:
                response = await asyncio.wait_for(replica.upstream.send("POST", path, headers, body),
                                                  CHECK_TIMEOUT_S)
                await response.aclose()
            except (GatewayError, asyncio.TimeoutError, httpx.HTTPError):
                pass
        task = asyncio.get_running_loop().create_task(send())
        self._hints.add(task)
        task.add_done_callback(self._hints.discard)

    async def _owned_by_semcache(self, replica: Replica) -> bool | None:
        try:
            response = await asyncio.wait_for(replica.upstream.send("GET", "/v1/models",
                                                                    self.headers("models", None, None)),
                                              CHECK_TIMEOUT_S)
            body = await response.aread()
            await response.aclose()
            models = json.loads(body).get("data") or []
            return response.status_code == 200 and bool(models) and all(
                isinstance(m, dict) and m.get("owned_by") == "semcache" for m in models)
        except (GatewayError, asyncio.TimeoutError, ValueError, AttributeError, httpx.HTTPError):
            return None

    async def ready(self) -> bool:
        results = await asyncio.gather(*(r.upstream.ready() for r in self.replicas))
        return any(results)

    async def aclose(self) -> None:
        for replica in self.replicas:
            await replica.upstream.aclose()

    # ---- routing ---------------------------------------------------------------------------------------
    def plan(self, affinity: str | None) -> list[Replica]:
        """The replicas in the order to try them: the chosen one first, then the rest of the hash order, the
        ejected ones last (used only when nothing else is left)."""
        if len(self.replicas) == 1:
            return self.replicas
        if self.policy == "round_robin" or affinity is None:
            start = self._next
            self._next = (self._next + 1) % len(self.replicas)
            order = self.replicas[start:] + self.replicas[:start]
        else:
            order = sorted(self.replicas, key=lambda r: r.rank(affinity), reverse=True)
        healthy = [r for r in order if not r.ejected]
        if not healthy:
            return order
        chosen = None
        previous = self.by_name.get(self.last_replica.get(affinity, "")) if affinity is not None else None
        if self.policy == "affinity" and previous is not None and not previous.ejected \
                and self._within_bound(previous, healthy):
            chosen = previous
        if chosen is None:
            chosen = next((r for r in healthy if self._within_bound(r, healthy)), healthy[0])
        return [chosen] + [r for r in healthy if r is not chosen] + [r for r in order if r.ejected]

    def _within_bound(self, replica: Replica, healthy: list[Replica]) -> bool:
        """Room for one more request: in flight below ceil((1 + eps) * its weighted share of all in flight,
        this one included)."""
        if self.policy != "affinity":
            return True
        total = sum(r.in_flight for r in healthy) + 1
        share = replica.weight / sum(r.weight for r in healthy)
        return replica.in_flight + 1 <= math.ceil((1 + self.load_factor) * total * share)

    def _remember(self, affinity: str, replica: Replica) -> None:
        self.last_replica[affinity] = replica.name
        self.last_replica.move_to_end(affinity)
        if len(self.last_replica) > SESSION_MEMORY:
            self.last_replica.popitem(last=False)

    # ---- health ----------------------------------------------------------------------------------------
    def _started(self, replica: Replica) -> None:
        replica.in_flight += 1
        replica.counts["requests"] += 1
        if self.metrics is not None:
            self.metrics.backend_requests.labels(replica.name).inc()
            self.metrics.backend_in_flight.labels(replica.name).set(replica.in_flight)

    def _finished(self, replica: Replica, error: str | None, refused: bool = False) -> None:
        replica.in_flight = max(0, replica.in_flight - 1)
        if self.metrics is not None:
            self.metrics.backend_in_flight.labels(replica.name).set(replica.in_flight)
        if error is None:
            replica.failures = 0
            return
        replica.counts["errors"] += 1
        replica.failures += 1
        replica.last_error = error
        if self.metrics is not None:
            self.metrics.backend_errors.labels(replica.name, error.removeprefix("upstream_")).inc()
        if len(self.replicas) > 1 and not replica.ejected and (refused or replica.failures >= self.eject_failures):
            self._eject(replica, error)

    def _failover(self, failed: Replica, to: Replica, error: str) -> None:
        log.warning("backend request failed before any byte reached the client; sending it to the next replica",
                    extra={"fields": {"replica": failed.name, "error": error, "retry_on": to.name}})
        if self.metrics is not None:
            self.metrics.upstream_retries.labels("failover").inc()

    def _eject(self, replica: Replica, error: str) -> None:
        """Out of rotation for a back-off that doubles each time (the first is `eject_s`); an ejected replica
        whose check fails again waits the next, longer one."""
        again = replica.ejected
        replica.backoff_s = min(MAX_BACKOFF_S, replica.backoff_s * 2 if replica.backoff_s else self.eject_s)
        replica.ejected_until = time.monotonic() + replica.backoff_s
        if again:
            return
        replica.ejections += 1
        log.warning("backend replica ejected", extra={"fields": {"replica": replica.name, "error": error,
                                                                 "backoff_s": replica.backoff_s}})
        if self.metrics is not None:
            self.metrics.backend_ejections.labels(replica.name).inc()
            self.metrics.backend_healthy.labels(replica.name).set(0)

    def _admit(self, replica: Replica) -> None:
        if replica.ejected:
            log.warning("backend replica back in rotation", extra={"fields": {"replica": replica.name}})
            if self.metrics is not None:
                self.metrics.backend_healthy.labels(replica.name).set(1)
        replica.ejected_until, replica.failures, replica.backoff_s = 0.0, 0, 0.0

    async def check(self, replica: Replica) -> bool:
        """One active check: the health path answers 200 within CHECK_TIMEOUT_S. A replica that refuses the
        connection is ejected at once, one that fails otherwise after `eject_failures` checks in a row; an
        ejected one comes back on its first good check."""
        refused = False
        try:
            response = await asyncio.wait_for(
                replica.upstream.send("GET", self.health_path, self.headers("health-check", None, None)),
                CHECK_TIMEOUT_S)
            await response.aclose()
            ok = response.status_code == 200
        except asyncio.TimeoutError:
            ok = False
        except GatewayError as exc:
            ok, refused = False, exc.code == "upstream_unreachable"
        if ok:
            self._admit(replica)
            return True
        replica.failures += 1
        replica.last_error = "health_check"
        if replica.ejected or refused or replica.failures >= self.eject_failures:
            self._eject(replica, "health_check")
        return False

    async def health_loop(self) -> None:
        """Active checks: every replica in rotation each interval, an ejected one when its back-off ends."""
        if len(self.replicas) == 1:
            return
        while True:
            now = time.monotonic()
            due = [r for r in self.replicas if not r.ejected or now >= r.ejected_until]
            await asyncio.gather(*(self.check(r) for r in due), return_exceptions=True)
            await asyncio.sleep(min(self.health_interval_s, 1.0) if any(r.ejected for r in self.replicas)
                                else self.health_interval_s)

    # ---- visibility ------------------------------------------------------------------------------------
    def observe_usage(self, replica_name: str | None, usage: dict) -> None:
        """Prompt and cached tokens of an answer, per replica (the share of the prompt served from its KV cache)."""
        replica = self.by_name.get(replica_name or "")
        if replica is None:
            return
        prompt = int(usage.get("prompt_tokens") or 0)
        cached = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
        replica.counts["prompt_tokens"] += prompt
        replica.counts["cached_tokens"] += cached
        if self.metrics is not None:
            self.metrics.backend_prompt_tokens.labels(replica.name).inc(prompt)
            self.metrics.backend_cached_tokens.labels(replica.name).inc(cached)

    def snapshot(self) -> list[dict]:
        now = time.monotonic()
        out = []
        for r in self.replicas:
            prompt = r.counts["prompt_tokens"]
            out.append({"name": r.name, "weight": r.weight, "state": "ejected" if r.ejected else "healthy",
                        "in_flight": r.in_flight, "ejections": r.ejections, "last_error": r.last_error,
                        "back_in_s": round(max(0.0, r.ejected_until - now), 1) if r.ejected else None,
                        **r.counts, "cached_share": round(r.counts["cached_tokens"] / prompt, 4) if prompt else None})
        return out


async def open_backends(settings: Settings, metrics: GatewayMetrics | None = None) -> ReplicaSet:
    """`backends` when set (several replicas), else the one backend of `backend_url` (embedded by default)."""
    options = dict(policy=settings.backend_routing, load_factor=settings.backend_load_factor,
                   eject_failures=settings.backend_eject_failures, eject_s=settings.backend_eject_s,
                   health_path=settings.backend_health_path,
                   health_interval_s=settings.backend_health_interval_s, metrics=metrics)
    listed = parse_backends(settings.backends)
    if not listed:
        return ReplicaSet([(await open_upstream(settings), 1.0)], **options)
    per_replica = max(8, -(-settings.max_connections // len(listed)))
    upstreams = []
    for url, weight in listed:
        upstream = remote_upstream(settings, url, per_replica)
        upstream.name = display_name(url)
        upstreams.append((upstream, weight))
    return ReplicaSet(upstreams, **options)
