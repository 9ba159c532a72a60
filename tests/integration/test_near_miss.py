"""A gate's doubt is not the entry's fault (issue 14, item 5): a near-miss (a candidate above `accept` that a
gate turns down) never changes the entry's feedback score; only users' evidence does. Before, each cost 0.25,
and a run of paraphrases the classifier called `modify` sank a warmed entry until its own question missed.

In process: the real pipeline (configured models) over a fresh SQLite store."""
from gateway.cache import CacheRequest
from validator.pair_judge import Verdict as PairVerdict
from validator.key_fact_validator import Verdict

SYSTEM = {"role": "system", "content": "You are a travel assistant. Give short day-by-day plans."}
QUESTION = [SYSTEM, {"role": "user", "content": "Plan a 3-day trip to Salzburg for a couple who like hiking."}]
ANSWER = ("Day 1: old town, Hohensalzburg fortress, dinner in the Augustiner Brau beer hall.\n"
          "Day 2: Untersberg cable car and the ridge trail, back by bus 25.\n"
          "Day 3: Kapuzinerberg loop in the morning, Hellbrunn palace in the afternoon.")


def test_near_misses_leave_the_feedback_score_alone(pipeline, monkeypatch):
    cache_id, status = pipeline.warm(CacheRequest("acme", "s1", QUESTION), ANSWER, "session")
    assert status == "written"
    assert pipeline.decide(CacheRequest("acme", "s1", QUESTION, store=False)).outcome == "HIT"
    judge, check = pipeline.intent.judge, pipeline.validator.check
    # the classifier doubts (`modify`, `switch`) the very question, scored at the top of the accept band
    for label in ["modify"] * 9 + ["switch"]:
        monkeypatch.setattr(pipeline.intent, "judge", lambda *a, label=label: PairVerdict(
            label, {"same": 0.1, "modify": 0.8, "switch": 0.1}, "model"))
        decision = pipeline.decide(CacheRequest("acme", "s1", QUESTION, store=False))
        assert decision.reason == f"intent:{label}" and decision.gates["band"] == "accept"
        assert decision.entry["cache_id"] == cache_id
    monkeypatch.setattr(pipeline.intent, "judge", judge)
    # the key-fact validator doubts it
    monkeypatch.setattr(pipeline.validator, "check", lambda *a, **k: Verdict(False, "budget:over"))
    for _ in range(5):
        decision = pipeline.decide(CacheRequest("acme", "s1", QUESTION, store=False))
        assert decision.reason == "validator:budget" and decision.gates["band"] == "accept"
    monkeypatch.setattr(pipeline.validator, "check", check)
    # real near-misses: the same trip, changed
    for text in ("Plan a 3-day trip to Salzburg for a couple who hate hiking.",
                 "Plan a 5-day trip to Salzburg for a couple who like hiking.",
                 "Plan a 3-day trip to Salzburg for a couple who like hiking, on a budget of 200 euros."):
        pipeline.decide(CacheRequest("acme", "s1", [SYSTEM, {"role": "user", "content": text}], store=False))
    entry = pipeline.store.get(cache_id)
    assert entry["feedback_score"] == 0 and entry["state"] == "ready"
    # the question itself is still served
    decision = pipeline.decide(CacheRequest("acme", "s1", QUESTION, store=False))
    assert decision.outcome == "HIT" and decision.entry["cache_id"] == cache_id


def test_users_evidence_still_lowers_it(pipeline):
    cache_id, _ = pipeline.warm(CacheRequest("acme", "s2", QUESTION), ANSWER, "session")
    pipeline.store.feedback(cache_id, "negative", "another-session")
    assert pipeline.store.get(cache_id)["feedback_score"] == -1
