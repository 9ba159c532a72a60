"""The gateway as users run it: real server processes on loopback, the official openai client."""
import asyncio
import time

import httpx
import openai
import pytest

from tests.conftest import ADMIN_TOKEN, RunningServer, free_port, fresh_dirs, metric

MSGS = [{"role": "user", "content": "Suggest a weekend in Lisbon."}]


def client_for(server, key="unused"):
    return openai.OpenAI(base_url=server.url + "/v1", api_key=key, max_retries=0)


def async_client_for(server, key="unused"):
    return openai.AsyncOpenAI(base_url=server.url + "/v1", api_key=key, max_retries=0)


@pytest.fixture(params=["embedded", "proxy"])
def gateway(request, embedded_gateway, proxy_gateway):
    return (embedded_gateway, "unused") if request.param == "embedded" else (proxy_gateway, "sk-acme-1")


def test_sync_non_stream_and_headers(gateway):
    server, key = gateway
    raw = client_for(server, key).chat.completions.with_raw_response.create(
        model="demo", messages=MSGS, max_tokens=6, temperature=0, extra_body={"ignore_eos": True})
    completion = raw.parse()
    assert completion.object == "chat.completion"
    assert completion.usage.completion_tokens == 6          # ignore_eos (unknown to OpenAI) passed through
    # a field the cache does not model changes what is asked: forwarded, never answered from the cache
    assert raw.headers["x-cache"] == "BYPASS" and raw.headers["x-cache-reason"] == "unsupported:ignore_eos"
    assert len(raw.headers["x-request-id"]) >= 16
    assert "x-cache-id" not in raw.headers                   # nothing was written, so no id is claimed


def test_async_stream_matches_non_stream(gateway):
    server, key = gateway

    async def run():
        client = async_client_for(server, key)
        full = await client.chat.completions.create(model="demo", messages=MSGS, max_tokens=8, temperature=0,
                                                    extra_body={"ignore_eos": True})
        stream = await client.chat.completions.create(model="demo", messages=MSGS, max_tokens=8, temperature=0,
                                                      stream=True, stream_options={"include_usage": True},
                                                      extra_body={"ignore_eos": True})
        chunks = [c async for c in stream]
        await client.close()
        return full, chunks

    full, chunks = asyncio.run(run())
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == full.choices[0].message.content
    assert chunks[-1].usage.completion_tokens == 8


