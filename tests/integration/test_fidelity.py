"""The gateway as a faithful OpenAI sidecar (issue 15): a HIT honours the request's parameters, every other
/v1 route passes through, and a conversation without a session id is still searched in its own conversation.
Real gateway processes with the bundled engine (demo model) in-process, and the official openai client."""
import time
import uuid

import httpx
import openai
import pytest

from tests.conftest import RunningServer, fresh_dirs

KEY = "sk-fidelity"
SAMPLING = {"temperature": 1.0, "max_tokens": 48, "stop": ["e"]}   # the demo model ends on "stop"


def gateway(mode: str, **env):
    return RunningServer(["serve"], env={
        "SEMCACHE_BACKEND_URL": "embedded", "SEMCACHE_BACKEND_MODEL": "demo", **fresh_dirs(),
        "SEMCACHE_ENGINE_KV_CACHE_MEMORY": "64MiB", "SEMCACHE_ENGINE_MAX_MODEL_LEN": "1024",
        "SEMCACHE_API_KEYS": f"{KEY}:acme", "SEMCACHE_CACHE_MODE": mode, "SEMCACHE_READY_DELAY_S": "0", **env},
        ready_path="/healthz", timeout=240)


@pytest.fixture(scope="module")
def exact():
    server = gateway("exact")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def semantic():
    server = gateway("semantic", SEMCACHE_DUPLICATE_WINDOW_S="0.5")
    yield server
    server.stop()


def client(server, key=KEY):
    return openai.OpenAI(base_url=server.url + "/v1", api_key=key, max_retries=0)


def ask(server, messages, session=None, **params):
    headers = {"X-Session-Id": session} if session else {}
    raw = client(server).chat.completions.with_raw_response.create(
        messages=messages, extra_headers=headers, **{"model": "demo", **SAMPLING, **params})
    return raw.headers, raw.parse()


def written_answer(server):
    """A question whose answer the demo model ends with a stop string after a few tokens, so it is cached."""
    for i in range(20):
        messages = [{"role": "user", "content": f"Tell me about harbour number {i} ({uuid.uuid4().hex[:6]})."}]
        headers, answer = ask(server, messages, "writer-" + uuid.uuid4().hex[:6], seed=i)
        if headers.get("x-cache-id") and answer.usage.completion_tokens >= 3:
            return messages, answer, i
    pytest.fail("the demo model gave no cacheable answer of 3 tokens or more")


def test_a_hit_honours_model_length_and_stop(exact):
    messages, original, seed = written_answer(exact)
    text = original.choices[0].message.content
    headers, same = ask(exact, messages, "reader-1", seed=seed)
    assert headers["x-cache"] == "HIT" and same.choices[0].message.content == text
    assert same.model == original.model                     # the model that produced the answer
    headers, _ = ask(exact, messages, "reader-2", seed=seed, model="gpt-4o")
    assert headers["x-cache"] != "HIT" and headers["x-cache-reason"] == "params:model"
    headers, short = ask(exact, messages, "reader-3", seed=seed, max_tokens=original.usage.completion_tokens - 1)
    assert headers["x-cache"] != "HIT" and headers["x-cache-reason"] == "params:max_tokens"
    assert short.usage.completion_tokens <= original.usage.completion_tokens - 1
    headers, stopped = ask(exact, messages, "reader-4", seed=seed, stop=["e", text[1:3]])
    assert headers["x-cache"] != "HIT" and headers["x-cache-reason"] == "params:stop"
    assert text[1:3] not in stopped.choices[0].message.content


def test_other_routes_pass_through(exact):
    # greedy: a sampled demo answer may end on EOS before max_tokens (a flake, seen once in CI)
    done = client(exact).completions.with_raw_response.create(model="demo", prompt="Once upon a time", max_tokens=4,
                                                               temperature=0)
    assert done.headers["x-cache"] == "BYPASS" and done.headers["x-cache-reason"] == "route:passthrough"
    assert done.parse().usage.completion_tokens == 4
    # greedy too: a sampled stream may end on EOS at its first token (seen once in CI)
    chunks = list(client(exact).completions.create(model="demo", prompt="Once upon a time", max_tokens=4,
                                                   temperature=0, stream=True))
    assert "".join(c.choices[0].text for c in chunks if c.choices) == done.parse().choices[0].text
    with pytest.raises(openai.NotFoundError) as missing:        # the bundled engine has no embeddings:
        client(exact).embeddings.create(model="demo", input="hi")     # its own 404, not the gateway's
    assert missing.value.response.headers["x-cache-reason"] == "route:passthrough"
    with pytest.raises(openai.AuthenticationError):
        client(exact, key="wrong").completions.create(model="demo", prompt="hi", max_tokens=2)
    forged = httpx.post(exact.url + "/v1/completions", headers={"Authorization": f"Bearer {KEY}"},
                        json={"model": "demo", "prompt": "hi", "max_tokens": 3, "forced_output": "PWNED"})
    assert forged.status_code == 200 and "PWNED" not in forged.json()["choices"][0]["text"]


def test_response_format_the_engine_cannot_honour_is_a_400(exact):
    with pytest.raises(openai.BadRequestError) as exc:
        ask(exact, [{"role": "user", "content": "Give me JSON."}], "json-1", response_format={"type": "json_object"})
    assert exc.value.body["param"] == "response_format"


def test_a_conversation_without_a_session_id_is_searched(semantic):
    question = [{"role": "system", "content": "You are a harbour guide."},
                {"role": "user", "content": f"What time does the ferry to the island leave? ({uuid.uuid4().hex[:6]})"}]
    for seed in range(20):
        first_headers, first = ask(semantic, question, seed=seed)
        if first_headers.get("x-cache-id"):
            break
        question[-1]["content"] += " Please."
    else:
        pytest.fail("no cacheable answer")
    time.sleep(0.6)                                  # past the duplicate window: not a retry, not a regenerate
    headers, again = ask(semantic, question, seed=seed)
    assert headers["x-cache"] == "HIT" and headers["x-cache-id"] == first_headers["x-cache-id"]
    assert again.choices[0].message.content == first.choices[0].message.content
    other = [question[0], {"role": "user", "content": "Where can I rent a bicycle near the harbour?"}]
    headers, _ = ask(semantic, other, seed=seed)                     # another conversation: its own id
    assert headers["x-cache"] != "HIT"
