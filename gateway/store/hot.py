"""Hot copies of ready entries and the event fan-out between gateway replicas.

`RedisHotStore` keeps each ready entry as a JSON value with its TTL and
publishes events (ready, invalidate, scope) on one channel that every
replica subscribes to; `LocalHotStore` does the same inside one process.
"""
from __future__ import annotations

import base64
import json
import logging
import threading
import time
from typing import Callable

import numpy as np

log = logging.getLogger("semcache.store")
DEFAULT_PREFIX = "semcache"
Listener = Callable[[dict], None]


class LocalHotStore:
    def __init__(self):
        self._items: dict[str, tuple[float, dict]] = {}
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()

    def put(self, cache_id: str, entry: dict, ttl_s: float) -> None:
        with self._lock:
            self._items[cache_id] = (time.time() + ttl_s, entry)

    def get(self, cache_id: str) -> dict | None:
        with self._lock:
            item = self._items.get(cache_id)
            if item is None or item[0] < time.time():
                self._items.pop(cache_id, None)
                return None
            return item[1]

    def delete(self, cache_ids: list[str]) -> None:
        with self._lock:
            for cache_id in cache_ids:
                self._items.pop(cache_id, None)

    def publish(self, event: dict) -> None:
        self.announce([event], [])

    def announce(self, events: list[dict], puts: list[tuple[str, dict, float]]) -> None:
        """Publish `events` and store `puts` (cache_id, entry, ttl_s) together."""
        _apply(self._listeners, events)
        for cache_id, entry, ttl_s in puts:
            self.put(cache_id, entry, ttl_s)

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def ready(self) -> bool:
        return True

    def close(self) -> None:
        pass


class RedisHotStore:
    remote = True          # a separate service that can fail (LocalHotStore cannot)

    def __init__(self, url: str, prefix: str = DEFAULT_PREFIX):
        """`prefix` namespaces keys and the event channel, so deployments can share one Redis."""
        import redis
        self._redis = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        self._prefix = f"{prefix}:entry:"
        self._channel = f"{prefix}:events"
        self._listeners: list[Listener] = []
        self._reconnect_listeners: list[Callable[[], None]] = []
        self._pubsub = None
        self._thread: threading.Thread | None = None
        self._origin = f"{id(self)}-{time.time_ns()}"

    def put(self, cache_id: str, entry: dict, ttl_s: float) -> None:
        self._redis.set(self._prefix + cache_id, json.dumps(entry), ex=max(int(ttl_s), 1))

    def get(self, cache_id: str) -> dict | None:
        raw = self._redis.get(self._prefix + cache_id)
        return json.loads(raw) if raw else None

    def delete(self, cache_ids: list[str]) -> None:
        if cache_ids:
            self._redis.delete(*(self._prefix + c for c in cache_ids))

    def publish(self, event: dict) -> None:
        self.announce([event], [])

    def announce(self, events: list[dict], puts: list[tuple[str, dict, float]]) -> None:
        """Publish `events` as one message and store `puts` (cache_id, entry, ttl_s), in one round trip:
        a promotion pass makes many entries ready at once, and one exchange per entry cost more CPU than
        the rest of the pass. This replica applies its own events first, whether Redis answers or not."""
        _apply(self._listeners, events)
        pipe = self._redis.pipeline(transaction=False)
        if events:
            pipe.publish(self._channel, self._message(events))
        for cache_id, entry, ttl_s in puts:
            pipe.set(self._prefix + cache_id, json.dumps(entry), ex=max(int(ttl_s), 1))
        if events or puts:
            pipe.execute()

    def _message(self, events: list[dict]) -> str:
        return json.dumps({"origin": self._origin, "events": [_to_wire(e) for e in events]})

    def on_reconnect(self, callback: Callable[[], None]) -> None:
        """Called (in the listener thread) when the event channel works again after a failure: events
        published meanwhile are lost, so the caller catches up from the database."""
        self._reconnect_listeners.append(callback)

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)
        if self._thread is None:
            self._pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
            self._pubsub.subscribe(self._channel)
            self._thread = threading.Thread(target=self._listen, name="semcache-redis-events", daemon=True)
            self._thread.start()

    def _listen(self) -> None:
        broken = False
        while True:
            pubsub = self._pubsub
            if pubsub is None:
                return
            try:
                message = pubsub.get_message(timeout=0.5)
            except Exception as exc:          # redis restarts: keep listening (it resubscribes on reconnect)
                if self._pubsub is None:
                    return                    # closed under us: shutting down
                if not broken:
                    log.warning("redis event channel failed; retrying every 0.5 s: %s", exc.__class__.__name__)
                broken = True
                time.sleep(0.5)
                continue
            if broken:
                broken = False
                log.warning("redis event channel reconnected")
                for callback in list(self._reconnect_listeners):
                    try:
                        callback()
                    except Exception:
                        log.exception("redis reconnect listener failed")
            if not message:
                continue
            try:
                events = _from_wire(json.loads(message["data"]), self._origin)
            except (ValueError, TypeError, KeyError):
                log.warning("cache event not understood; the next catch-up reads the database instead")
                continue
            _apply(self._listeners, events)

    def ready(self) -> bool:
        try:
            return bool(self._redis.ping())
        except Exception:
            return False

    def close(self) -> None:
        pubsub, self._pubsub = self._pubsub, None
        if self._thread is not None:
            self._thread.join(timeout=2)       # the listener notices within its 0.5 s poll
        if pubsub is not None:
            pubsub.close()
        self._redis.close()


def _apply(listeners: list[Listener], events: list[dict]) -> None:
    """Each event to each listener; one that fails is logged and the others still get theirs."""
    for event in events:
        for listener in list(listeners):
            try:
                listener(event)
            except Exception:
                log.exception("cache event listener failed")


def _to_wire(event: dict) -> dict:
    """A vector travels as base64 float32 bytes: a quarter of its JSON text, encoded many times faster."""
    vector = event.get("vector")
    if vector is None:
        return event
    wire = {k: v for k, v in event.items() if k != "vector"}
    wire["vector_b64"] = base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode()
    return wire


def _from_wire(message: dict, own_origin: str) -> list[dict]:
    """The events of one message, none of them this replica's own (it applied those when it published).
    A message from a replica of the previous release is one bare event."""
    if message.get("origin") == own_origin:
        return []
    events = message["events"] if "events" in message else [{k: v for k, v in message.items() if k != "origin"}]
    for event in events:
        if "vector_b64" in event:
            event["vector"] = np.frombuffer(base64.b64decode(event.pop("vector_b64")), dtype=np.float32)
    return events
