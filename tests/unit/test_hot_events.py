"""The wire form of cache events between replicas (gateway/store/hot.py): pure functions, no Redis."""
import json

import numpy as np

from gateway.store.hot import _from_wire, _to_wire


def test_a_vector_crosses_the_wire_bit_for_bit_and_smaller():
    vector = np.random.default_rng(3).standard_normal(384).astype(np.float32)
    event = {"kind": "ready", "seq": 7, "vector": vector, "tenant": "t"}
    wire = json.dumps({"origin": "a", "events": [_to_wire(event)]})
    assert len(wire) < len(json.dumps(vector.tolist())) / 2
    [back] = _from_wire(json.loads(wire), own_origin="b")
    assert back["seq"] == 7 and back["tenant"] == "t" and "vector_b64" not in back
    assert np.array_equal(back["vector"], vector)


def test_events_without_a_vector_pass_unchanged_and_own_messages_are_skipped():
    events = [{"kind": "remove", "seqs": [1, 2]}, {"kind": "scope", "seq": 3, "scope": "global", "promotion": None}]
    message = json.loads(json.dumps({"origin": "a", "events": [_to_wire(e) for e in events]}))
    assert _from_wire(message, own_origin="b") == events
    assert _from_wire(message, own_origin="a") == []


def test_a_bare_event_from_the_previous_release_is_understood():
    old = {"kind": "ready", "seq": 9, "vector": [0.6, 0.8], "origin": "old-replica"}
    [event] = _from_wire(old, own_origin="b")
    assert event == {"kind": "ready", "seq": 9, "vector": [0.6, 0.8]}


def test_a_listener_that_fails_on_one_event_does_not_keep_the_others_from_any_listener():
    from gateway.store.hot import LocalHotStore
    hot, seen = LocalHotStore(), []

    def fragile(event):
        if event["seq"] == 1:
            raise ValueError("bad event")
        seen.append(("fragile", event["seq"]))
    hot.subscribe(fragile)
    hot.subscribe(lambda event: seen.append(("steady", event["seq"])))
    hot.announce([{"kind": "ready", "seq": 1}, {"kind": "ready", "seq": 2}], [("c2", {"seq": 2}, 60)])
    assert seen == [("steady", 1), ("fragile", 2), ("steady", 2)]
    assert hot.get("c2") == {"seq": 2}
