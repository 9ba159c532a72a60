"""The near answer's draft over real HTTP: a gateway in front of a scripted backend that says it is the bundled
engine (`owned_by: semcache`) sends the matched entry's answer as a draft with a PARTIAL, and with a MISS
whose request is a changed one of another conversation's entry or exactly another session's request (a
draft only: not served), never with a MISS that matched nothing,
and never passes on a client's own `semcache` field; in front of another backend it sends none. With early
forwarding (the default for the bundled engine) the request goes out before the decision and the draft
follows it under the request's key; a HIT cancels the request in the real engine."""
import hashlib
import time
import uuid

import httpx
import openai
import pytest

from tests.conftest import ADMIN_TOKEN, RunningServer, fresh_dirs, metric
from tests.integration.test_routing import ScriptedReplica

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
SYSTEM = {"role": "system", "content": "You are a careful travel planner. Keep plans realistic and within the "
                                       "stated budget, and list costs per day."}
KYOTO = "Plan a 3-day trip to Kyoto with a budget of 2000 dollars."
ANSWER = ("Day 1: Fushimi Inari shrine and Gion. Day 2: Arashiyama bamboo grove. Day 3: Kinkaku-ji and "
          "Nishiki market. Estimated total: $1,850 including a mid-range hotel.")


def gateway_for(owned_by: str, early: str = "auto"):
    replica = ScriptedReplica("r", owned_by=owned_by)
    env = {"SEMCACHE_BACKEND_URL": replica.url + "/v1", "SEMCACHE_ADMIN_TOKEN": ADMIN_TOKEN,
           "SEMCACHE_BACKEND_EARLY_FORWARD": early, **fresh_dirs()}
    return replica, RunningServer(["serve"], env=env, ready_path="/readyz", timeout=240)


def partial_turn(gateway, replica):
    session = "draft-" + uuid.uuid4().hex[:8]
    client = openai.OpenAI(base_url=gateway.url + "/v1", api_key="unused", max_retries=0)
    first = client.chat.completions.with_raw_response.create(
        model="scripted", messages=[SYSTEM, {"role": "user", "content": KYOTO}],
        extra_headers={"X-Session-Id": session}, extra_body={"semcache": {"draft": "a client's own draft"}})
    assert first.headers["x-cache"] == "MISS"
    warm = httpx.post(gateway.url + "/admin/warmup", headers=ADMIN, timeout=60, json={"entries": [
        {"messages": [SYSTEM, {"role": "user", "content": KYOTO}], "answer": ANSWER, "session_id": session}]})
    assert warm.status_code == 200, warm.text
    followup = [SYSTEM, {"role": "user", "content": KYOTO}, {"role": "assistant", "content": ANSWER},
                {"role": "user", "content": "Raise the budget to 3000 dollars."}]
    second = client.chat.completions.with_raw_response.create(model="scripted", messages=followup,
                                                              extra_headers={"X-Session-Id": session})
    assert second.headers["x-cache"] == "PARTIAL", dict(second.headers)
    return replica.chats[-2]["body"], replica.chats[-1]["body"]


def early_forwards(gateway, result: str) -> float:
    return metric(gateway.url, f'semcache_early_forwards_total{{result="{result}"}}')


@pytest.mark.parametrize("owned_by, expected", [("semcache", ANSWER), ("vllm", None)])
def test_a_partial_carries_the_matched_answer_as_a_draft_only_to_the_bundled_engine(owned_by, expected):
    replica, gateway = gateway_for(owned_by, early="off")
    try:
        miss, partial = partial_turn(gateway, replica)
        assert "semcache" not in miss                     # the client's own extension never passes
        assert (partial.get("semcache") or {}).get("draft") == expected
        # the KV prefetch note goes out before each decision, to the bundled engine only
        deadline = time.monotonic() + 5
        while expected and len(replica.hints) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        if expected:
            assert replica.hints[-1]["body"]["messages"][-1]["content"] == "Raise the budget to 3000 dollars."
            # the tenant's salt, as on the request itself: its hash, never its name
            assert replica.hints[-1]["salt"] == "sha256:" + hashlib.sha256(b"default").hexdigest()[:32]
        else:
            assert replica.hints == []
        assert replica.drafts == []
    finally:
        gateway.stop()
        replica.kill()


