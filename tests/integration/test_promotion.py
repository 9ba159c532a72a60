"""Promotion by evidence through a real gateway (embedded demo engine, SQLite) with the openai client: an
answer reaches other users of its tenant only after other sessions' own answers agreed with it, never
another tenant, never with personal data, never in shadow mode, and it leaves the pool on one signal.

The replay's trusted `forced_output` (admin token) fixes each answer, so agreement is under the test's control.
"""
import time
import uuid

import httpx
import openai
import pytest

from tests.conftest import RunningServer, fresh_dirs, metric

ADMIN = "promotion-admin-token"
ACME, GLOBEX = "sk-acme-promo", "sk-globex-promo"
ANSWER = "Op n Sttings, cho os Accounts, th n click R s t Passwor d."


def start(mode: str) -> RunningServer:
    return RunningServer(["serve"], env={
        "SEMCACHE_BACKEND_URL": "embedded", "SEMCACHE_BACKEND_MODEL": "demo", **fresh_dirs(),
        "SEMCACHE_ENGINE_KV_CACHE_MEMORY": "64MiB", "SEMCACHE_ENGINE_MAX_MODEL_LEN": "1024",
        "SEMCACHE_API_KEYS": f"{ACME}:acme,{GLOBEX}:globex", "SEMCACHE_ADMIN_TOKEN": ADMIN,
        "SEMCACHE_READY_DELAY_S": "0", "SEMCACHE_PROMOTION": mode, "SEMCACHE_PROMOTION_MIN_SESSIONS": "2",
        "SEMCACHE_RATE_LIMIT_FEEDBACK_RPS": "0"}, ready_path="/readyz", timeout=240)


@pytest.fixture(scope="module")
def auto():
    server = start("auto")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def shadow():
    server = start("shadow")
    yield server
    server.stop()


def ask(server, question, session, key=ACME, answer=ANSWER, stop=()):
    # the forced answer ends the demo model's output ("stop"); no stop strings, since an answer cut by its own
    # request's stop strings never crosses users
    raw = openai.OpenAI(base_url=server.url + "/v1", api_key=key, max_retries=0).chat.completions \
        .with_raw_response.create(model="demo", messages=[{"role": "user", "content": question}], temperature=0,
                                  max_tokens=200, stop=list(stop), extra_body={"forced_output": answer},
                                  extra_headers={"X-Session-Id": session, "X-Semcache-Admin-Token": ADMIN})
    return raw.headers, raw.parse().choices[0].message.content


