"""docker-compose.yml without Docker: the file is checked against the compose specification (compose-spec),
and its services' commands are run as plain processes, in the order compose starts them.

The runner reads everything from the YAML (and the Dockerfile's ENV): the services, depends_on with its
conditions, each command (variables interpolated as compose would, with SEMCACHE_BACKEND_MODEL=demo and a
small KV pool set as a user's .env would), the environment, and the healthchecks, which are run as written
with the addresses mapped. What cannot run without Docker stands in as follows:
  - `image: postgres` is a throwaway PostgreSQL set up as the image's entrypoint does (POSTGRES_USER as the
    superuser, POSTGRES_DB created, trust auth); `image: redis` runs the YAML's redis-server command;
  - each service listens on a free loopback port: `--host 0.0.0.0` becomes 127.0.0.1, a container port
    (`--port 8001`, postgres:5432, redis:6379) becomes its service's port on 127.0.0.1, and a service name
    in a URL (`backend:8001`) becomes 127.0.0.1 with that port;
  - a named volume at /data is a fresh folder; the models the image prepares at build time are the test
    suite's prepared models (SEMCACHE_MODELS_DIR).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import openai
import pytest
import yaml

from tests import services
from tests.conftest import ROOT, free_port, models_dir

COMPOSE = ROOT / "docker-compose.yml"
# what a user would put in .env to run the stack small and fast: the demo model and a small KV pool
DOT_ENV = {"SEMCACHE_BACKEND_MODEL": "demo", "SEMCACHE_KV_CACHE_MEMORY": "64MiB"}
IMAGE_PORTS = {"postgres": 5432, "redis": 6379}          # the official images' listening ports
HEAD = sorted(p.name.split("_")[0] for p in (ROOT / "migrations" / "versions").glob("[0-9]*.py"))[-1]


# ---- the compose specification ------------------------------------------------------------------------
def test_compose_file_follows_the_compose_specification():
    from compose_spec import PyCompose
    text = COMPOSE.read_text()
    PyCompose.from_yaml(text)                               # raises ValueError on a violation
    compose = yaml.safe_load(text)
    for name, service in compose["services"].items():       # what the schema cannot see: references
        for dependency in depends_on(service):
            assert dependency in compose["services"], f"{name} depends on unknown service {dependency}"
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            assert source.startswith((".", "/")) or source in compose.get("volumes", {}), volume
    # the validator does reject violations (so the check above means something)
    broken = yaml.safe_load(text)
    broken["services"]["gateway"]["depends_on"]["postgres"]["condition"] = "service_ready"
    with pytest.raises(ValueError, match="condition"):
        PyCompose.from_yaml(yaml.safe_dump(broken))
    broken = yaml.safe_load(text)
    broken["services"]["backend-1"]["healthchek"] = broken["services"]["backend-1"].pop("healthcheck")
    with pytest.raises(ValueError, match="healthchek"):
        PyCompose.from_yaml(yaml.safe_dump(broken))


def test_gateway_publishes_the_port_it_listens_on_and_migrates_on_start():
    compose = yaml.safe_load(COMPOSE.read_text())
    gateway = compose["services"]["gateway"]
    listening = gateway["command"][gateway["command"].index("--port") + 1]
    assert any(str(p).split(":")[-1] == listening for p in gateway["ports"]), gateway["ports"]
    # PostgreSQL starts empty: the gateway must create the schema itself (migrate-on-start, no --no-migrate)
    assert "--no-migrate" not in gateway["command"]
    assert str(gateway.get("environment", {}).get("SEMCACHE_MIGRATE_ON_START", "true")).lower() == "true"


# ---- compose, as plain processes ------------------------------------------------------------------------
def depends_on(service: dict) -> dict[str, str]:
    """{service: condition}, from the list or the mapping form."""
    deps = service.get("depends_on", {})
    if isinstance(deps, list):
        return {name: "service_started" for name in deps}
    return {name: (spec or {}).get("condition", "service_started") for name, spec in deps.items()}


def default_services(compose: dict) -> dict:
    return {name: service for name, service in compose["services"].items() if not service.get("profiles")}


def start_order(services_: dict) -> list[list[str]]:
    """Waves of services: each wave's dependencies are all in earlier waves (compose starts a wave together)."""
    waves, placed = [], set()
    while len(placed) < len(services_):
        wave = sorted(n for n, s in services_.items() if n not in placed and set(depends_on(s)) <= placed)
        assert wave, f"dependency cycle among {sorted(set(services_) - placed)}"
        waves.append(wave)
        placed.update(wave)
    return waves


def interpolate(value, variables: dict[str, str]):
    """Compose's variable interpolation: ${VAR}, ${VAR:-default}, ${VAR-default}, $VAR, $$."""
    if isinstance(value, list):
        return [interpolate(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: interpolate(v, variables) for k, v in value.items()}
    if not isinstance(value, str):
        return value

    def one(match: re.Match) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1) or match.group(4)
        op, default = match.group(2), match.group(3)
        got = variables.get(name)
        if op == ":-" and not got:
            return default
        if op == "-" and got is None:
            return default
        return got or ""
    return re.sub(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)", one, value)


