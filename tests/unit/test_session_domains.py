"""A session's own entries are candidates whatever domain each turn was classified into; the global pool stays
per domain. Across two domains the gates apply the stricter policy of both. Entity conflicts say what kind
of change they are, and an unsure pair verdict is `modify`, not `switch`."""
import numpy as np

from fingerprint.entities import conflict, conflicts
from gateway.index.hnsw import EntryTags, SearchFilter, VectorIndex
from validator.pair_judge import decide
from validator.risk_policy import RiskPolicy, stricter

DIM = 8


def unit(i: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i % DIM] = 1.0
    v[(i + 1) % DIM] = 0.1 * (i // DIM + 1)
    return v


def test_a_session_is_searched_in_every_domain_the_global_pool_only_in_its_own():
    index = VectorIndex(DIM, max_elements=64)
    index.add(1, unit(0), EntryTags("acme", "s1", "session", "travel_planning", "v1"))
    index.add(2, unit(1), EntryTags("acme", "s1", "session", "chitchat", "v1"))
    index.add(3, unit(2), EntryTags("acme", "s2", "session", "chitchat", "v1"))          # another session
    index.add(4, unit(3), EntryTags("acme", None, "global", "chitchat", "v1"))           # another domain's pool
    index.add(5, unit(4), EntryTags("acme", None, "global", "travel_planning", "v1"))
    index.add(6, unit(5), EntryTags("acme", "s1", "session", "chitchat", "v2"))          # another prompt version
    index.add(7, unit(6), EntryTags("other", "s1", "session", "chitchat", "v1"))         # another tenant
    found = {label for label, _ in index.search(unit(1), 10, SearchFilter("acme", "s1", "travel_planning", "v1"))}
    assert found == {1, 2, 5}
    found = {label for label, _ in index.search(unit(1), 10, SearchFilter("acme", "s2", "travel_planning", "v1"))}
    assert found == {3, 5}
    index.remove(2)
    found = {label for label, _ in index.search(unit(1), 10, SearchFilter("acme", "s1", "travel_planning", "v1"))}
    assert found == {1, 5}
    index.add(2, unit(1), EntryTags("acme", "s1", "session", "chitchat", "v1"))          # back again
    assert 2 in {label for label, _ in index.search(unit(1), 10, SearchFilter("acme", "s1", "doc_rewrite", "v1"))}


def test_emptied_partitions_are_freed():
    index = VectorIndex(DIM, max_elements=64)
    for label in range(1, 41):
        index.add(label, unit(label), EntryTags("acme", f"s{label}", "session", f"d{label % 3}", "v1"))
    index.add(41, unit(41), EntryTags("acme", None, "global", "d0", "v1"))
    for label in range(1, 41):
        index.remove(label)
    assert len(index._parts) == 1 and not index._session_domains
    assert [label for label, _ in index.search(unit(41), 5, SearchFilter("acme", "s1", "d0", "v1"))] == [41]


def test_session_domains_survive_a_checkpoint(tmp_path):
    index = VectorIndex(DIM, max_elements=64)
    index.add(1, unit(0), EntryTags("acme", "s1", "session", "chitchat", "v1"))
    index.save(tmp_path, 1.0)
    loaded = VectorIndex.load(tmp_path)
    assert [label for label, _ in loaded.search(unit(0), 5, SearchFilter("acme", "s1", "doc_rewrite", "v1"))] == [1]


def test_the_stricter_policy_of_two_domains():
    chat, support, code = (RiskPolicy.for_domain(d) for d in ("chitchat", "customer_support", "code_qa"))
    both = stricter(chat, support)
    assert both.accept == max(chat.accept, support.accept) and both.candidate == max(chat.candidate,
                                                                                      support.candidate)
    assert both.key_fact_check and not chat.key_fact_check
    assert not stricter(chat, code).allow_direct_hit
    assert stricter(chat, chat) == chat
    assert stricter(support, chat).accept == both.accept and stricter(support, chat).key_fact_check


def test_entity_conflicts_say_what_changed():
    assert conflict(["budget=2000"], ["budget=3000"]) == "value"
    assert conflict(["days=3", "kyoto"], ["days=3", "kyoto", "¬museum"]) == "negation"
    assert conflict(["kyoto"], ["osaka"]) == "names"
    assert conflict(["kyoto", "budget=2000"], ["kyoto"]) is None
    assert conflicts(["kyoto"], ["osaka"]) and not conflicts(["kyoto"], [])


def test_an_unsure_same_is_modify_and_switch_needs_the_top_label():
    assert decide(np.array([0.995, 0.004, 0.001]), 0.988) == "same"
    assert decide(np.array([0.87, 0.03, 0.10]), 0.988) == "modify"     # probably the same request, not surely
    assert decide(np.array([0.30, 0.20, 0.50]), 0.988) == "switch"
    assert decide(np.array([0.10, 0.50, 0.40]), 0.988) == "modify"
