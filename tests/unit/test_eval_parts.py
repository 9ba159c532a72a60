"""`semcache eval`: the summary of decided rows (no models)."""
import json

import pytest

from gateway.replay.evaluate import load_cases, percentile, report, summarize


def row(id, expected, outcome, lang="en", domain="travel_planning", category="paraphrase", cross="MISS"):
    return {"id": id, "expected": expected, "outcome": outcome, "lang": lang, "domain": domain,
            "category": category, "reason": "accept" if outcome == "HIT" else "intent:modify", "score": 0.99,
            "warmed": "written", "seed_cache_id": "c", "cross_outcome": cross, "cross_reason": "x",
            "cross_cache_id": None, "latency_ms": 10.0}


def test_summary_counts_wrong_hits_recall_and_cross_session_hits():
    rows = [row("a", "hit", "HIT"), row("b", "hit", "MISS", lang="zh"),
            row("c", "hit", "HIT", domain="code_qa"),                # not a servable domain
            row("d", "hit", "PARTIAL", domain=None),                 # no domain: not in the servable figure
            row("e", "partial", "HIT", category="negation"),         # a wrong HIT
            row("f", "partial", "PARTIAL", lang="zh"),
            row("g", "miss", "PARTIAL", category="entity_change", cross="HIT"),
            row("h", "miss", "MISS", lang="zh", category="entity_change")]
    s = summarize(rows)
    assert s["wrong_hits"] == 1 and [w["id"] for w in s["wrong_hit_cases"]] == ["e"] and s["non_hit_cases"] == 4
    assert s["cross_session_hits"] == 1 and s["cross_session_hit_cases"][0]["id"] == "g"
    assert s["hit_recall"]["all"] == {"n": 4, "got": 2, "recall": 0.5}
    assert s["hit_recall"]["zh"] == {"n": 1, "got": 0, "recall": 0.0}
    assert s["hit_recall_servable"]["all"] == {"n": 2, "got": 1, "recall": 0.5}
    assert s["partial_recall"]["all"] == {"n": 2, "got": 1, "recall": 0.5}
    assert s["miss_recall"]["en"] == {"n": 1, "got": 0, "recall": 0.0}
    assert s["categories"]["negation"]["en"]["wrong_hits"] == 1
    assert s["categories"]["entity_change"]["zh"]["outcomes"]["MISS"] == 1
    assert s["missed_hit_reasons"] == {"intent:modify": 2}
    text = report(s)
    assert "wrong HITs: 1 of 4 non-hit cases (must be 0)" in text and "cross-session HITs: 1" in text


def test_summary_counts_how_often_the_domain_tag_is_the_cases_domain():
    rows = [{**row("a", "hit", "HIT"), "intent_domain": "travel_planning"},
            {**row("b", "hit", "MISS"), "intent_domain": "realtime"},
            {**row("c", "miss", "MISS", domain="chitchat"), "intent_domain": "chitchat"},
            {**row("d", "miss", "MISS", domain="chitchat"), "intent_domain": None},     # no fingerprint
            row("e", "miss", "MISS")]                                                 # over HTTP: no tag
    tag = summarize(rows)["domain_tag"]
    assert tag["n"] == 3 and tag["got"] == 2
    assert tag["by_domain"]["travel_planning"] == {"n": 2, "got": 1, "wrong_as": {"realtime": 1}}
    assert tag["by_domain"]["chitchat"] == {"n": 1, "got": 1, "wrong_as": {}}
    assert "domain tag = case domain: 2/3 (chitchat 1/1, travel_planning 1/2)" in report(summarize(rows))
    assert summarize([row("x", "hit", "HIT")])["domain_tag"] is None


def test_percentile_is_nearest_rank():
    values = list(range(1, 101))
    assert percentile(values, 50) == 50 and percentile(values, 99) == 99 and percentile([7.0], 99) == 7.0
    assert percentile([], 50) is None


def test_cases_need_the_fields_of_the_schema(tmp_path):
    good = {"system": "", "seed": [{"role": "user", "content": "hi"}], "seed_answer": "hello",
            "probe": [{"role": "user", "content": "hi!"}], "expected": "hit"}
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(good) + "\n\n" + json.dumps({**good, "id": "x", "lang": "en"}) + "\n")
    cases = load_cases(path)
    assert [c["id"] for c in cases] == ["line-1", "x"] and cases[0]["lang"] == "-" and cases[0]["domain"] is None
    for bad, message in (({"seed": []}, "'seed' must be a non-empty list"),
                         ({"probe": [{"role": "assistant", "content": "x"}]}, "'probe' must end with a user turn"),
                         ({"seed_answer": " "}, "'seed_answer' must be a non-empty string"),
                         ({"expected": "HIT"}, "'expected' must be one of")):
        path.write_text(json.dumps({**good, **bad}) + "\n")
        with pytest.raises(ValueError, match=f"cases.jsonl:1: {message}"):
            load_cases(path)
