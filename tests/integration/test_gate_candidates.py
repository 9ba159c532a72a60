"""The hit gates run on the agreeing candidates nearest first, up to `gate_k`, until one passes: a session keeps
each paraphrase it asked as an entry of its own, and a request can be a `modify` of the nearest one and the
`same` as the next (found when a slow CI runner had a paraphrase's own answer ready and nearer than the entry
the test meant).

In process: the real pipeline (prepared models) over a fresh SQLite store."""
from gateway.cache import CacheRequest
from validator.pair_judge import Verdict

FIRST = "What is the capital of France and what is it famous for?"
REWORDED = "Tell me the capital of France and what it is famous for."
PROBE = "So what's the capital of France, and what's it famous for?"


def user(text):
    return [{"role": "user", "content": text}]


def two_entries(pipeline, session="s1"):
    first, _ = pipeline.warm(CacheRequest("acme", session, user(FIRST)),
                             "Paris. It is famous for the Eiffel Tower and the Louvre.", "session")
    reworded, _ = pipeline.warm(CacheRequest("acme", session, user(REWORDED)),
                                "The capital is Paris, famous for art, food and the Eiffel Tower.", "session")
    return first, reworded


def judged_as(pipeline, monkeypatch, label_of_call) -> list[str]:
    """The pair judge replaced: its n-th call (from 1) gives `label_of_call(n)`. Returns the cached turns it
    is asked about, in order."""
    calls = []

    def judge(messages, cached):
        calls.append(cached[-2]["content"])
        label = label_of_call(len(calls))
        return Verdict(label, {name: float(name == label) for name in ("same", "modify", "switch")}, "model")

    monkeypatch.setattr(pipeline.intent, "judge", judge)
    return calls


def test_a_paraphrase_entry_nearer_than_the_match_does_not_hide_it(pipeline):
    first, reworded = two_entries(pipeline)
    decision = pipeline.decide(CacheRequest("acme", "s1", user(PROBE), store=False))
    assert decision.outcome == "HIT", decision.reason
    # both entries answer the probe: either may serve, but a doubt about the nearer one must not hide the other
    assert decision.entry["cache_id"] in (first, reworded)
    tried = decision.gates.get("tried")
    if decision.entry["cache_id"] == first and tried:
        # the nearer rewording was judged first and turned down; the record says so
        assert [t["cache_id"] for t in tried] == [reworded, first]
        assert tried[0]["reason"] != "accept" and tried[-1]["reason"] == "accept"
        assert tried[0]["score"] >= tried[1]["score"]


def test_the_nearest_failure_is_the_decision_when_none_passes(pipeline, monkeypatch):
    two_entries(pipeline, "s2")
    seen = judged_as(pipeline, monkeypatch, lambda n: "modify")
    decision = pipeline.decide(CacheRequest("acme", "s2", user(PROBE), store=False))
    assert decision.outcome == "PARTIAL" and decision.reason == "intent:modify"
    assert sorted(seen) == sorted([FIRST, REWORDED])
    tried = decision.gates["tried"]
    assert decision.entry["cache_id"] == tried[0]["cache_id"]
    assert round(decision.score, 4) == max(t["score"] for t in tried)


def test_only_gate_k_candidates_are_judged(pipeline, monkeypatch):
    first, reworded = two_entries(pipeline, "s3")
    calls = judged_as(pipeline, monkeypatch, lambda n: "modify" if n == 1 else "same")
    pipeline.gate_k = 1
    decision = pipeline.decide(CacheRequest("acme", "s3", user(PROBE), store=False))
    assert decision.reason == "intent:modify" and len(calls) == 1 and "tried" not in decision.gates
    calls.clear()
    pipeline.gate_k = 2
    decision = pipeline.decide(CacheRequest("acme", "s3", user(PROBE), store=False))
    assert decision.outcome == "HIT" and len(calls) == 2
    assert decision.entry["cache_id"] in (first, reworded) and decision.entry["cache_id"] != \
        decision.gates["tried"][0]["cache_id"]


def test_a_domain_without_direct_hits_judges_one_candidate(pipeline, monkeypatch):
    two_entries(pipeline, "s4")
    calls = judged_as(pipeline, monkeypatch, lambda n: "same")
    for table in [pipeline.policies.default, *pipeline.policies.domains.values()]:
        monkeypatch.setitem(table, "allow_direct_hit", False)
    decision = pipeline.decide(CacheRequest("acme", "s4", user(PROBE), store=False))
    # no candidate could pass (every pair policy is at least as strict as the request's): one is enough
    assert decision.reason == "policy:no_direct_hit" and len(calls) == 1 and "tried" not in decision.gates


