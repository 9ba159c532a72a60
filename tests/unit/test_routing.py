"""Routing over backend replicas (gateway/routing.py): the pure parts. The choice of replica (rendezvous
order, bounded load, ejection) is tested on ReplicaSets whose upstreams never send anything; failover over
real HTTP servers is in tests/integration/test_routing.py."""
import asyncio
import collections
import math

import httpx
import pytest

from gateway.metrics import GatewayMetrics
from gateway.routing import ReplicaSet, display_name
from gateway.settings import Settings, parse_backends
from gateway.upstream import Upstream


def replicas(*names: str, weights: dict | None = None, **options) -> ReplicaSet:
    def never(request):
        raise AssertionError("routing tests send nothing")
    upstreams = [(Upstream(httpx.MockTransport(never), f"http://{n}", httpx.Timeout(1.0), name=n),
                  (weights or {}).get(n, 1.0)) for n in names]
    return ReplicaSet(upstreams, metrics=GatewayMetrics(), **options)


KEYS = [f"acme\0session-{i}" for i in range(3000)]


def test_backend_lists_parse_with_weights_and_reject_nonsense():
    assert parse_backends(" http://a:8001/v1/ , https://b=2.5,") == [("http://a:8001/v1", 1.0), ("https://b", 2.5)]
    assert parse_backends("") == []
    for bad, message in [("a:8001", "http"), ("http://a=0", "positive"), ("http://a=-1", "positive"),
                         ("http://a=inf", "positive"), ("http://a=x", "number"), ("http://a,http://a/", "twice")]:
        with pytest.raises(ValueError, match=message):
            parse_backends(bad)
    with pytest.raises(ValueError, match="backend"):
        Settings(backends="ftp://a")
    assert Settings(backends="http://a,http://b").embedded is False
    assert display_name("http://user:secret@h:1") == "http://h:1"


def test_a_session_always_gets_the_same_replica_and_sessions_spread_evenly():
    pool = replicas("a", "b", "c")
    first = {k: pool.plan(k)[0].name for k in KEYS}
    assert all(pool.plan(k)[0].name == first[k] for k in KEYS[:500])
    counts = collections.Counter(first.values())
    assert set(counts) == {"a", "b", "c"}
    assert all(abs(n - len(KEYS) / 3) < 0.1 * len(KEYS) / 3 for n in counts.values()), counts


def test_adding_a_replica_moves_only_the_sessions_it_takes():
    before = replicas("a", "b", "c")
    after = replicas("a", "b", "c", "d")
    moved = [k for k in KEYS if before.plan(k)[0].name != after.plan(k)[0].name]
    assert all(after.plan(k)[0].name == "d" for k in moved)          # nobody moves between a, b and c
    assert abs(len(moved) / len(KEYS) - 0.25) < 0.04, len(moved)


def test_weights_give_proportional_shares():
    pool = replicas("a", "b", weights={"a": 3.0})
    counts = collections.Counter(pool.plan(k)[0].name for k in KEYS)
    assert abs(counts["a"] / len(KEYS) - 0.75) < 0.03, counts


def test_bounded_load_passes_a_hot_session_to_the_next_replica_in_its_order():
    pool = replicas("a", "b", "c", load_factor=0.25)
    key = KEYS[0]
    order = [r.name for r in pool.plan(key)]
    taken = []
    for _ in range(9):                           # nine requests of one session, none finished yet
        replica = pool.plan(key)[0]
        replica.in_flight += 1
        taken.append(replica.name)
    assert taken[0] == order[0]
    counts = collections.Counter(taken)
    # at each arrival the chosen replica stays within ceil(1.25 * its share of all in flight)
    assert max(counts.values()) <= math.ceil(1.25 * 9 / 3), counts
    assert len(counts) == 3
    # once they finish, the session is back on its own replica
    for r in pool.replicas:
        r.in_flight = 0
    assert pool.plan(key)[0].name == order[0]


def test_the_previous_turns_replica_is_preferred_while_within_the_bound():
    pool = replicas("a", "b", "c")
    key = KEYS[1]
    natural, other = pool.plan(key)[0], pool.plan(key)[1]
    pool._remember(key, other)                    # e.g. the last turn was moved by the load bound
    assert pool.plan(key)[0] is other
    other.in_flight = 5                          # that replica is now far over its share
    assert pool.plan(key)[0] is natural