def test_a_miss_near_another_conversations_entry_carries_that_answer_as_its_draft():
    replica, gateway = gateway_for("semcache", early="off")
    try:
        warm = httpx.post(gateway.url + "/admin/warmup", headers=ADMIN, timeout=60, json={"entries": [
            {"messages": [SYSTEM, {"role": "user", "content": KYOTO}], "answer": ANSWER, "scope": "global"}]})
        assert warm.status_code == 200, warm.text
        client = openai.OpenAI(base_url=gateway.url + "/v1", api_key="unused", max_retries=0)
        changed = KYOTO.replace("2000", "3000")
        miss = client.chat.completions.with_raw_response.create(
            model="scripted", messages=[SYSTEM, {"role": "user", "content": changed}],
            extra_headers={"X-Session-Id": "other-" + uuid.uuid4().hex[:8]})
        # another budget in another conversation: never served, not this conversation's prefix, so a MISS
        assert miss.headers["x-cache"] == "MISS", dict(miss.headers)
        assert miss.headers["x-cache-reason"] == "entities:conflict", dict(miss.headers)
        assert replica.chats[-1]["body"]["semcache"]["draft"] == ANSWER
        unrelated = client.chat.completions.with_raw_response.create(
            model="scripted", messages=[{"role": "user", "content": "How do I repot a cactus without gloves?"}],
            extra_headers={"X-Session-Id": "other-" + uuid.uuid4().hex[:8]})
        assert unrelated.headers["x-cache"] == "MISS", dict(unrelated.headers)
        assert "draft" not in (replica.chats[-1]["body"].get("semcache") or {})
    finally:
        gateway.stop()
        replica.kill()


def test_a_miss_asking_what_another_session_asked_takes_that_answer_as_a_draft_but_is_not_served_it():
    replica = ScriptedReplica("r", owned_by="semcache")
    env = {"SEMCACHE_BACKEND_URL": replica.url + "/v1", "SEMCACHE_ADMIN_TOKEN": ADMIN_TOKEN,
           "SEMCACHE_BACKEND_EARLY_FORWARD": "off", "SEMCACHE_API_KEYS": "keyA:tenantA,keyB:tenantB", **fresh_dirs()}
    gateway = RunningServer(["serve"], env=env, ready_path="/readyz", timeout=240)
    try:
        messages = [SYSTEM, {"role": "user", "content": KYOTO}]
        warm = httpx.post(gateway.url + "/admin/warmup", headers=ADMIN, timeout=60, json={"entries": [
            {"messages": messages, "answer": ANSWER, "session_id": "alice", "tenant": "tenantA"}]})
        assert warm.status_code == 200, warm.text

        def ask(key: str, session: str):
            client = openai.OpenAI(base_url=gateway.url + "/v1", api_key=key, max_retries=0)
            reply = client.chat.completions.with_raw_response.create(model="scripted", messages=messages,
                                                                     extra_headers={"X-Session-Id": session})
            return reply, replica.chats[-1]["body"]

        # the same messages in another session of the tenant: that session's entry is not served to it (scope
        # is the session until promotion), but its answer goes to the engine as a draft to verify
        reply, body = ask("keyA", "bob")
        assert reply.headers["x-cache"] == "MISS", dict(reply.headers)
        assert reply.parse().choices[0].message.content != ANSWER
        assert body["semcache"]["draft"] == ANSWER
        # another tenant asking the same never gets it, not even as a draft
        reply, body = ask("keyB", "carol")
        assert reply.headers["x-cache"] == "MISS", dict(reply.headers)
        assert "draft" not in (body.get("semcache") or {})
    finally:
        gateway.stop()
        replica.kill()