NO_PILLS = "What can I do to sleep better without taking pills?"
NATURAL = "What are some natural ways to sleep better?"


def test_an_entity_negation_on_one_side_only_goes_to_the_pair_judge(pipeline, monkeypatch):
    # the entities read "pills" as excluded on one side only: as often a rewording as a change, so the judge
    # (alignment's negation veto, then the model) decides instead of a conflict stopping the pair
    pipeline.warm(CacheRequest("acme", "s5", user(NO_PILLS)), "Keep a regular schedule, cut caffeine after noon, "
                  "dim the lights an hour before bed and keep the bedroom cool.", "session")
    seen = judged_as(pipeline, monkeypatch, lambda n: "same")
    decision = pipeline.decide(CacheRequest("acme", "s5", user(NATURAL), store=False))
    assert seen == [NO_PILLS] and decision.outcome == "HIT", decision.reason
    assert decision.gates["entity_conflicts"] == 1


def test_another_value_still_stops_the_pair_before_the_judge(pipeline, monkeypatch):
    pipeline.warm(CacheRequest("acme", "s6", user("Plan a 3 day trip to Kyoto for 2000 dollars.")),
                  "Day 1: Fushimi Inari. Day 2: Arashiyama. Day 3: Nara.", "session")
    seen = judged_as(pipeline, monkeypatch, lambda n: "same")
    decision = pipeline.decide(CacheRequest("acme", "s6", user("Plan a 3 day trip to Kyoto for 3000 dollars."),
                                            store=False))
    assert seen == [] and decision.reason == "entities:conflict" and decision.gates["conflict"] == "value"


def test_an_entry_the_parameters_allow_is_gated_before_nearer_ones_they_do_not(pipeline):
    """Found by an outside probe: a session held the same question answered under a stop string and under
    no stop string; a request without one met the first, nearer, entry and went to the backend
    (`params:stop`), writing yet another entry, though the second could serve it."""
    from gateway.cache import Decision
    from gateway.cache.request_params import GenerationParams

    def written(text, answer, **params):
        req = CacheRequest("acme", "s3", user(text), params=GenerationParams(**params))
        decision = Decision("MISS", "no_candidate", fingerprint=pipeline.fingerprinter.fingerprint(req.messages))
        return pipeline.write(req, decision, answer, {"completion_tokens": 14})

    stopped = written(PROBE, "Paris. It is famous for the Eiffel Tower and the Louvre.", stop=("Rome",))
    plain = written(PROBE, "The capital is Paris, famous for art, food and the Eiffel Tower.")
    decision = pipeline.decide(CacheRequest("acme", "s3", user(PROBE), store=False))
    assert decision.outcome == "HIT" and decision.entry["cache_id"] == plain, (decision.reason, decision.gates)
    # asked with that stop string, the exact entry serves (it is nearest and the parameters allow it)
    again = pipeline.decide(CacheRequest("acme", "s3", user(PROBE), store=False,
                                         params=GenerationParams(stop=("Rome",))))
    assert again.outcome == "HIT" and again.entry["cache_id"] == stopped


def test_an_answer_given_under_other_system_values_is_not_served(pipeline):
    """Found by an outside probe: dates and names in the system prompt are masked in its version, and an answer
    given on 2026-12-07 (or to Alice) was served on 2026-12-09 (or to Bob). The entry is still found, so the
    request is a PARTIAL with its draft, not a HIT."""
    def asked(system):
        return [{"role": "system", "content": system},
                {"role": "user", "content": "My order shipped on December 2 with 5-day delivery. Has it arrived?"}]
    cache_id, _ = pipeline.warm(CacheRequest("acme", "s4", asked("Support bot. Current date: 2026-12-07.")),
                                "Not yet, but it should arrive by this evening.", "session")
    same = pipeline.decide(CacheRequest("acme", "s4", asked("Support bot. Current date: 2026-12-07."), store=False))
    assert same.outcome == "HIT" and same.entry["cache_id"] == cache_id, same.reason
    later = pipeline.decide(CacheRequest("acme", "s4", asked("Support bot. Current date: 2026-12-09."), store=False))
    assert later.outcome != "HIT" and later.reason == "context:system_values", (later.reason, later.gates)
    assert later.entry["cache_id"] == cache_id                      # found: its answer is the PARTIAL's draft