def test_an_ejected_replica_gets_no_traffic_until_a_good_check_and_is_tried_last():
    pool = replicas("a", "b", "c", eject_s=30.0)
    owned = [k for k in KEYS[:300] if pool.plan(k)[0].name == "a"]
    victim = pool.by_name["a"]
    pool._finished(victim, "upstream_unreachable", refused=True)   # a refused connection: out at once
    assert victim.ejected and victim.backoff_s == 30.0
    for key in owned:
        plan = [r.name for r in pool.plan(key)]
        assert plan[0] != "a" and plan[-1] == "a"
    # the other sessions did not move
    assert all(pool.plan(k)[0].name == n for k, n in ((k, pool.plan(k)[0].name) for k in KEYS[:300]) if n != "a")
    pool._admit(victim)
    assert all(pool.plan(k)[0].name == "a" for k in owned)
    snap = {r["name"]: r for r in pool.snapshot()}
    assert snap["a"]["ejections"] == 1 and snap["a"]["state"] == "healthy"


def test_failures_in_a_row_eject_and_a_success_resets_the_count():
    pool = replicas("a", "b", eject_failures=3)
    a = pool.by_name["a"]
    for error in ("status_500", "upstream_timeout"):
        a.in_flight += 1
        pool._finished(a, error)
    a.in_flight += 1
    pool._finished(a, None)
    assert a.failures == 0 and not a.ejected
    for _ in range(3):
        a.in_flight += 1
        pool._finished(a, "status_502")
    assert a.ejected and a.in_flight == 0


def test_a_single_backend_is_never_ejected_and_all_ejected_still_routes():
    single = replicas("only")
    single._finished(single.replicas[0], "upstream_unreachable", refused=True)
    assert not single.replicas[0].ejected and single.plan("k")[0].name == "only"
    pool = replicas("a", "b")
    for r in pool.replicas:
        pool._eject(r, "test")
    assert {r.name for r in pool.plan(KEYS[2])} == {"a", "b"}      # a guess beats refusing everyone


def test_failed_checks_back_off_longer_each_time():
    pool = replicas("a", "b", eject_s=1.0)
    a = pool.by_name["a"]
    pool._eject(a, "test")
    for expected in (2.0, 4.0, 8.0):
        pool._eject(a, "health_check")           # an ejected replica failing its check again
        assert a.backoff_s == expected and a.ejections == 1
    pool._admit(a)
    assert a.backoff_s == 0.0


def test_round_robin_ignores_the_session():
    pool = replicas("a", "b", "c", policy="round_robin")
    assert [pool.plan(KEYS[0])[0].name for _ in range(6)] == ["a", "b", "c", "a", "b", "c"]


def test_usage_is_counted_per_replica():
    pool = replicas("a", "b")
    pool.observe_usage("a", {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 80}})
    pool.observe_usage("a", {"prompt_tokens": 100})
    pool.observe_usage("nope", {"prompt_tokens": 5})
    snap = {r["name"]: r for r in pool.snapshot()}
    assert snap["a"]["cached_share"] == 0.4 and snap["b"]["cached_share"] is None


def test_send_fails_over_once_before_any_byte_and_names_the_replica():
    seen = []

    def transport_for(name, status):
        def handle(request):
            seen.append(name)
            if status is None:
                raise httpx.ConnectError("refused")
            return httpx.Response(status, json={"ok": name})
        return httpx.MockTransport(handle)

    async def run(statuses):
        seen.clear()
        ups = [(Upstream(transport_for(n, s), f"http://{n}", httpx.Timeout(1.0), name=n), 1.0)
               for n, s in statuses.items()]
        pool = ReplicaSet(ups, metrics=GatewayMetrics())
        key = next(k for k in KEYS if pool.plan(k)[0].name == "a")
        response = await pool.send("POST", "/v1/chat/completions", {}, b"{}", affinity=key)
        body = await response.aread()
        await response.aclose()
        return pool, response, body

    pool, response, _ = asyncio.run(run({"a": None, "b": 200, "c": 200}))
    assert response.status_code == 200 and response.extensions["semcache_replica"] == seen[-1] != "a"
    assert seen.count("a") == 2 and len(seen) == 3          # a's own connection retry, then one other replica
    assert pool.by_name["a"].ejected and all(r.in_flight == 0 for r in pool.replicas)
    pool, response, body = asyncio.run(run({"a": 503, "b": 503, "c": 200}))
    assert response.status_code == 503 and len(seen) == 2   # once more only: the second answer stands
    assert all(r.in_flight == 0 for r in pool.replicas)