def test_sse_is_relayed_incrementally(embedded_gateway):
    """Chunks reach the client while the backend is still generating, not in one blob at the end."""
    body = {"model": "demo", "messages": MSGS, "max_tokens": 300, "stream": True, "ignore_eos": True}
    arrivals = []
    with httpx.stream("POST", embedded_gateway.url + "/v1/chat/completions", json=body, timeout=60) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        for line in r.iter_lines():
            if line.startswith("data: "):
                arrivals.append(time.perf_counter())
    assert len(arrivals) > 100
    assert arrivals[len(arrivals) // 2] - arrivals[0] > 0.05     # spread over the generation


def test_request_id_is_echoed(embedded_gateway):
    r = httpx.post(embedded_gateway.url + "/v1/chat/completions", headers={"X-Request-Id": "trace-42"},
                   json={"model": "demo", "messages": MSGS, "max_tokens": 1})
    assert r.headers["x-request-id"] == "trace-42"


def test_no_cache_request_is_a_bypass(embedded_gateway):
    r = httpx.post(embedded_gateway.url + "/v1/chat/completions", headers={"Cache-Control": "no-cache"},
                   json={"model": "demo", "messages": MSGS, "max_tokens": 1})
    assert r.status_code == 200 and r.headers["x-cache"] == "BYPASS"


def test_models_passthrough(gateway):
    server, key = gateway
    assert [m.id for m in client_for(server, key).models.list().data] == ["demo"]


def test_operations_endpoints(embedded_gateway):
    url = embedded_gateway.url
    assert httpx.get(url + "/healthz").json() == {"status": "ok"}
    ready = httpx.get(url + "/readyz").json()
    assert ready["backend"] is True and ready["store"] is True
    schema = httpx.get(url + "/schema/openapi.json").json()
    assert "/v1/chat/completions" in schema["paths"]
    httpx.post(url + "/v1/chat/completions", json={"model": "demo", "messages": MSGS, "max_tokens": 1})
    assert metric(url, 'semcache_requests_total{cache="MISS"}') >= 1
    text = httpx.get(url + "/metrics").text
    assert 'semcache_request_duration_seconds_bucket{cache="MISS"' in text


BAD = [
    (b"{oops", "invalid_json", 400),
    (b"[1, 2]", "invalid_json", 400),
    (b'{"model": "demo"}', "missing", 400),
    (b'{"model": "demo", "messages": []}', "invalid_value", 400),
    (b'{"model": "demo", "messages": "hi"}', "invalid_value", 400),
    (b'{"model": "demo", "messages": [{"role": "wizard", "content": "x"}]}', "invalid_value", 400),
    (b'{"model": "demo", "messages": [{"role": "user", "content": 7}]}', "invalid_value", 400),
    (b'{"model": "demo", "messages": [{"role": "user", "content": [{"type": "video"}]}]}', "invalid_value", 400),
    (b'{"model": "demo", "messages": [{"role": "user", "content": "x"}], "max_tokens": 0}', "invalid_value", 400),
    (b'{"model": "demo", "messages": [{"role": "user", "content": "x"}], "temperature": 7}', "invalid_value", 400),
    (b'{"model": "demo", "messages": [{"role": "user", "content": "x"}], "stream": "yes"}', "invalid_value", 400),
    (b'{"model": "demo", "messages": [{"role": "user", "content": "x"}], "stream": true, "stream_options": [1]}',
     "invalid_value", 400),
    (b'{"model": "demo", "messages": [{"role": "user", "content": "x"}], "n": "2"}', "invalid_value", 400),
    # found by an outside probe: a number as `stop` was a 500, a seed past 64 bits a 502
    (b'{"model": "demo", "messages": [{"role": "user", "content": "x"}], "stop": 5}', "invalid_value", 400),
    (b'{"model": "demo", "messages": [{"role": "user", "content": "x"}], "stop": ["a", ""]}', "invalid_value", 400),
    (b'{"model": "demo", "messages": [{"role": "user", "content": "x"}], "stop": ["a", "b", "c", "d", "e"]}',
     "invalid_value", 400),
    (b'{"model": "demo", "messages": [{"role": "user", "content": "x"}], "seed": 18446744073709551616}',
     "invalid_value", 400),
    (b'{"model": "demo", "messages": [{"role": "user", "content": "x"}], "seed": 1.5}', "invalid_value", 400),
    (b'{"model": "demo", "messages": [{"role": "user", "content": "x"}], "presence_penalty": 9}', "invalid_value", 400),
    (b'{"model": "demo", "messages": [' + b",".join([b'{"role": "user", "content": "x"}'] * 9) + b"]}",
     "too_many_messages", 400),
    (b'{"model": "demo", "messages": [{"role": "user", "content": "' + b"x" * 70000 + b'"}]}',
     "request_too_large", 413),
]


@pytest.mark.parametrize("raw,code,status", BAD, ids=[f"{i}-{b[2]}" for i, b in enumerate(BAD)])
def test_bad_input(proxy_gateway, raw, code, status):
    r = httpx.post(proxy_gateway.url + "/v1/chat/completions", content=raw,
                   headers={"Authorization": "Bearer sk-acme-1", "Content-Type": "application/json"})
    assert r.status_code == status
    assert r.json()["error"]["code"] == code
    assert proxy_gateway.alive()


def test_upstream_4xx_passes_through(proxy_gateway):
    with pytest.raises(openai.BadRequestError) as exc:
        client_for(proxy_gateway, "sk-acme-1").chat.completions.create(
            model="demo", messages=[{"role": "user", "content": "word " * 3000}])
    assert exc.value.body["code"] == "context_length_exceeded"      # the backend's own error body


def test_auth(proxy_gateway):
    url = proxy_gateway.url + "/v1/chat/completions"
    body = {"model": "demo", "messages": MSGS, "max_tokens": 1}
    assert httpx.post(url, json=body).status_code == 401
    assert httpx.post(url, json=body, headers={"Authorization": "Bearer nope"}).json()["error"]["code"] == \
        "invalid_api_key"
    assert httpx.post(url, json=body, headers={"Authorization": "Bearer sk-globex-1"}).status_code == 200
    with pytest.raises(openai.AuthenticationError):
        client_for(proxy_gateway, "wrong").models.list()
    assert httpx.get(proxy_gateway.url + "/admin/stats").status_code == 401
    assert httpx.get(proxy_gateway.url + "/admin/stats", headers={"Authorization": "Bearer sk-acme-1"}).status_code == 401
    stats = httpx.get(proxy_gateway.url + "/admin/stats", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}).json()
    assert stats["requests"].get("MISS", 0) >= 1


