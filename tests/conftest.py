import os

# the Triton interpreter must be chosen before anything imports triton
os.environ.setdefault("TRITON_INTERPRET", "1")

import contextlib
import functools
import tempfile
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests import services

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def app_server(app, timeout: float = 180):
    """A gateway app served by uvicorn on a loopback port in this process (so a test can reach into it):
    yields its URL once /readyz answers 200, and stops it afterwards."""
    import threading

    import uvicorn
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline and thread.is_alive(), "the in-process gateway did not start"
        time.sleep(0.3)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=30)


class RunningServer:
    def __init__(self, args: list[str], env: dict | None = None, ready_path: str = "/healthz", timeout: float = 120):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(f"/tmp/semcache-test-{self.port}.log", "w+")
        self.proc = subprocess.Popen([sys.executable, "-m", "gateway.cli", *args, "--host", "127.0.0.1",
                                      "--port", str(self.port), "--log-level", "warning"],
                                     cwd=ROOT, env={**os.environ, **(env or {})}, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.log.seek(0)
                raise RuntimeError(f"server exited early:\n{self.log.read()}")
            try:
                if httpx.get(self.url + ready_path, timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("server did not become ready")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


@pytest.fixture(scope="session")
def demo_backend():
    server = RunningServer(["backend", "--model", "demo", "--num-blocks", "256", "--max-model-len", "1024"])
    yield server
    server.stop()


def metric(url: str, name: str, token: str | None = None) -> float:
    """A gateway metric; /metrics needs a credential where keys or an admin token are configured."""
    headers = {"Authorization": f"Bearer {token or ADMIN_TOKEN}"}
    for line in httpx.get(url + "/metrics", headers=headers).text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    raise KeyError(name)


GATEWAY_KEYS = "sk-acme-1:acme,sk-globex-1:globex"
ADMIN_TOKEN = "admin-secret-token"


@pytest.fixture(scope="session")
def embedded_gateway():
    """`semcache serve` on its embedded default, with the demo model."""
    server = RunningServer(["serve"], env={"SEMCACHE_BACKEND_MODEL": "demo", "SEMCACHE_BACKEND_URL": "embedded",
                                           **fresh_dirs(),
                                           "SEMCACHE_ENGINE_KV_CACHE_MEMORY": "64MiB",
                                           "SEMCACHE_ENGINE_MAX_MODEL_LEN": "1024"}, ready_path="/readyz")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def proxy_gateway(demo_backend):
    """The gateway in front of `semcache backend` in its own process, with API keys and small limits."""
    server = RunningServer(["serve"], env={"SEMCACHE_BACKEND_URL": demo_backend.url + "/v1",
                                           **fresh_dirs(),
                                           "SEMCACHE_API_KEYS": GATEWAY_KEYS, "SEMCACHE_ADMIN_TOKEN": ADMIN_TOKEN,
                                           "SEMCACHE_MAX_MESSAGES": "8", "SEMCACHE_MAX_BODY_BYTES": "65536"},
                           ready_path="/readyz")
    yield server
    server.stop()


def pg_admin_url() -> str:
    """The tests' PostgreSQL server (tests/services.py): SEMCACHE_TEST_PG_URL (default 127.0.0.1:5432) when it
    answers, else a throwaway server the suite starts once; the test is skipped, loudly, when neither can be had."""
    try:
        return services.pg_admin_url()
    except services.Unavailable as exc:
        pytest.skip(str(exc))


def redis_server_url() -> str:
    """The tests' Redis: SEMCACHE_TEST_REDIS_URL (default 127.0.0.1:6379/0) when it answers, else a throwaway
    redis-server the suite starts once; skipped, loudly, when neither can be had."""
    try:
        return services.redis_url()
    except services.Unavailable as exc:
        pytest.skip(str(exc))


@contextlib.contextmanager
def throwaway_database():
    """A new PostgreSQL database on the tests' server (see pg_admin_url), dropped afterwards."""
    pg_admin_url()
    with services.throwaway_database() as url:
        yield url


@pytest.fixture()
def pg_url():
    """A throwaway PostgreSQL database on the tests' server for one test."""
    with throwaway_database() as url:
        yield url


def fresh_dirs() -> dict:
    """Environment for a test server: its own empty data dir, the shared prepared models."""
    return {"SEMCACHE_DATA_DIR": tempfile.mkdtemp(prefix="semcache-gw-"), "SEMCACHE_MODELS_DIR": models_dir()}


@functools.cache
def models_dir() -> str:
    """Prepared models shared by every test server (a server's own data dir is a fresh temp dir);
    e5-small and the pair model are prepared here once, before any server needs them."""
    from fingerprint.e5_prepare import prepare_e5_int8
    from fingerprint.encoder import resolve_encoder_dir, runs_int8
    from validator.pair_network import assemble
    folder = Path(os.environ.get("SEMCACHE_DATA_DIR") or Path.home() / ".semcache") / "models"
    e5 = resolve_encoder_dir("e5-small", models_dir=folder)[0]
    assemble(e5, folder / "pair-judge")
    if runs_int8("auto", "e5-small"):           # what `auto` opens on a CPU without native bf16
        prepare_e5_int8(e5)
    return str(folder)


@pytest.fixture()
def pipeline(tmp_path: Path):
    """The real decision pipeline (prepared models) over a fresh SQLite store, answers ready at once."""
    from gateway.cache import SemanticCache
    from gateway.metrics import GatewayMetrics
    from gateway.store import StoreConfig, open_store
    store = open_store(None, None, tmp_path, StoreConfig(ready_delay_s=0))
    cache = SemanticCache.build(store, GatewayMetrics(), models_dir=Path(models_dir()))
    yield cache.pipeline
    store.close()


@pytest.fixture(scope="session")
def cache_gateway(demo_backend):
    """The full deployment: gateway with PostgreSQL, Redis, API keys and an admin token, in front of
    `semcache backend` (demo model). Answers become ready 2 s after they are written; the same
    messages again within 1 s are a retry, later a regenerate."""
    import uuid

    redis = redis_server_url()
    with throwaway_database() as database:
        env = {"SEMCACHE_BACKEND_URL": demo_backend.url + "/v1", "SEMCACHE_DATABASE_URL": database,
               "SEMCACHE_REDIS_URL": redis,
               "SEMCACHE_REDIS_PREFIX": "semcache-test-" + uuid.uuid4().hex[:8],
               **fresh_dirs(),
               "SEMCACHE_API_KEYS": GATEWAY_KEYS, "SEMCACHE_ADMIN_TOKEN": ADMIN_TOKEN,
               "SEMCACHE_READY_DELAY_S": "2.0", "SEMCACHE_DUPLICATE_WINDOW_S": "1.0"}
        migrate = subprocess.run([sys.executable, "-m", "gateway.cli", "migrate"], cwd=ROOT, env={**os.environ, **env},
                                 capture_output=True, text=True, timeout=120)
        assert migrate.returncode == 0, migrate.stderr
        server = RunningServer(["serve"], env=env, ready_path="/readyz", timeout=240)
        server.env = env
        yield server
        server.stop()


@pytest.fixture()
def redis_url():
    """The tests' Redis (see redis_server_url); keys and channels used by tests are namespaced by content."""
    return redis_server_url()


def pytest_sessionfinish(session, exitstatus):
    services.stop_all()                 # the throwaway PostgreSQL and Redis, if the suite started any


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Which PostgreSQL and Redis the suite used, or, loudly, why it had none (those tests were skipped)."""
    notes = services.notes()
    if notes:
        loud = any(note.startswith("NO ") for note in notes)
        terminalreporter.write_sep("!" if loud else "-", "PostgreSQL and Redis of this run", red=loud, bold=loud)
        for note in notes:
            terminalreporter.write_line(note, red=note.startswith("NO "), bold=note.startswith("NO "))
