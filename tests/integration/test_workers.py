"""`semcache serve --workers 2`: two processes answer, and an answer written through one worker is a HIT
through the other (PostgreSQL + Redis shared; each worker has its own index, fed by Redis events)."""
import os
import subprocess
import sys
import time
import uuid

import httpx
import openai
import pytest

from tests.conftest import ADMIN_TOKEN, GATEWAY_KEYS, ROOT, RunningServer, fresh_dirs

ACME = "sk-acme-1"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
SAMPLING = {"temperature": 1.0, "seed": 1, "max_tokens": 48, "stop": ["e"]}   # the demo model ends on "stop"


@pytest.fixture()
def two_workers(demo_backend, redis_url):
    from tests.conftest import throwaway_database
    with throwaway_database() as database:
        env = {"SEMCACHE_BACKEND_URL": demo_backend.url + "/v1", "SEMCACHE_DATABASE_URL": database,
               "SEMCACHE_REDIS_URL": redis_url, "SEMCACHE_REDIS_PREFIX": "semcache-test-" + uuid.uuid4().hex[:8],
               **fresh_dirs(), "SEMCACHE_API_KEYS": GATEWAY_KEYS, "SEMCACHE_ADMIN_TOKEN": ADMIN_TOKEN,
               "SEMCACHE_READY_DELAY_S": "0.5", "SEMCACHE_DUPLICATE_WINDOW_S": "0.2"}
        migrate = subprocess.run([sys.executable, "-m", "gateway.cli", "migrate"], cwd=ROOT,
                                 env={**os.environ, **env}, capture_output=True, text=True, timeout=120)
        assert migrate.returncode == 0, migrate.stderr
        server = RunningServer(["serve", "--workers", "2"], env=env, ready_path="/readyz", timeout=240)
        yield server
        server.stop()


def pinned_clients(url: str, count: int = 2, attempts: int = 40) -> dict[str, httpx.Client]:
    """Keep-alive clients, one per worker: a connection stays with the worker that accepted it."""
    clients: dict[str, httpx.Client] = {}
    for _ in range(attempts):
        client = httpx.Client(base_url=url, timeout=60)
        pid = client.get("/healthz").headers["x-semcache-worker"]
        if pid in clients:
            client.close()
        else:
            clients[pid] = client
        if len(clients) == count:
            return clients
    raise AssertionError(f"only workers {sorted(clients)} answered {attempts} new connections")


def chat(http: httpx.Client, text: str, session: str):
    client = openai.OpenAI(base_url=str(http.base_url) + "/v1", api_key=ACME, max_retries=0, http_client=http)
    raw = client.chat.completions.with_raw_response.create(
        model="demo", messages=[{"role": "user", "content": text}], extra_headers={"X-Session-Id": session},
        **SAMPLING)
    return raw.headers, raw.parse()


def burst_of_connections(url: str, count: int = 32) -> dict[str, int]:
    """Workers that accepted `count` connections opened at once (what a client pool does under load)."""
    import asyncio

    async def run():
        clients = [httpx.AsyncClient(base_url=url, timeout=30) for _ in range(count)]
        try:
            replies = await asyncio.gather(*(c.get("/healthz") for c in clients))
        finally:
            await asyncio.gather(*(c.aclose() for c in clients))
        return [r.headers["x-semcache-worker"] for r in replies]
    pids: dict[str, int] = {}
    for pid in asyncio.run(run()):
        pids[pid] = pids.get(pid, 0) + 1
    return pids


def wait_ready(http: httpx.Client, cache_id: str) -> None:
    deadline = time.monotonic() + 15
    while http.get(f"/admin/entries/{cache_id}", headers=ADMIN).json()["state"] != "ready":
        assert time.monotonic() < deadline, f"{cache_id} never became ready"
        time.sleep(0.1)
    time.sleep(0.3)                   # the other worker learns it from the Redis event (milliseconds)


def test_two_workers_answer_and_share_the_cache(two_workers):
    workers = pinned_clients(two_workers.url)
    (pid_a, a), (pid_b, b) = workers.items()
    assert pid_a != pid_b
    # a burst of new connections is spread over both workers (a socket each, SO_REUSEPORT), not taken by one
    spread = burst_of_connections(two_workers.url)
    assert set(spread) == {pid_a, pid_b} and min(spread.values()) >= 4, spread
    for writer, pid_w, reader, pid_r, question, paraphrase in (
            (a, pid_a, b, pid_b, "What is the capital of France and what is it famous for?",
             "What is the capital of France and what is it famous for"),
            (b, pid_b, a, pid_a, "Summarise the rules of chess in two sentences.",
             "Summarise the rules of chess in two sentences")):
        session = "sess-" + uuid.uuid4().hex[:10]
        headers, first = chat(writer, question, session)
        assert headers["x-cache"] == "MISS" and headers["x-semcache-worker"] == pid_w
        cache_id = headers["x-cache-id"]
        wait_ready(writer, cache_id)
        headers, hit = chat(reader, paraphrase, session)
        assert headers["x-semcache-worker"] == pid_r
        assert headers["x-cache"] == "HIT" and headers["x-cache-id"] == cache_id, (headers.get("x-cache-reason"), paraphrase, headers.get("x-cache-id"), cache_id)
        assert hit.choices[0].message.content == first.choices[0].message.content
    for client in workers.values():
        client.close()


def children(pid: int) -> dict[int, str]:
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
                cmdline = open(f"/proc/{entry}/cmdline", "rb").read().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found[int(entry)] = cmdline
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_embedded_engine_runs_once_beside_the_workers_and_stops_with_them():
    env = {**fresh_dirs(), "SEMCACHE_BACKEND_URL": "embedded", "SEMCACHE_ENGINE_KV_CACHE_MEMORY": "64MiB",
           "SEMCACHE_ENGINE_MAX_MODEL_LEN": "1024"}
    server = RunningServer(["serve", "--workers", "2", "--model", "demo"], env=env, ready_path="/readyz",
                           timeout=240)
    try:
        ready = httpx.get(server.url + "/readyz").json()
        assert ready["backend_name"].startswith("http://127.0.0.1:")          # the workers forward to it
        engines = {pid: cmd for pid, cmd in children(server.proc.pid).items() if " backend " in cmd}
        assert len(engines) == 1 and "--model demo" in next(iter(engines.values()))
        r = httpx.post(server.url + "/v1/chat/completions", timeout=60,
                       json={"model": "demo", "messages": [{"role": "user", "content": "Hello there"}],
                             "max_tokens": 4})
        assert r.status_code == 200 and r.headers["x-cache"] == "MISS"
    finally:
        server.stop()
    (engine,) = engines
    deadline = time.monotonic() + 20
    while os.path.exists(f"/proc/{engine}") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not os.path.exists(f"/proc/{engine}"), "the engine outlived `serve`"
