"""Token-bucket math with an injected clock, the 429's shape, and the Redis variant failing open."""
import asyncio

import pytest

from gateway.errors import GatewayError
from gateway.ratelimit import Limit, LocalBuckets, RateLimiter, RedisBuckets, retry_after_header, take
from gateway.settings import Settings


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_take_refills_at_the_rate_and_caps_at_the_burst():
    limit = Limit(rate=2.0, burst=5.0)
    allowed, tokens, wait = take(5.0, 0.0, 0.0, limit)
    assert allowed and tokens == 4.0 and wait == 0.0
    allowed, tokens, wait = take(0.0, 0.0, 0.25, limit)         # 0.5 token back: not enough
    assert not allowed and tokens == 0.5 and wait == pytest.approx(0.25)
    allowed, tokens, _ = take(0.0, 0.0, 100.0, limit)           # long idle: full, never more
    assert allowed and tokens == 4.0


def test_local_bucket_burst_then_steady_rate():
    clock = Clock()
    buckets = LocalBuckets(clock)
    limit = Limit(rate=1.0, burst=3.0)
    assert [buckets.acquire_now("a", limit) for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = buckets.acquire_now("a", limit)
    assert wait == pytest.approx(1.0)
    assert buckets.acquire_now("b", limit) == 0.0                # another caller has its own bucket
    clock.now += 0.5
    assert buckets.acquire_now("a", limit) == pytest.approx(0.5)
    clock.now += 0.5
    assert buckets.acquire_now("a", limit) == 0.0                # one token back after 1 s
    assert buckets.acquire_now("a", limit) > 0
    clock.now += 10
    assert [buckets.acquire_now("a", limit) for _ in range(4)][:3] == [0.0, 0.0, 0.0]   # full again, capped at 3


def test_refused_requests_do_not_consume_tokens():
    clock = Clock()
    buckets = LocalBuckets(clock)
    limit = Limit(rate=1.0, burst=1.0)
    assert buckets.acquire_now("a", limit) == 0.0
    for _ in range(50):                                          # hammering while limited costs nothing extra
        buckets.acquire_now("a", limit)
    clock.now += 1.0
    assert buckets.acquire_now("a", limit) == 0.0


def test_the_local_table_drops_idle_buckets(monkeypatch):
    import gateway.ratelimit as rl
    monkeypatch.setattr(rl, "MAX_LOCAL_BUCKETS", 10)
    clock = Clock()
    buckets = LocalBuckets(clock)
    limit = Limit(rate=1.0, burst=2.0)
    for i in range(10):
        buckets.acquire_now(f"old{i}", limit)
    clock.now += 5                                               # every old bucket is full again: forgettable
    buckets.acquire_now("new", limit)
    assert set(buckets._buckets) == {"new"}


def test_retry_after_is_whole_seconds_at_least_one():
    assert retry_after_header(0.01) == "1"
    assert retry_after_header(1.0) == "1"
    assert retry_after_header(1.2) == "2"
    assert retry_after_header(9.99) == "10"


class FakeRequest:
    def __init__(self, key: str | None = None, host: str = "10.0.0.1"):
        self.headers = {"authorization": f"Bearer {key}"} if key else {}
        self.client = type("Client", (), {"host": host})()


def test_enforce_raises_an_openai_style_429_per_api_key():
    settings = Settings(api_keys={"k1": "t1", "k2": "t2"}, rate_limit_chat_rps=1.0, rate_limit_chat_burst=2)
    limiter = RateLimiter.from_settings(settings)
    assert isinstance(limiter.buckets, LocalBuckets)
    limiter.buckets.clock = Clock()

    async def run():
        await limiter.enforce(FakeRequest("k1"), "chat")
        await limiter.enforce(FakeRequest("k1"), "chat")
        with pytest.raises(GatewayError) as refused:
            await limiter.enforce(FakeRequest("k1"), "chat")
        await limiter.enforce(FakeRequest("k2"), "chat")          # a different key is not affected
        return refused.value
    error = asyncio.run(run())
    assert error.status == 429 and error.headers == {"Retry-After": "1"}
    body = error.body()["error"]
    assert body["code"] == "rate_limit_exceeded" and body["type"] == "rate_limit_error" and body["param"] is None
    assert "k1" not in body["message"]                           # the raw key never appears
    key = next(iter(limiter.buckets._buckets))
    assert "k1" not in key and key.startswith("chat:key:")


def test_limits_off_and_feedback_on_by_default():
    limiter = RateLimiter.from_settings(Settings())
    assert set(limiter.limits) == {"feedback"}
    assert limiter.limits["feedback"] == Limit(1.0, 10.0)

    async def run():
        for _ in range(100):
            await limiter.enforce(FakeRequest(), "chat")           # chat is off: never refused
    asyncio.run(run())


def test_without_keys_the_caller_is_the_client_address():
    limiter = RateLimiter.from_settings(Settings(rate_limit_chat_rps=1.0, rate_limit_chat_burst=1))
    limiter.buckets.clock = Clock()

    async def run():
        await limiter.enforce(FakeRequest(host="10.0.0.1"), "chat")
        await limiter.enforce(FakeRequest(host="10.0.0.2"), "chat")
        with pytest.raises(GatewayError):
            await limiter.enforce(FakeRequest(host="10.0.0.1"), "chat")
    asyncio.run(run())


def test_redis_buckets_fail_open_and_log_once(caplog):
    buckets = RedisBuckets("redis://127.0.0.1:1/0", "semcache-test-down")      # nothing listens on port 1
    limit = Limit(rate=1.0, burst=1.0)

    async def run():
        waits = [await buckets.acquire("chat:x", limit) for _ in range(5)]
        buckets._down_until = 0.0                                # retry now: fails again, still one warning
        waits.append(await buckets.acquire("chat:x", limit))
        await buckets.aclose()
        return waits
    with caplog.at_level("WARNING", logger="semcache.gateway"):
        assert asyncio.run(run()) == [0.0] * 6
    assert sum("rate limiter" in r.getMessage() for r in caplog.records) == 1


def test_redis_buckets_share_one_bucket(redis_url):
    import uuid
    prefix = "semcache-test-" + uuid.uuid4().hex[:8]
    limit = Limit(rate=0.5, burst=3.0)

    async def run():
        one, two = RedisBuckets(redis_url, prefix), RedisBuckets(redis_url, prefix)
        waits = [await (one if i % 2 else two).acquire("chat:key:abc", limit) for i in range(5)]
        other = await one.acquire("chat:key:def", limit)
        keys = await one._redis.keys(prefix + ":*")
        await one._redis.delete(*keys)
        await one.aclose()
        await two.aclose()
        return waits, other, keys
    waits, other, keys = asyncio.run(run())
    assert waits[:3] == [0.0, 0.0, 0.0]
    assert 1.5 < waits[3] <= 2.0 and 1.5 < waits[4] <= 2.0       # 1 token every 2 s, shared by both clients
    assert other == 0.0
    assert {k.decode() for k in keys} == {f"{prefix}:ratelimit:chat:key:abc", f"{prefix}:ratelimit:chat:key:def"}