def admin(server, path, **params):
    r = httpx.get(server.url + path, params=params, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()


def wait_promotion(server, cache_id, state, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        entry = admin(server, f"/admin/entries/{cache_id}")
        if entry["promotion"] == state:
            return entry
        time.sleep(0.2)
    raise AssertionError(f"{cache_id} stayed {entry['promotion']}, expected {state}")


def sessions(n):
    tag = uuid.uuid4().hex[:6]
    return [f"user-{i}-{tag}" for i in range(n)]


def test_auto_promotes_on_agreeing_sessions_and_serves_only_its_tenant(auto):
    # a support question (a domain whose answers may be promoted), however the domain head reads "app version"
    question = f"How do I reset my account password, membership number {uuid.uuid4().int % 90 + 10}?"
    u = sessions(6)
    headers, _ = ask(auto, question, u[0])
    first = headers["x-cache-id"]
    assert admin(auto, f"/admin/entries/{first}")["promotion"] == "candidate"
    for s in u[1:3]:                       # other users: not served from a candidate, their answers agree
        h, _ = ask(auto, question, s)
        assert h["x-cache"] != "HIT"
    entry = wait_promotion(auto, first, "promoted")
    assert entry["scope"] == "global" and set(entry["evidence"]["sessions"]) == set(u[1:3])
    h, text = ask(auto, question, u[3], answer="SOMETHING ELSE")
    assert h["x-cache"] == "HIT" and h["x-cache-id"] == first and text == ANSWER
    h, text = ask(auto, question, "globex-" + u[4], key=GLOBEX, answer="GLOBEX OWN")
    assert h["x-cache"] != "HIT" and text == "GLOBEX OWN"          # no promotion across tenants, ever
    listed = admin(auto, "/admin/promotions", state="promoted")
    assert first in [e["cache_id"] for e in listed["entries"]] and listed["mode"] == "auto"
    assert metric(auto.url, "semcache_promotions_total", ADMIN) >= 1


def promoted(server, question):
    """Five users; the first one's answer promoted by the agreeing answers of the next two."""
    u = sessions(5)
    first = ask(server, question, u[0])[0]["x-cache-id"]
    for s in u[1:3]:
        ask(server, question, s)
    wait_promotion(server, first, "promoted")
    return u, first


def test_one_signal_from_another_user_demotes(auto):
    question = f"Where can I download last month's invoice, account type {uuid.uuid4().int % 90 + 10}?"
    u, first = promoted(auto, question)
    h, _ = ask(auto, question, u[3])
    assert h["x-cache"] == "HIT"
    r = httpx.post(auto.url + "/v1/feedback", json={"cache_id": first, "signal": "negative"},
                   headers={"Authorization": f"Bearer {ACME}", "X-Session-Id": u[3]})
    assert r.status_code == 200 and r.json()["promotion"] == "demoted"
    h, _ = ask(auto, question, u[4], answer="FRESH")
    assert h["x-cache"] != "HIT"
    assert admin(auto, f"/admin/entries/{first}")["scope"] == "session"


def test_that_is_wrong_after_a_promoted_hit_demotes_it(auto):
    # a support question the domain head reads as customer_support for every number (a "version N" of an
    # app is code_qa for about one number in five, where nothing is promoted)
    question = f"How do I change the email address on my account, membership number {uuid.uuid4().int % 90 + 10}?"
    u, first = promoted(auto, question)
    h, text = ask(auto, question, u[3])
    assert h["x-cache"] == "HIT"
    follow = [{"role": "user", "content": question}, {"role": "assistant", "content": text},
              {"role": "user", "content": "That's wrong."}]
    openai.OpenAI(base_url=auto.url + "/v1", api_key=ACME, max_retries=0).chat.completions.create(
        model="demo", messages=follow, max_tokens=8, extra_headers={"X-Session-Id": u[3]})
    entry = wait_promotion(auto, first, "demoted")
    assert entry["scope"] == "session" and entry["evidence"]["last"]["why"] == "signal:negative"


def test_personal_data_is_never_a_candidate(auto):
    tag = uuid.uuid4().hex[:6]
    u = sessions(4)
    for question, answer in (
            (f"My order number is 88812345 and my email is bob.{tag}@example.com, where is it?", ANSWER),
            (f"我的手机号是13812345678，订单什么时候到？{tag}", "已发货"),
            (f"How long does shipping take to Norway ({tag})?", "Call us on +1 415 555 2671 for Norway.")):
        first = ask(auto, question, u[0], answer=answer)[0]["x-cache-id"]
        assert admin(auto, f"/admin/entries/{first}")["promotion"] is None
        for s in u[1:]:
            ask(auto, question, s, answer=answer)
        assert admin(auto, f"/admin/entries/{first}")["scope"] == "session"
    promoted = admin(auto, "/admin/promotions", state="promoted,shadow,candidate", limit=1000)["entries"]
    assert not any(tag in e["request"] or "13812345678" in e["request"] for e in promoted)


def test_shadow_mode_serves_nothing_but_measures(shadow):
    question = f"How do I change the delivery address of my order, membership number {uuid.uuid4().int % 90 + 10}?"
    u = sessions(5)
    first = ask(shadow, question, u[0])[0]["x-cache-id"]
    for s in u[1:3]:
        ask(shadow, question, s)
    entry = wait_promotion(shadow, first, "shadow")
    assert entry["scope"] == "session"
    h, text = ask(shadow, question, u[3])                          # a would-have-hit whose own answer agrees
    assert h["x-cache"] != "HIT"
    h, text = ask(shadow, question, u[4], answer="OWN ANSWR")      # and one whose answer does not
    assert h["x-cache"] != "HIT" and text == "OWN ANSWR"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (admin(shadow, f"/admin/entries/{first}")["evidence"] or {}).get(
            "would_hit", 0) < 2:
        time.sleep(0.2)
    entry = admin(shadow, f"/admin/entries/{first}")
    assert entry["evidence"]["would_hit"] == 2
    assert entry["evidence"]["shadow_agree"] == 1 and entry["evidence"]["shadow_disagree"] == 1
    assert entry["promotion"] == "rejected"                         # a disagreeing answer ends the promotion
    assert metric(shadow.url, 'semcache_promotion_evidence_total{result="agree",state="shadow"}', ADMIN) == 1



def test_mine_reports_candidates_and_apply_warms_them(auto, tmp_path):
    """`semcache mine` on generated help-desk logs: frequent first turns whose answers agree become
    candidates, personal requests never do; without --apply nothing is written, with it the candidates
    serve other users of the tenant."""
    import json
    import os
    import subprocess
    import sys

    from gateway.replay.datasets import write_jsonl
    from gateway.replay.helpdesk import generate_helpdesk
    from tests.conftest import ROOT, models_dir
    from validator.pii import has_pii

    logs = tmp_path / "logs.jsonl"
    write_jsonl(generate_helpdesk(80, seed=11), logs)
    env = {**os.environ, "SEMCACHE_MODELS_DIR": models_dir(), "SEMCACHE_DATA_DIR": str(tmp_path / "data")}
    before = admin(auto, "/admin/entries", scope="global", tenant="acme", limit=1000)["count"]
    report = tmp_path / "report.json"
    run = subprocess.run([sys.executable, "-m", "gateway.cli", "mine", str(logs), "--out", str(report),
                          "--no-progress"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(report.read_text())
    candidates = [r for r in result["report"] if r["verdict"] == "candidate"]
    assert candidates and all(r["size"] >= 3 and r["agreement"] >= 0.8 for r in candidates)
    assert not any(has_pii(r["answer"], *r["samples"]) for r in candidates)
    assert admin(auto, "/admin/entries", scope="global", tenant="acme", limit=1000)["count"] == before
    run = subprocess.run([sys.executable, "-m", "gateway.cli", "mine", str(logs), "--apply", "--url", auto.url,
                          "--admin-token", ADMIN, "--tenant", "acme", "--no-progress"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert f"of {len(candidates)} candidates warmed" in run.stdout
    top = candidates[0]
    # a stored answer holding the request's stop string is not served: this probe stops on a partial byte
    h, text = ask(auto, top["messages"][-1]["content"], "newcomer-" + uuid.uuid4().hex[:6], answer="NOT CACHED",
                  stop=("\ufffd",))
    assert h["x-cache"] == "HIT" and text == top["answer"]


def test_promotions_endpoint_checks_its_input(auto):
    assert httpx.get(auto.url + "/admin/promotions").status_code == 401
    for params in ({"state": "bogus"}, {"state": ""}, {"limit": "0"}, {"limit": "x"}, {"tenant": "a\x00b"}):
        r = httpx.get(auto.url + "/admin/promotions", params=params, headers={"Authorization": f"Bearer {ADMIN}"})
        assert r.status_code == 400, (params, r.text)
        assert r.json()["error"]["type"] == "invalid_request_error"
    r = httpx.get(auto.url + "/admin/entries", params={"promotion": "promoted"},
                  headers={"Authorization": f"Bearer {ADMIN}"})
    assert r.status_code == 200 and all(e["promotion"] == "promoted" for e in r.json()["entries"])
