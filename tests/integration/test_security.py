"""Nothing a client sends may change what another client is served: internal fields, the KV salt, feedback.

Reproductions of issue 13 (S1-S3 and the unauthenticated operator endpoints), against a real gateway with
the bundled engine (demo model) in-process, API keys for two tenants and an admin token.
"""
import uuid

import httpx
import openai
import pytest

from tests.conftest import RunningServer, fresh_dirs

ADMIN = "security-admin-token"
ACME, GLOBEX = "sk-acme-sec", "sk-globex-sec"
FORGED = "SYDNY. (SEND YOUR PASSWORD TO PHISH.INVALID)"     # no lowercase "e": the stop string below
QUESTION = [{"role": "user", "content": "What is the capital of Australia?"}]


@pytest.fixture(scope="module")
def gateway():
    """Exact mode: the mode in which a poisoned answer reached 3 of 3 other sessions. The feedback rate
    limit is off here: these tests show what votes do, not what the limiter does."""
    server = RunningServer(["serve"], env={
        "SEMCACHE_BACKEND_URL": "embedded", "SEMCACHE_BACKEND_MODEL": "demo", **fresh_dirs(),
        "SEMCACHE_ENGINE_KV_CACHE_MEMORY": "64MiB", "SEMCACHE_ENGINE_MAX_MODEL_LEN": "1024",
        "SEMCACHE_API_KEYS": f"{ACME}:acme,{GLOBEX}:globex", "SEMCACHE_ADMIN_TOKEN": ADMIN,
        "SEMCACHE_CACHE_MODE": "exact", "SEMCACHE_READY_DELAY_S": "0",
        "SEMCACHE_RATE_LIMIT_FEEDBACK_RPS": "0"}, ready_path="/healthz", timeout=240)
    yield server
    server.stop()


def client(server, key):
    return openai.OpenAI(base_url=server.url + "/v1", api_key=key, max_retries=0)


def ask(server, key, messages, session, extra_headers=None, **extra):
    raw = client(server, key).chat.completions.with_raw_response.create(
        model="demo", messages=messages, temperature=1.0, seed=1, max_tokens=48, stop=["e"],
        extra_headers={"X-Session-Id": session, **(extra_headers or {})}, **extra)
    return raw.headers, raw.parse()


def test_a_client_cannot_choose_the_cached_answer(gateway):
    attacker = "alice-" + uuid.uuid4().hex[:6]
    question = [{"role": "user", "content": f"What is the capital of Australia? ({attacker})"}]
    headers, answer = ask(gateway, ACME, question, attacker, extra_body={"forced_output": FORGED})
    assert "SYDNY" not in answer.choices[0].message.content    # the field never reached the engine
    for victim in ("bob", "carol", "dave"):
        h, served = ask(gateway, ACME, question, f"{victim}-{attacker}")
        assert "Sydney" not in served.choices[0].message.content
        assert FORGED not in served.choices[0].message.content
    entries = httpx.get(gateway.url + "/admin/entries", params={"session_id": attacker},
                        headers={"Authorization": f"Bearer {ADMIN}"}).json()["entries"]
    assert entries and all(FORGED not in e["answer_text"] for e in entries)


def test_a_trusted_caller_keeps_forced_output(gateway):
    """Replay proves itself with the admin token; the in-process engine trusts only its own gateway."""
    session = "replay-" + uuid.uuid4().hex[:6]
    question = [{"role": "user", "content": f"Name a prime number. ({session})"}]
    _, answer = ask(gateway, ACME, question, session, extra_body={"forced_output": "SIX."},
                    extra_headers={"X-Session-Id": session, "X-Semcache-Admin-Token": ADMIN})
    assert answer.choices[0].message.content == "SIX."
    _, other = ask(gateway, ACME, [{"role": "user", "content": f"Name an even number. ({session})"}], session,
                   extra_body={"forced_output": "FOUR."},
                   extra_headers={"X-Session-Id": session, "X-Semcache-Admin-Token": "wrong"})
    assert other.choices[0].message.content != "FOUR."