@pytest.mark.parametrize("owned_by", ["semcache", "vllm"])
def test_sent_early_the_request_is_followed_by_its_draft_under_its_key(owned_by):
    replica, gateway = gateway_for(owned_by)              # backend_early_forward: auto
    try:
        miss, partial = partial_turn(gateway, replica)
        if owned_by == "vllm":                            # another backend: nothing early, nothing extra
            assert "semcache" not in miss and "semcache" not in partial and replica.drafts == []
            return
        # both went out before their decision, each under a key of its own and without a draft in the body
        keys = [body["semcache"]["draft_key"] for body in (miss, partial)]
        assert "draft" not in miss["semcache"] and "draft" not in partial["semcache"]
        assert len(set(keys)) == 2 and all(len(k) >= 8 for k in keys)
        deadline = time.monotonic() + 5
        while not replica.drafts and time.monotonic() < deadline:
            time.sleep(0.05)
        assert replica.drafts == [{"key": keys[1], "draft": ANSWER}]      # the PARTIAL's only, the MISS none
        assert replica.hints == []                        # the early request itself brings the prefix in
    finally:
        gateway.stop()
        replica.kill()


def test_a_hit_cancels_the_request_sent_to_the_engine_while_deciding():
    env = {"SEMCACHE_BACKEND_URL": "embedded", "SEMCACHE_BACKEND_MODEL": "demo", "SEMCACHE_ADMIN_TOKEN": ADMIN_TOKEN,
           "SEMCACHE_ENGINE_KV_CACHE_MEMORY": "64MiB", "SEMCACHE_ENGINE_MAX_MODEL_LEN": "1024", **fresh_dirs()}
    gateway = RunningServer(["serve"], env=env, ready_path="/readyz", timeout=240)
    try:
        session = "hit-" + uuid.uuid4().hex[:8]
        messages = [SYSTEM, {"role": "user", "content": KYOTO}]
        warm = httpx.post(gateway.url + "/admin/warmup", headers=ADMIN, timeout=60, json={"entries": [
            {"messages": messages, "answer": ANSWER, "session_id": session}]})
        assert warm.status_code == 200, warm.text
        finished = metric(gateway.url, "semcache_engine_requests_finished_total")
        # seed 8: the demo model draws 128 tokens here before its end-of-text, so the engine is still at work
        # when the decision comes (ignore_eos, a field the cache does not model, would make the request BYPASS)
        hit = httpx.post(gateway.url + "/v1/chat/completions", headers={"X-Session-Id": session}, timeout=60,
                         json={"model": "demo", "messages": messages, "max_tokens": 900, "temperature": 1.0,
                               "seed": 8})
        assert hit.status_code == 200 and hit.headers["x-cache"] == "HIT", dict(hit.headers)
        assert hit.json()["choices"][0]["message"]["content"] == ANSWER
        deadline = time.monotonic() + 10
        while metric(gateway.url, "semcache_engine_requests_running") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert metric(gateway.url, "semcache_engine_requests_running") == 0
        assert metric(gateway.url, "semcache_engine_kv_blocks_used") == 0
        assert metric(gateway.url, "semcache_engine_requests_finished_total") == finished     # aborted
        assert metric(gateway.url, "semcache_early_forwards_total") >= 1
        assert early_forwards(gateway, "cancelled") == 1
    finally:
        gateway.stop()


def test_with_early_forwarding_on_another_backend_gets_each_request_unchanged_before_the_decision():
    replica, gateway = gateway_for("vllm", early="on")
    try:
        miss, partial = partial_turn(gateway, replica)
        # both went out before their decision and were used; nothing the bundled engine alone understands
        assert early_forwards(gateway, "used") == 2
        assert "semcache" not in miss and "semcache" not in partial
        assert replica.drafts == [] and replica.hints == []
        session = "early-hit-" + uuid.uuid4().hex[:8]
        messages = [SYSTEM, {"role": "user", "content": KYOTO}]
        warm = httpx.post(gateway.url + "/admin/warmup", headers=ADMIN, timeout=60, json={"entries": [
            {"messages": messages, "answer": ANSWER, "session_id": session}]})
        assert warm.status_code == 200, warm.text
        replica.mode, replica.delay = "slow", 3.0
        hit = httpx.post(gateway.url + "/v1/chat/completions", headers={"X-Session-Id": session}, timeout=60,
                         json={"model": "scripted", "messages": messages})
        assert hit.status_code == 200 and hit.headers["x-cache"] == "HIT", dict(hit.headers)
        assert hit.json()["choices"][0]["message"]["content"] == ANSWER
        assert early_forwards(gateway, "cancelled") == 1 and early_forwards(gateway, "used") == 2
    finally:
        gateway.stop()
        replica.kill()