def dockerfile_env() -> dict[str, str]:
    env = {}
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.strip().upper().startswith("ENV "):
            for word in shlex.split(line.strip()[4:]):
                key, _, value = word.partition("=")
                env[key] = value
    return env


def map_addresses(text: str, own: str, ports: dict[tuple[str, int], int]) -> str:
    """Service addresses as seen inside the compose network -> 127.0.0.1 and the mapped ports."""
    for (service, container_port), port in ports.items():
        text = re.sub(rf"(?<![\w.-]){re.escape(service)}:{container_port}\b", f"127.0.0.1:{port}", text)
        if service == own:                                  # the service's own 127.0.0.1 / localhost
            text = re.sub(rf"\b(127\.0\.0\.1|localhost):{container_port}\b", f"127.0.0.1:{port}", text)
    return text


def semcache_command(command: list[str], own: str, ports: dict) -> list[str]:
    args = [map_addresses(a, own, ports) for a in command]
    for i, arg in enumerate(args[:-1]):
        if arg == "--host" and args[i + 1] == "0.0.0.0":
            args[i + 1] = "127.0.0.1"
        if arg == "--port":
            args[i + 1] = str(ports[(own, int(args[i + 1]))])
    if args[0] == "semcache":                               # the image's console script -> this venv's
        script = Path(sys.executable).with_name("semcache")
        args[:1] = [str(script)] if script.exists() else [sys.executable, "-m", "gateway.cli"]
    return args


class ComposeRun:
    """The services of docker-compose.yml as processes; stop() ends them all."""

    def __init__(self, compose: dict, variables: dict[str, str]):
        self.compose = interpolate(compose, variables)
        # `docker compose up` starts only the services without a profile (monitoring is opt-in)
        self.services = default_services(self.compose)
        self.ports: dict[tuple[str, int], int] = {}
        self.running: dict[str, object] = {}
        self.log: list[str] = []
        self.folders: list[str] = []
        for name, service in self.services.items():        # every service's container port gets a loopback one
            kind = self.image_kind(service)
            if kind:
                self.ports[(name, IMAGE_PORTS[kind])] = free_port()
            command = service.get("command") or []
            if "--port" in command:
                self.ports[(name, int(command[command.index("--port") + 1]))] = free_port()

    @staticmethod
    def image_kind(service: dict) -> str | None:
        image = service.get("image", "")
        return next((k for k in IMAGE_PORTS if image.split("/")[-1].startswith(k + ":") or image == k), None)

    def up(self) -> None:
        """Wave by wave (within a wave compose starts them together; here the stores first): each service
        starts once its dependencies meet their depends_on conditions."""
        for wave in start_order(self.services):
            for name in sorted(wave, key=lambda n: self.image_kind(self.services[n]) is None):
                for dependency, condition in depends_on(self.services[name]).items():
                    self.wait(dependency, condition)
                self.start(name)
                self.log.append(f"started {name}")

    def start(self, name: str) -> None:
        service = self.services[name]
        kind = self.image_kind(service)
        if kind == "postgres":            # the image's entrypoint: initdb with POSTGRES_USER, create POSTGRES_DB
            env = service.get("environment", {})
            assert env.get("POSTGRES_HOST_AUTH_METHOD") == "trust" or env.get("POSTGRES_PASSWORD")
            server = services.PostgresServer(user=env.get("POSTGRES_USER", "postgres"),
                                             port=self.ports[(name, 5432)])
            server.create_database(env.get("POSTGRES_DB") or env.get("POSTGRES_USER", "postgres"))
            self.running[name] = server
            return
        if kind == "redis":
            command = service.get("command") or ["redis-server"]
            assert command[0] == "redis-server", command
            self.running[name] = services.RedisServer(port=self.ports[(name, 6379)], extra_args=tuple(command[1:]))
            return
        assert "build" in service, f"{name}: neither a known image nor built from the Dockerfile"
        env = {k: v for k, v in os.environ.items() if not k.startswith("SEMCACHE_") or k == "SEMCACHE_KERNELS"}
        volumes = {v.split(":")[1]: v.split(":")[0] for v in service.get("volumes", [])}
        for key, value in dockerfile_env().items():
            if value in volumes or value.startswith("/"):   # a volume (or image path) -> a fresh folder
                value = tempfile.mkdtemp(prefix=f"semcache-compose-{name}-")
                self.folders.append(value)
            env[key] = value
        for key, value in (service.get("environment") or {}).items():
            env[key] = map_addresses(str(value), name, self.ports)
        env["SEMCACHE_MODELS_DIR"] = models_dir()           # what `semcache models prepare` put in the image
        command = semcache_command(service["command"], name, self.ports)
        self.running[name] = services.Process(command, env=env, cwd=tempfile.gettempdir(), name=f"compose-{name}")

    def healthcheck(self, name: str) -> list[str] | None:
        """The service's healthcheck test as a command runnable here, addresses mapped."""
        test = (self.services[name].get("healthcheck") or {}).get("test")
        if not test:
            return None
        if test[0] == "CMD-SHELL":
            test = ["sh", "-c", test[1]]
        elif test[0] == "CMD":
            test = list(test[1:])
        kind = self.image_kind(self.services[name])
        test = [map_addresses(a, name, self.ports) for a in test]
        if test[0] == "python":
            test[0] = sys.executable
        elif kind == "postgres" and test[0] == "pg_isready":
            test[0] = shutil.which("pg_isready") or str(self.running[name].bindir / "pg_isready")
            test[1:1] = ["-h", "127.0.0.1", "-p", str(self.ports[(name, 5432)])]
        elif kind == "redis" and test[0] == "redis-cli":         # options before the command (ping)
            test[0] = shutil.which("redis-cli") or str(Path(self.running[name].binary).with_name("redis-cli"))
            test[1:1] = ["-h", "127.0.0.1", "-p", str(self.ports[(name, 6379)])]
        return test

    def healthy(self, name: str) -> bool:
        return subprocess.run(self.healthcheck(name), capture_output=True, timeout=30).returncode == 0

    def wait(self, name: str, condition: str) -> None:
        if condition == "service_started":
            return
        assert condition == "service_healthy", condition
        assert self.healthcheck(name), f"{name} has no healthcheck to wait for"
        process, check = self.running[name], self.healthcheck(name)
        if isinstance(process, services.Process):
            process.wait_until(lambda: self.healthy(name), 300, f"healthy ({' '.join(check)})")
        else:                                               # a store: up once its constructor returned
            assert self.healthy(name), f"{name}: {check} failed"
        self.log.append(f"{name} healthy: {' '.join(check)}")

    def url(self, name: str, container_port: int) -> str:
        return f"http://127.0.0.1:{self.ports[(name, container_port)]}"

    def stop(self) -> None:
        for name in reversed(list(self.running)):
            self.running[name].stop()
        for folder in self.folders:
            shutil.rmtree(folder, ignore_errors=True)


