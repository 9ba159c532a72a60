"""A changed constraint in the session that wrote the entry is the same task changed (PARTIAL), even on a
first turn; from another session it is a MISS. In process: the real pipeline over a fresh SQLite store."""
from gateway.cache import CacheRequest

SYSTEM = {"role": "system", "content": "You are a travel assistant. Give short day-by-day plans."}
ASK = "Plan a 3-day trip to Kyoto for two people with a budget of {} dollars."
ANSWER = ("Day 1: Fushimi Inari and Gion. Day 2: Arashiyama. Day 3: Kinkaku-ji and Nishiki market. "
          "Estimated total: $1,850 including a mid-range hotel.")


def ask(amount: int) -> list[dict]:
    return [SYSTEM, {"role": "user", "content": ASK.format(amount)}]


def test_a_changed_budget_is_partial_in_its_session_and_a_miss_elsewhere(pipeline):
    cache_id, _ = pipeline.warm(CacheRequest("acme", "s1", ask(2000)), ANSWER, "session")
    same = pipeline.decide(CacheRequest("acme", "s1", ask(2000)))
    assert same.outcome == "HIT" and same.entry["cache_id"] == cache_id
    changed = pipeline.decide(CacheRequest("acme", "s1", ask(4500)))
    assert changed.outcome == "PARTIAL", (changed.reason, changed.gates)
    assert changed.entry["cache_id"] == cache_id
    if changed.reason == "entities:conflict":
        assert changed.gates["conflict"] == "value"
    elsewhere = pipeline.decide(CacheRequest("acme", "s2", ask(4500)))
    assert elsewhere.outcome == "MISS"
