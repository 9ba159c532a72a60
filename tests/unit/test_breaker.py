"""The cache's circuit breaker and the classification of dependency failures (no services needed)."""
import redis
import sqlalchemy.exc

from gateway.cache.breaker import CLOSED, HALF_OPEN, OPEN, CircuitBreaker, dependency_of


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_opens_after_n_consecutive_failures_then_one_probe_closes_it():
    clock = Clock()
    breaker = CircuitBreaker(failures=3, cooldown_s=5.0, clock=clock)
    assert breaker.allow() == (True, False)
    breaker.failure("redis", "ConnectionError")
    breaker.success()                                    # a success resets the count
    for _ in range(2):
        breaker.failure("redis", "ConnectionError")
    assert breaker.state == CLOSED
    breaker.failure("redis", "ConnectionError")
    assert breaker.state == OPEN and breaker.allow() == (False, False)
    clock.now += 4.9
    assert breaker.allow() == (False, False)             # still cooling down
    clock.now += 0.2
    assert breaker.allow() == (True, True)               # the probe
    assert breaker.state == HALF_OPEN
    assert breaker.allow() == (False, False)             # only one probe at a time
    breaker.success()
    assert breaker.state == CLOSED and breaker.allow() == (True, False)


def test_a_failed_probe_opens_it_again_and_a_lost_probe_frees_the_slot():
    clock = Clock()
    changes = []
    breaker = CircuitBreaker(failures=1, cooldown_s=2.0, clock=clock, on_change=changes.append)
    breaker.failure("store", "OperationalError")
    clock.now += 2.0
    assert breaker.allow() == (True, True)
    breaker.failure("store", "OperationalError")
    assert breaker.state == OPEN and breaker.allow() == (False, False)
    clock.now += 2.0
    assert breaker.allow() == (True, True)               # this probe never reports back (cancelled)
    clock.now += 2.0
    assert breaker.allow() == (True, True)               # another one may try
    breaker.success()
    assert changes == [OPEN, HALF_OPEN, OPEN, HALF_OPEN, CLOSED]
    snap = breaker.snapshot()
    assert snap["state"] == CLOSED and snap["last_dependency"] == "store" and snap["opened"] == 2


def test_dependency_of_names_the_failing_service():
    assert dependency_of(redis.exceptions.ConnectionError("refused")) == "redis"
    assert dependency_of(sqlalchemy.exc.OperationalError("SELECT 1", {}, Exception("cut"))) == "store"
    try:
        try:
            raise ConnectionResetError("reset")
        except ConnectionResetError as exc:
            raise redis.exceptions.ConnectionError("lost") from exc
    except Exception as exc:
        assert dependency_of(exc) == "redis"
    assert dependency_of(ValueError("a bug")) is None