def test_a_body_cache_salt_does_not_reach_another_tenants_blocks(gateway):
    system = {"role": "system", "content": "You answer questions about the acme tenant's private roadmap. " * 4}
    messages = [system, {"role": "user", "content": "What ships next quarter?"}]
    session = uuid.uuid4().hex[:8]
    ask(gateway, ACME, messages, "a-" + session, extra_headers={"Cache-Control": "no-store",
                                                                "X-Session-Id": "a-" + session})
    _, again = ask(gateway, ACME, messages, "a2-" + session, extra_headers={"Cache-Control": "no-cache, no-store",
                                                                          "X-Session-Id": "a2-" + session})
    assert again.usage.prompt_tokens_details.cached_tokens > 0          # acme's own blocks are reused
    _, probe = ask(gateway, GLOBEX, messages, "b-" + session, extra_body={"cache_salt": "acme"},
                   extra_headers={"Cache-Control": "no-cache, no-store", "X-Session-Id": "b-" + session})
    assert probe.usage.prompt_tokens_details.cached_tokens == 0


def _answer_id(gateway, session: str) -> str:
    headers, _ = ask(gateway, ACME, [{"role": "user", "content": f"Describe a lighthouse ({session})."}], session)
    assert headers["x-cache"] == "MISS" and headers.get("x-cache-id")
    return headers["x-cache-id"]


def _feedback(gateway, cache_id, signal, session):
    return httpx.post(gateway.url + "/v1/feedback", json={"cache_id": cache_id, "signal": signal},
                      headers={"Authorization": f"Bearer {ACME}", "X-Session-Id": session})


def _entry(gateway, cache_id):
    return httpx.get(gateway.url + f"/admin/entries/{cache_id}", headers={"Authorization": f"Bearer {ADMIN}"}).json()


def test_one_user_cannot_remove_an_entry_others_are_served(gateway):
    cache_id = _answer_id(gateway, "owner-" + uuid.uuid4().hex[:6])
    mallory = "mallory-" + uuid.uuid4().hex[:6]
    replies = [_feedback(gateway, cache_id, "negative", mallory).json() for _ in range(3)]
    assert [r["counted"] for r in replies] == [True, False, False]
    assert _entry(gateway, cache_id)["state"] == "ready" and _entry(gateway, cache_id)["feedback_score"] == -1
    # users who agree do remove it: three distinct sessions push it below the floor (-2)
    for other in ("u1", "u2"):
        _feedback(gateway, cache_id, "negative", other + mallory)
    assert _entry(gateway, cache_id)["feedback_score"] == -3


def test_one_user_cannot_pin_an_entry(gateway):
    cache_id = _answer_id(gateway, "owner-" + uuid.uuid4().hex[:6])
    fan = "fan-" + uuid.uuid4().hex[:6]
    for _ in range(50):
        _feedback(gateway, cache_id, "positive", fan)
    assert _entry(gateway, cache_id)["feedback_score"] == 1
    for i in range(5):
        _feedback(gateway, cache_id, "positive", f"{fan}-{i}")
    assert _entry(gateway, cache_id)["feedback_score"] == 2            # the cap: never pinned for good


def test_the_owner_session_retracts_its_own_answer(gateway):
    session = "owner-" + uuid.uuid4().hex[:6]
    cache_id = _answer_id(gateway, session)
    assert _feedback(gateway, cache_id, "negative", session).json()["state"] == "invalid"


@pytest.mark.parametrize("path", ["/metrics", "/schema/openapi.json"])
def test_operator_endpoints_need_a_credential(gateway, path):
    assert httpx.get(gateway.url + path).status_code == 401
    assert httpx.get(gateway.url + path, headers={"Authorization": "Bearer nope"}).status_code == 401
    assert httpx.get(gateway.url + path, headers={"Authorization": f"Bearer {ACME}"}).status_code == 200
    assert httpx.get(gateway.url + path, headers={"Authorization": f"Bearer {ADMIN}"}).status_code == 200
