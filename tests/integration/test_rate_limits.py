"""Per-caller rate limits through the real openai client: a 429 with Retry-After before any work is done,
in one process and shared by two gateway processes through Redis."""
import os
import subprocess
import sys
import uuid

import httpx
import openai
import pytest

from tests.conftest import ADMIN_TOKEN, ROOT, RunningServer, fresh_dirs, metric

ACME, GLOBEX, INITECH = "sk-acme-1", "sk-globex-1", "sk-initech-1"
KEYS = f"{ACME}:acme,{GLOBEX}:globex,{INITECH}:initech"
QUESTION = [{"role": "user", "content": "Name three rivers of Europe."}]


def ask(server, key=ACME, **kwargs):
    client = openai.OpenAI(base_url=server.url + "/v1", api_key=key, max_retries=0)
    return client.chat.completions.with_raw_response.create(model="demo", messages=QUESTION, max_tokens=4,
                                                            **kwargs)


def limited_env(**extra) -> dict:
    return {**fresh_dirs(), "SEMCACHE_API_KEYS": KEYS, "SEMCACHE_ADMIN_TOKEN": ADMIN_TOKEN,
            "SEMCACHE_RATE_LIMIT_CHAT_RPS": "0.1", "SEMCACHE_RATE_LIMIT_CHAT_BURST": "3",
            "SEMCACHE_RATE_LIMIT_FEEDBACK_RPS": "0.1", "SEMCACHE_RATE_LIMIT_FEEDBACK_BURST": "2", **extra}


@pytest.fixture(scope="module")
def limited_gateway(demo_backend):
    server = RunningServer(["serve"], env=limited_env(SEMCACHE_BACKEND_URL=demo_backend.url + "/v1"),
                           ready_path="/readyz")
    yield server
    server.stop()


def test_chat_over_the_limit_gets_a_429_with_retry_after(limited_gateway):
    for _ in range(3):                                       # the burst
        assert ask(limited_gateway).http_response.status_code == 200
    with pytest.raises(openai.RateLimitError) as refused:
        ask(limited_gateway)
    response = refused.value.response
    assert response.status_code == 429
    assert 1 <= int(response.headers["retry-after"]) <= 10
    error = response.json()["error"]
    assert error["code"] == "rate_limit_exceeded" and error["type"] == "rate_limit_error" and error["param"] is None
    assert ACME not in response.text
    # the limit is per API key: another key still has its whole burst
    assert ask(limited_gateway, key=GLOBEX).http_response.status_code == 200
    # it applies before the body is read: a refused caller's malformed body is never parsed (429, not 400)
    r = httpx.post(limited_gateway.url + "/v1/chat/completions", content=b"{not json",
                   headers={"Authorization": f"Bearer {ACME}", "content-type": "application/json"})
    assert r.status_code == 429 and "retry-after" in r.headers
    # authentication comes first: no key is a 401, never a 429
    assert httpx.post(limited_gateway.url + "/v1/chat/completions", json={}).status_code == 401
    assert metric(limited_gateway.url, 'semcache_rate_limited_total{route="chat"}') >= 2


def test_the_openai_client_waits_out_retry_after(limited_gateway):
    client = openai.OpenAI(base_url=limited_gateway.url + "/v1", api_key=INITECH, max_retries=0)
    for _ in range(3):
        client.chat.completions.create(model="demo", messages=QUESTION, max_tokens=4)
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="demo", messages=QUESTION, max_tokens=4)
    patient = openai.OpenAI(base_url=limited_gateway.url + "/v1", api_key=INITECH, max_retries=3)
    answer = patient.chat.completions.create(model="demo", messages=QUESTION, max_tokens=4)  # honours Retry-After
    assert answer.choices


def test_feedback_is_limited_per_caller(limited_gateway):
    url = limited_gateway.url + "/v1/feedback"
    headers = {"Authorization": f"Bearer {ACME}"}
    statuses = [httpx.post(url, headers=headers, json={"cache_id": "nope", "signal": "negative"}).status_code
                for _ in range(4)]
    assert statuses == [404, 404, 429, 429]
    r = httpx.post(url, headers=headers, json={"cache_id": "nope", "signal": "negative"})
    assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
    assert r.json()["error"]["code"] == "rate_limit_exceeded"
    assert metric(limited_gateway.url, 'semcache_rate_limited_total{route="feedback"}') >= 3


def test_two_gateways_sharing_redis_share_one_bucket(demo_backend, redis_url, pg_url):
    env = limited_env(SEMCACHE_BACKEND_URL=demo_backend.url + "/v1", SEMCACHE_DATABASE_URL=pg_url,
                      SEMCACHE_REDIS_URL=redis_url, SEMCACHE_REDIS_PREFIX="semcache-test-" + uuid.uuid4().hex[:8])
    migrate = subprocess.run([sys.executable, "-m", "gateway.cli", "migrate"], cwd=ROOT, env={**os.environ, **env},
                             capture_output=True, text=True, timeout=120)
    assert migrate.returncode == 0, migrate.stderr
    one = RunningServer(["serve"], env=env, ready_path="/readyz")
    two = RunningServer(["serve"], env={**env, **fresh_dirs()}, ready_path="/readyz")
    try:
        assert ask(one).http_response.status_code == 200
        assert ask(two).http_response.status_code == 200
        assert ask(one).http_response.status_code == 200
        for server in (two, one):                            # the burst of 3 is spent, whichever gateway asks
            with pytest.raises(openai.RateLimitError) as refused:
                ask(server)
            assert int(refused.value.response.headers["retry-after"]) >= 1
        assert ask(two, key=GLOBEX).http_response.status_code == 200
        import redis                                         # the buckets: under the prefix, by a hash of the key
        stored = [k.decode() for k in redis.Redis.from_url(redis_url).keys(env["SEMCACHE_REDIS_PREFIX"]
                                                                             + ":ratelimit:*")]
        assert len(stored) == 2 and not any(ACME in k or GLOBEX in k for k in stored)
    finally:
        one.stop()
        two.stop()