def test_tenant_comes_from_the_key_and_isolates_kv_blocks(proxy_gateway):
    system = {"role": "system", "content": "You answer questions about the acme tenant's private catalog. " * 3}
    msgs = [system, {"role": "user", "content": "List three products."}]
    acme = client_for(proxy_gateway, "sk-acme-1")
    globex = client_for(proxy_gateway, "sk-globex-1")
    acme.chat.completions.create(model="demo", messages=msgs, max_tokens=2)
    again = acme.chat.completions.create(model="demo", messages=msgs, max_tokens=2)
    assert again.usage.prompt_tokens_details.cached_tokens > 0
    # a header naming another tenant changes nothing: the key decides
    other = globex.chat.completions.create(model="demo", messages=msgs, max_tokens=2,
                                           extra_headers={"X-Tenant": "acme", "X-Cache-Salt": "acme"})
    assert other.usage.prompt_tokens_details.cached_tokens == 0


def test_backend_down_is_a_502():
    port = free_port()                      # nothing listens here
    server = RunningServer(["serve", "--backend-url", f"http://127.0.0.1:{port}"],
                           env={**fresh_dirs()})
    try:
        r = httpx.post(server.url + "/v1/chat/completions", json={"model": "m", "messages": MSGS})
        assert r.status_code == 502 and r.json()["error"]["code"] == "upstream_unreachable"
        assert httpx.get(server.url + "/readyz").status_code == 503
        assert metric(server.url, 'semcache_upstream_errors_total{kind="connect"}') == 1
        with pytest.raises(openai.APIStatusError) as exc:
            client_for(server).chat.completions.create(model="m", messages=MSGS, stream=True)
        assert exc.value.status_code == 502
    finally:
        server.stop()


def test_slow_backend_is_a_504_and_cancels_the_work(demo_backend):
    server = RunningServer(["serve", "--backend-url", demo_backend.url],
                           env={"SEMCACHE_BACKEND_TIMEOUT_S": "0.5",
                                **fresh_dirs()})
    try:
        finished = metric(demo_backend.url, "semcache_engine_requests_finished_total")
        r = httpx.post(server.url + "/v1/chat/completions", timeout=30,
                       json={"model": "demo", "messages": MSGS, "max_tokens": 900, "ignore_eos": True})
        assert r.status_code == 504 and r.json()["error"]["code"] == "upstream_timeout"
        deadline = time.monotonic() + 10
        while metric(demo_backend.url, "semcache_engine_requests_running") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert metric(demo_backend.url, "semcache_engine_requests_running") == 0
        assert metric(demo_backend.url, "semcache_engine_requests_finished_total") == finished   # aborted
    finally:
        server.stop()


def test_client_disconnect_cancels_the_backend_request(proxy_gateway, demo_backend):
    finished = metric(demo_backend.url, "semcache_engine_requests_finished_total")
    body = {"model": "demo", "messages": MSGS, "max_tokens": 900, "ignore_eos": True, "stream": True}
    with httpx.stream("POST", proxy_gateway.url + "/v1/chat/completions", json=body,
                      headers={"Authorization": "Bearer sk-acme-1"}) as r:
        for line in r.iter_lines():
            if '"content"' in line and '"role"' not in line:
                break
    deadline = time.monotonic() + 10
    while metric(demo_backend.url, "semcache_engine_requests_running") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert metric(demo_backend.url, "semcache_engine_requests_running") == 0
    assert metric(demo_backend.url, "semcache_engine_requests_finished_total") == finished


def test_embedded_disconnect_cancels_the_engine_request(embedded_gateway):
    url = embedded_gateway.url
    finished = metric(url, "semcache_engine_requests_finished_total")      # engine metrics, same scrape
    body = {"model": "demo", "messages": MSGS, "max_tokens": 900, "ignore_eos": True, "stream": True}
    with httpx.stream("POST", url + "/v1/chat/completions", json=body) as r:
        for line in r.iter_lines():
            if '"content"' in line and '"role"' not in line:
                break
    deadline = time.monotonic() + 10
    while metric(url, "semcache_engine_requests_running") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert metric(url, "semcache_engine_requests_running") == 0
    assert metric(url, "semcache_engine_kv_blocks_used") == 0
    assert metric(url, "semcache_engine_requests_finished_total") == finished
