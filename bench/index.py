"""HNSW index: build time, memory, filtered and unfiltered query latency, recall@10 vs brute force.

    python bench/index.py [--sizes 100000 1000000] [--queries 300]

Synthetic unit vectors of 384 dimensions, clustered like sentence embeddings
(so that neighbours are meaningful); tags spread over 20 tenants, 1,000
sessions, 8 domains and 2 prompt versions, with 10% of entries global. The
filtered query is the cache's own: one tenant, its global pool or one session,
one domain, one version. It asserts nothing.
"""
from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.index import EntryTags, SearchFilter, VectorIndex  # noqa: E402

DIM = 384


def dataset(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((max(n // 200, 8), DIM)).astype(np.float32)
    vectors = centers[rng.integers(0, len(centers), n)] + 0.6 * rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    tenant = rng.integers(0, 20, n)
    session = rng.integers(0, 1000, n)
    domain = rng.integers(0, 8, n)
    version = rng.integers(0, 2, n)
    scope = rng.random(n) < 0.1
    tags = [EntryTags(f"t{tenant[i]}", f"s{session[i]}", "global" if scope[i] else "session", f"d{domain[i]}",
                      f"v{version[i]}") for i in range(n)]
    return vectors, (tenant, session, domain, version, scope), tags


def allowed_mask(cols, f: SearchFilter) -> np.ndarray:
    tenant, session, domain, version, scope = cols
    t, s, d, v = (int(x[1:]) for x in (f.tenant, f.session_id, f.intent_domain, f.system_prompt_version))
    # the global pool of the request's domain, and the session's own entries in every domain
    return (tenant == t) & (version == v) & ((scope & (domain == d)) | (~scope & (session == s)))


def rss_mb() -> float:
    """Current resident memory (not the peak, which the dataset itself sets)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def recall_and_latency(index, vectors, cols, queries, k=10, filtered=True):
    rng = np.random.default_rng(1)
    tenant, session, domain, version, _ = cols
    batch = []
    for _ in range(queries):
        i = int(rng.integers(0, len(vectors)))
        q = vectors[i] + 0.05 * rng.standard_normal(DIM).astype(np.float32)
        q /= np.linalg.norm(q)
        f = SearchFilter(f"t{tenant[i]}", f"s{session[i]}", f"d{domain[i]}", f"v{version[i]}") if filtered else None
        batch.append((q, f))
    # latency in its own pass: the brute-force truth below streams the whole matrix through the caches
    latencies, results = [], []
    for q, f in batch:
        started = time.perf_counter()
        results.append(index.search(q, k, f))
        latencies.append(time.perf_counter() - started)
    recalls = []
    for (q, f), got in zip(batch, results):
        sims = vectors @ q
        if filtered:
            sims = np.where(allowed_mask(cols, f), sims, -np.inf)
        truth = set((np.argsort(-sims)[:k] + 1)[np.isfinite(np.sort(-sims)[:k])].tolist())
        if truth:
            recalls.append(len(truth & {label for label, _ in got}) / len(truth))
    return latencies, float(np.mean(recalls))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    print("RSS MB: memory the index adds (graph + partitions), measured after the build")
    print(f"{'n':>9} {'build s':>8} {'RSS MB':>7} {'filter':>6} {'p50 ms':>7} {'p99 ms':>7} {'recall@10':>9}")
    for n in args.sizes:
        vectors, cols, tags = dataset(n)
        before = rss_mb()
        started = time.perf_counter()
        index = VectorIndex(DIM, max_elements=n)
        for lo in range(0, n, 50_000):
            hi = min(lo + 50_000, n)
            index.add_many(list(range(lo + 1, hi + 1)), vectors[lo:hi], tags[lo:hi])
        build = time.perf_counter() - started
        memory = rss_mb() - before
        for filtered in (False, True):
            lat, recall = recall_and_latency(index, vectors, cols, args.queries, filtered=filtered)
            print(f"{n:>9} {build:>8.1f} {memory:>7.0f} {'yes' if filtered else 'no':>6} "
                  f"{statistics.median(lat) * 1000:>7.2f} {statistics.quantiles(lat, n=100)[98] * 1000:>7.2f} "
                  f"{recall:>9.3f}")


if __name__ == "__main__":
    main()
