"""Filtered index search against brute force at 100k synthetic 384-d vectors: recall@10 >= 0.98."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from index import dataset, recall_and_latency  # noqa: E402

from gateway.index import VectorIndex  # noqa: E402


@pytest.mark.slow
def test_recall_at_100k_filtered_and_unfiltered():
    vectors, cols, tags = dataset(100_000)
    index = VectorIndex(384, max_elements=100_000)
    index.add_many(list(range(1, 100_001)), vectors, tags)
    _, filtered = recall_and_latency(index, vectors, cols, queries=100, filtered=True)
    _, unfiltered = recall_and_latency(index, vectors, cols, queries=100, filtered=False)
    print(f"recall@10 filtered {filtered:.3f}, unfiltered {unfiltered:.3f}")
    assert filtered >= 0.98 and unfiltered >= 0.98


def test_partition_graph_and_removal_stay_exact():
    """A partition past the graph threshold keeps answering, removals included, like brute force."""
    rng = np.random.default_rng(3)
    from gateway.index import EntryTags, SearchFilter
    from gateway.index.hnsw import PARTITION_HNSW_AT
    n = PARTITION_HNSW_AT + 500
    vectors = rng.standard_normal((n, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = VectorIndex(32, max_elements=16)
    tags = EntryTags("acme", None, "global", "travel_planning", "v1")
    for label in range(1, n + 1):
        index.add(label, vectors[label - 1], tags)
    for label in range(1, n + 1, 3):
        index.remove(label)
    where = SearchFilter("acme", "s1", "travel_planning", "v1")
    alive = np.array([(label - 1) % 3 != 0 for label in range(1, n + 1)])
    hits = 0
    for i in range(50):
        q = vectors[i * 7]
        sims = np.where(alive, vectors @ q, -np.inf)
        truth = set((np.argsort(-sims)[:10] + 1).tolist())
        got = {label for label, _ in index.search(q, 10, where)}
        assert not any((label - 1) % 3 == 0 for label in got)          # removed entries never come back
        hits += len(truth & got)
    assert hits / 500 >= 0.98
    assert index.search(vectors[0], 5, SearchFilter("other", "s1", "travel_planning", "v1")) == []
