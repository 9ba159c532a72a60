"""The bundled engine's OpenAI server, over real HTTP, with the official openai client."""
import time

import httpx
import openai
import pytest

from tests.conftest import metric


@pytest.fixture()
def client(demo_backend):
    return openai.OpenAI(base_url=demo_backend.url + "/v1", api_key="unused", max_retries=0)


SYSTEM = {"role": "system", "content": "You are a helpful travel assistant. Keep answers short. " * 4}


def test_chat_non_stream_and_cached_tokens_on_turn_two(client):
    turn1 = [SYSTEM, {"role": "user", "content": "Plan two days in Rome."}]
    r1 = client.chat.completions.create(model="demo", messages=turn1, max_tokens=12, temperature=0,
                                        extra_body={"ignore_eos": True})
    assert r1.object == "chat.completion"
    assert r1.choices[0].message.role == "assistant"
    assert r1.usage.completion_tokens == 12 and r1.choices[0].finish_reason == "length"
    turn2 = turn1 + [{"role": "assistant", "content": r1.choices[0].message.content},
                     {"role": "user", "content": "Make it three days."}]
    r2 = client.chat.completions.create(model="demo", messages=turn2, max_tokens=4, temperature=0,
                                        extra_headers={"X-Session-Id": "s-1"})
    cached = r2.usage.prompt_tokens_details.cached_tokens
    assert cached >= (r1.usage.prompt_tokens // 16) * 16 and cached > 0
    assert cached < r2.usage.prompt_tokens


def test_stream_matches_non_stream_and_reports_usage(client):
    msgs = [{"role": "user", "content": "Say something about Tokyo."}]
    full = client.chat.completions.create(model="demo", messages=msgs, max_tokens=10, temperature=0,
                                          extra_body={"ignore_eos": True})
    stream = client.chat.completions.create(model="demo", messages=msgs, max_tokens=10, temperature=0, stream=True,
                                            stream_options={"include_usage": True}, extra_body={"ignore_eos": True})
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == full.choices[0].message.content
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "length"
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 10


def test_raw_sse_framing_ends_with_done(demo_backend):
    body = {"model": "demo", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 3, "stream": True}
    with httpx.stream("POST", demo_backend.url + "/v1/chat/completions", json=body) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        events = [line for line in r.iter_lines() if line]
    assert events[-1] == "data: [DONE]"
    assert all(e.startswith("data: ") for e in events)


def test_completions_with_text_and_token_ids(client):
    a = client.completions.create(model="demo", prompt="The capital of France is", max_tokens=5, temperature=0,
                                  extra_body={"ignore_eos": True})
    assert a.object == "text_completion" and a.usage.completion_tokens == 5
    b = client.completions.create(model="demo", prompt=[5, 6, 7, 8], max_tokens=3, temperature=0,
                                  extra_body={"ignore_eos": True})
    assert b.usage.prompt_tokens == 4
    chunks = list(client.completions.create(model="demo", prompt=[5, 6, 7, 8], max_tokens=3, temperature=0,
                                            stream=True, extra_body={"ignore_eos": True}))
    assert "".join(c.choices[0].text for c in chunks) == b.choices[0].text


def test_a_seed_makes_sampled_output_repeatable(client):
    """The same seed gives the same sampled text with or without a draft (the gateway attaches a cached
    answer on PARTIAL), and whatever the draft's lengths; another seed gives another text."""
    def ask(seed: int, draft: str | None = None) -> str:
        extra = {"ignore_eos": True, **({"semcache": {"draft": draft}} if draft else {})}
        return client.completions.create(model="demo", prompt="Once upon a time " * 8, max_tokens=24,
                                         temperature=0.8, seed=seed, extra_body=extra).choices[0].text
    first = ask(5)
    assert ask(5) == first
    assert ask(5, draft=first) == first
    assert ask(5, draft=first[: len(first) // 2] + " something else entirely") == first
    assert ask(6) != first


def test_models_health_and_metrics(client, demo_backend):
    assert [m.id for m in client.models.list().data] == ["demo"]
    assert httpx.get(demo_backend.url + "/healthz").json()["status"] == "ok"
    text = httpx.get(demo_backend.url + "/metrics").text
    for name in ("prefix_cache_queries_tokens_total", "prefix_cache_hits_tokens_total", "cached_prompt_tokens_total",
                 "kv_blocks_used", "kv_blocks_total", "time_to_first_token_seconds_bucket", "preemptions_total"):
        assert "semcache_engine_" + name in text
    assert metric(demo_backend.url, "semcache_engine_kv_blocks_total") == 256


BAD_BODIES = [
    ({"model": "demo", "messages": []}, "messages"),
    ({"model": "demo", "messages": [{"role": "wizard", "content": "hi"}]}, "role"),
    ({"model": "demo", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 0}, "max_tokens"),
    ({"model": "demo", "messages": [{"role": "user", "content": "hi"}], "max_tokens": -3}, "max_tokens"),
    ({"model": "demo", "messages": "hello"}, "messages"),
    ({"model": "demo", "messages": [{"role": "user", "content": "hi"}], "temperature": 9}, "temperature"),
    ({"model": "demo", "messages": [{"role": "user", "content": 12}]}, "content"),
    ({"model": "demo", "messages": [{"role": "user", "content": "hi"}], "logprobs": True}, "logprobs"),
    ({"model": "demo", "messages": [{"role": "user", "content": "hi"}],
      "tools": [{"type": "function", "function": {"name": "f"}}]}, "tools"),
    ({"model": "demo", "messages": [{"role": "user", "content": "hi"}], "n": 2}, "n=1"),
]


@pytest.mark.parametrize("body,needle", BAD_BODIES)
def test_bad_input_gets_openai_style_400(demo_backend, body, needle):
    r = httpx.post(demo_backend.url + "/v1/chat/completions", json=body)
    assert r.status_code == 400
    err = r.json()["error"]
    assert needle in err["message"] and err["type"] == "invalid_request_error"
    assert demo_backend.alive()


def test_body_that_is_not_json(demo_backend):
    r = httpx.post(demo_backend.url + "/v1/chat/completions", content=b"{not json",
                   headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_json"


def test_prompt_longer_than_the_context_window(client, demo_backend):
    with pytest.raises(openai.BadRequestError) as exc:
        client.chat.completions.create(model="demo", messages=[{"role": "user", "content": "word " * 3000}])
    assert exc.value.body["code"] == "context_length_exceeded"
    assert httpx.get(demo_backend.url + "/healthz").status_code == 200


def wait_idle(url: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if metric(url, "semcache_engine_requests_running") == 0 and metric(url, "semcache_engine_kv_blocks_used") == 0:
            return
        time.sleep(0.05)
    raise AssertionError("engine did not become idle")


def test_stream_disconnect_cancels_and_frees_blocks(demo_backend):
    url = demo_backend.url
    wait_idle(url)
    finished = metric(url, "semcache_engine_requests_finished_total")
    body = {"model": "demo", "messages": [{"role": "user", "content": "go on forever"}], "max_tokens": 900,
            "ignore_eos": True, "stream": True}
    with httpx.stream("POST", url + "/v1/chat/completions", json=body) as r:
        for line in r.iter_lines():
            if '"content"' in line and '"role"' not in line:
                break                                    # one real token arrived; now hang up
    assert metric(url, "semcache_engine_requests_running") <= 1
    wait_idle(url)
    assert metric(url, "semcache_engine_requests_finished_total") == finished      # aborted, not completed


def test_non_stream_disconnect_cancels(demo_backend):
    url = demo_backend.url
    wait_idle(url)
    finished = metric(url, "semcache_engine_requests_finished_total")
    body = {"model": "demo", "messages": [{"role": "user", "content": "go on forever"}], "max_tokens": 900,
            "ignore_eos": True}
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(url + "/v1/chat/completions", json=body, timeout=httpx.Timeout(5, read=0.3))
    wait_idle(url)
    assert metric(url, "semcache_engine_requests_finished_total") == finished
