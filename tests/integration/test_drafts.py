"""The PARTIAL's draft over real HTTP: a gateway in front of a scripted backend that says it is the bundled
engine (`owned_by: semcache`) sends the matched entry's answer as `semcache.draft` with a PARTIAL, never with
a MISS, and never passes on a client's own `semcache` field; in front of another backend it sends none."""
import time
import uuid

import httpx
import openai
import pytest

from tests.conftest import ADMIN_TOKEN, RunningServer, fresh_dirs
from tests.integration.test_routing import ScriptedReplica

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
SYSTEM = {"role": "system", "content": "You are a careful travel planner. Keep plans realistic and within the "
                                       "stated budget, and list costs per day."}
KYOTO = "Plan a 3-day trip to Kyoto with a budget of 2000 dollars."
ANSWER = ("Day 1: Fushimi Inari shrine and Gion. Day 2: Arashiyama bamboo grove. Day 3: Kinkaku-ji and "
          "Nishiki market. Estimated total: $1,850 including a mid-range hotel.")


def gateway_for(owned_by: str):
    replica = ScriptedReplica("r", owned_by=owned_by)
    env = {"SEMCACHE_BACKEND_URL": replica.url + "/v1", "SEMCACHE_ADMIN_TOKEN": ADMIN_TOKEN, **fresh_dirs()}
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


@pytest.mark.parametrize("owned_by, expected", [("semcache", ANSWER), ("vllm", None)])
def test_a_partial_carries_the_matched_answer_as_a_draft_only_to_the_bundled_engine(owned_by, expected):
    replica, gateway = gateway_for(owned_by)
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
            assert replica.hints[-1]["salt"] == "default"
        else:
            assert replica.hints == []
    finally:
        gateway.stop()
        replica.kill()