def test_compose_services_run_as_processes_in_compose_order():
    compose = yaml.safe_load(COMPOSE.read_text())
    assert [set(w) for w in start_order(default_services(compose))] == [
        {"backend-1", "backend-2", "postgres", "redis"}, {"gateway"}]
    assert [set(w) for w in start_order(compose["services"])][2:] == [{"prometheus"}, {"grafana"}]
    run = ComposeRun(compose, DOT_ENV)
    try:
        try:
            run.up()
        except services.Unavailable as exc:
            pytest.skip(str(exc))
        gateway = run.services["gateway"]
        run.wait("gateway", "service_healthy")
        assert run.log[-1].startswith("gateway healthy") and "/readyz" in run.log[-1], run.log
        # the backend got the model from the interpolated command, and the gateway reaches it and the stores
        for backend in ("backend-1", "backend-2"):
            backend_command = run.running[backend].command
            assert backend_command[backend_command.index("--model") + 1] == "demo"
        assert run.running["gateway"].command[-4:] == ["--host", "127.0.0.1", "--port",
                                                       str(run.ports[("gateway", 8000)])]
        import httpx
        ready = httpx.get(run.url("gateway", 8000) + "/readyz", timeout=10).json()
        assert ready["status"] == "ready" and ready["database"] is True and ready["redis"] is True, ready
        api_key = (gateway.get("environment") or {}).get("SEMCACHE_API_KEYS") or "unused"
        client = openai.OpenAI(base_url=run.url("gateway", 8000) + "/v1", api_key=api_key.split(":")[0],
                               max_retries=0)
        raw = client.chat.completions.with_raw_response.create(
            model="demo", messages=[{"role": "user", "content": "What is the capital of France?"}], max_tokens=8,
            # greedy: a sampled reply from the demo model's random weights was empty in one CI run (an early EOS)
            temperature=0, extra_headers={"X-Session-Id": "compose-" + uuid.uuid4().hex[:8]})
        completion = raw.parse()
        assert completion.choices[0].message.content and raw.headers["x-cache"] == "MISS", dict(raw.headers)
        # the gateway knows both backend replicas, in rotation
        admin = {"Authorization": f"Bearer {interpolate('${SEMCACHE_ADMIN_TOKEN:-change-me}', DOT_ENV)}"}
        replicas = httpx.get(run.url("gateway", 8000) + "/admin/stats", headers=admin, timeout=10).json()["replicas"]
        assert [r["state"] for r in replicas] == ["healthy", "healthy"], replicas
        assert sorted(r["name"] for r in replicas) == sorted(
            [run.url("backend-1", 8001), run.url("backend-2", 8001)]), replicas
        assert sum(r["requests"] for r in replicas) >= 1, replicas
        # the gateway created the schema itself in the fresh PostgreSQL (migrate-on-start)
        import psycopg
        database = map_addresses(gateway["environment"]["SEMCACHE_DATABASE_URL"], "gateway", run.ports)
        with psycopg.connect(database, connect_timeout=5) as conn:
            assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [(HEAD,)]
    finally:
        run.stop()
