"""Per-caller rate limits: a token bucket per (route, caller), in-process or shared through Redis.

A bucket holds up to `burst` tokens and refills at `rate` tokens per second;
a request takes one token or is refused with the time until one is back.
The caller is the API key (hashed; the raw key is never logged or stored)
when SEMCACHE_API_KEYS is set, else the client address.

With Redis the buckets live there, updated by one Lua script (EVALSHA) that
reads Redis' own clock, so every replica and worker shares them. When Redis
fails, the limiter fails open: requests pass, one warning is logged per
outage, and Redis is tried again after a short pause.
"""
from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass
from typing import Callable

from litestar import Request

from gateway.auth import caller_id
from gateway.errors import GatewayError

log = logging.getLogger("semcache.gateway")

MAX_LOCAL_BUCKETS = 100_000     # the in-process table drops full (idle) buckets beyond this
REDIS_RETRY_S = 2.0             # after a Redis failure, requests pass without asking it for this long


@dataclass(frozen=True)
class Limit:
    rate: float                 # tokens per second; 0 turns the limit off
    burst: float                # bucket size

    @property
    def on(self) -> bool:
        return self.rate > 0 and self.burst > 0


def take(tokens: float, updated: float, now: float, limit: Limit, cost: float = 1.0) -> tuple[bool, float, float]:
    """One step of the bucket: (allowed, tokens left, seconds until `cost` tokens are back).
    A bucket seen for the first time is passed as (burst, now)."""
    tokens = min(limit.burst, tokens + max(0.0, now - updated) * limit.rate)
    if tokens >= cost:
        return True, tokens - cost, 0.0
    return False, tokens, (cost - tokens) / limit.rate


def retry_after_header(seconds: float) -> str:
    """Retry-After is whole seconds, at least 1."""
    return str(max(1, math.ceil(seconds - 1e-9)))


class LocalBuckets:
    """Buckets in this process (one worker); `clock` is injectable for tests."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    async def acquire(self, key: str, limit: Limit) -> float:
        return self.acquire_now(key, limit)

    def acquire_now(self, key: str, limit: Limit) -> float:
        """0.0 when allowed, else the seconds to wait."""
        now = self.clock()
        with self._lock:
            tokens, updated = self._buckets.get(key, (limit.burst, now))
            allowed, tokens, wait = take(tokens, updated, now, limit)
            self._buckets[key] = (tokens, now)
            if len(self._buckets) > MAX_LOCAL_BUCKETS:
                self._sweep(now, limit)
        return 0.0 if allowed else wait

    def _sweep(self, now: float, limit: Limit) -> None:
        full_after = limit.burst / limit.rate
        for key in [k for k, (_, updated) in self._buckets.items() if now - updated >= full_after]:
            del self._buckets[key]

    async def aclose(self) -> None:
        pass


# KEYS[1] bucket; ARGV: rate, burst, cost. Returns {allowed (0/1), wait seconds as a string}.
# The clock is Redis' (TIME), so replicas with skewed clocks still share one bucket.
TOKEN_BUCKET_LUA = """
if redis.replicate_commands then pcall(redis.replicate_commands) end
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil or ts == nil then
  tokens = burst
  ts = now
end
local elapsed = now - ts
if elapsed < 0 then elapsed = 0 end
tokens = math.min(burst, tokens + elapsed * rate)
local allowed = 0
local wait = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
else
  wait = (cost - tokens) / rate
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens), 'ts', string.format('%.6f', now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return {allowed, string.format('%.6f', wait)}
"""


class RedisBuckets:
    """Buckets shared by every process that uses the same Redis and prefix."""

    def __init__(self, url: str, prefix: str, clock: Callable[[], float] = time.monotonic):
        import redis.asyncio as aioredis
        self._redis = aioredis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)
        self._script = self._redis.register_script(TOKEN_BUCKET_LUA)     # EVALSHA, loaded again on NOSCRIPT
        self.prefix = f"{prefix}:ratelimit:"
        self.clock = clock
        self._down_until = 0.0
        self._warned = False

    async def acquire(self, key: str, limit: Limit) -> float:
        if self.clock() < self._down_until:
            return 0.0
        try:
            allowed, wait = await self._script(keys=[self.prefix + key], args=[limit.rate, limit.burst, 1])
        except Exception as exc:      # fail open: a limiter outage must not refuse traffic
            self._down_until = self.clock() + REDIS_RETRY_S
            if not self._warned:
                self._warned = True
                log.warning("rate limiter: Redis failed, requests pass unlimited until it is back",
                            extra={"fields": {"error": exc.__class__.__name__}})
            return 0.0
        if self._warned:
            self._warned = False
            log.info("rate limiter: Redis is back, limits apply again")
        return 0.0 if int(allowed) else float(wait)

    async def aclose(self) -> None:
        await self._redis.aclose()


class RateLimiter:
    """The limits of the gateway's routes over one bucket store."""

    def __init__(self, limits: dict[str, Limit], buckets: LocalBuckets | RedisBuckets, settings, metrics=None):
        self.limits = {route: limit for route, limit in limits.items() if limit.on}
        self.buckets = buckets
        self.settings = settings          # caller_id: the hashed API key when keys are set, else the address
        self.metrics = metrics

    @classmethod
    def from_settings(cls, settings, metrics=None) -> "RateLimiter":
        limits = {"chat": Limit(settings.rate_limit_chat_rps, settings.rate_limit_chat_burst),
                  "feedback": Limit(settings.rate_limit_feedback_rps, settings.rate_limit_feedback_burst)}
        if settings.redis_url and any(limit.on for limit in limits.values()):
            buckets = RedisBuckets(settings.redis_url.get_secret_value(), settings.redis_prefix)
        else:
            buckets = LocalBuckets()
        return cls(limits, buckets, settings, metrics)

    async def check(self, route: str, identity: str) -> float:
        """0.0 when the request may go on, else the seconds until it may."""
        limit = self.limits.get(route)
        if limit is None:
            return 0.0
        return await self.buckets.acquire(f"{route}:{identity}", limit)

    async def enforce(self, request: Request, route: str) -> None:
        """Raise a 429 (OpenAI's rate_limit_exceeded, with Retry-After) when the caller is over the limit."""
        if route not in self.limits:
            return
        wait = await self.check(route, caller_id(request, self.settings))
        if wait <= 0:
            return
        if self.metrics is not None:
            self.metrics.rate_limited.labels(route).inc()
        limit = self.limits[route]
        raise GatewayError(429, f"rate limit reached for {route} requests ({limit.rate:g}/s, burst "
                                f"{limit.burst:g}); retry after {wait:.1f} s", "rate_limit_error",
                           code="rate_limit_exceeded", headers={"Retry-After": retry_after_header(wait)})

    async def aclose(self) -> None:
        await self.buckets.aclose()
