"""Fail-open for the cache: a circuit breaker over its dependencies (PostgreSQL/SQLite, Redis, the encoder).

closed: every request goes through the cache; `failures` consecutive dependency failures open it.
open: requests skip the cache entirely (forwarded as BYPASS `cache:degraded`, nothing read or written),
so an outage costs no timeouts per request. After `cooldown_s` it is half-open.
half-open: one request (the probe) goes through the cache; success closes the breaker, failure opens it
again for another cool-down. A probe that never reports (cancelled) frees the slot after a cool-down.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Callable

log = logging.getLogger("semcache.cache")

CLOSED, OPEN, HALF_OPEN = "closed", "open", "half_open"
STATE_VALUES = {CLOSED: 0, HALF_OPEN: 1, OPEN: 2}


def dependency_of(exc: BaseException) -> str | None:
    """Which dependency an exception came from: "redis", "store" (the SQL database) or "encoder";
    None for anything else (a bug or bad input: fails open for that request but does not trip the breaker)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        module = type(current).__module__ or ""
        if module.startswith("redis"):
            return "redis"
        if module.startswith(("sqlalchemy", "psycopg", "sqlite3")):
            return "store"
        if module.startswith("onnxruntime"):
            return "encoder"
        current = current.__cause__ or current.__context__
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    if last is not None and (last.endswith("fingerprint/encoder.py") or "onnxruntime" in last or "/torch/" in last):
        return "encoder"          # the model runtime itself (a bug elsewhere in fingerprint/ is not the encoder)
    return None


class CircuitBreaker:
    def __init__(self, failures: int = 3, cooldown_s: float = 5.0, clock: Callable[[], float] = time.monotonic,
                 on_change: Callable[[str], None] | None = None):
        self.failures = max(1, int(failures))
        self.cooldown_s = max(0.0, float(cooldown_s))
        self._clock = clock
        self._on_change = on_change
        self._lock = threading.Lock()
        self.state = CLOSED
        self.consecutive = 0
        self.opened_at: float | None = None     # the last (re)opening: the cool-down counts from here
        self.down_since: float | None = None    # the first opening of this outage
        self._probe_since: float | None = None
        self.last_dependency: str | None = None
        self.last_error: str | None = None
        self.opened_count = 0

    def _set(self, state: str) -> None:
        if state != self.state:
            self.state = state
            if self._on_change is not None:
                self._on_change(state)

    def allow(self) -> tuple[bool, bool]:
        """(go through the cache?, is this the half-open probe?)"""
        with self._lock:
            if self.state == CLOSED:
                return True, False
            now = self._clock()
            if self.state == OPEN and now - (self.opened_at or 0.0) >= self.cooldown_s:
                self._set(HALF_OPEN)
                self._probe_since = now
                log.info("cache breaker half-open: probing", extra={"fields": {"dependency": self.last_dependency}})
                return True, True
            if self.state == HALF_OPEN and (self._probe_since is None or now - self._probe_since >= self.cooldown_s):
                self._probe_since = now              # the last probe never reported: let another one through
                return True, True
            return False, False

    def success(self) -> None:
        with self._lock:
            self.consecutive = 0
            if self.state != CLOSED:
                log.warning("cache breaker closed: the cache is back", extra={"fields": {
                    "dependency": self.last_dependency,
                    "down_s": round(self._clock() - (self.down_since or self._clock()), 1)}})
                self._set(CLOSED)
                self._probe_since = None
                self.down_since = None

    def failure(self, dependency: str, error: str = "") -> None:
        with self._lock:
            self.consecutive += 1
            self.last_dependency, self.last_error = dependency, error
            if self.state == HALF_OPEN or (self.state == CLOSED and self.consecutive >= self.failures):
                self.opened_at = self._clock()
                if self.down_since is None:
                    self.down_since = self.opened_at
                self._probe_since = None
                self.opened_count += 1
                log.warning("cache breaker open: requests bypass the cache", extra={"fields": {
                    "dependency": dependency, "error": error, "consecutive_failures": self.consecutive,
                    "cooldown_s": self.cooldown_s}})
                self._set(OPEN)
            elif self.state == OPEN:
                self.opened_at = self._clock()

    @property
    def degraded(self) -> bool:
        return self.state != CLOSED

    def snapshot(self) -> dict:
        with self._lock:
            out = {"state": self.state, "consecutive_failures": self.consecutive,
                   "last_dependency": self.last_dependency, "last_error": self.last_error,
                   "opened": self.opened_count}
            if self.state == OPEN and self.opened_at is not None:
                out["retry_in_s"] = round(max(0.0, self.cooldown_s - (self._clock() - self.opened_at)), 2)
            if self.down_since is not None:
                out["degraded_for_s"] = round(self._clock() - self.down_since, 1)
            return out
