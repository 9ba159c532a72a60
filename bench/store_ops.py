"""CPU per entry of the store's two writes on PostgreSQL + Redis: `CacheStore.write` and `promote_due`.

    python bench/store_ops.py [--entries 300] [--rounds 3]

Every miss writes an entry (pending) and a promotion pass later makes it ready
(SQL, the index, the event to the other replicas, the hot copy). This times
both in this process, by process CPU (so the event listener thread's decoding
counts) and wall clock, on a throwaway database and Redis prefix (the tests'
servers, tests/services.py). `--rounds` repeats the whole measure; it prints
each round. It asserts nothing.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from gateway.store import NewEntry, StoreConfig, open_store  # noqa: E402
from tests import services  # noqa: E402


def entry(rng: np.random.Generator, i: int) -> NewEntry:
    vector = rng.standard_normal(384).astype(np.float32)
    return NewEntry(tenant="bench", session_id=f"s{i}", vector=vector / np.linalg.norm(vector),
                    tags={"intent_domain": "travel_planning", "active_entities": []}, answer_text="An answer. " * 40,
                    system_prompt_version="v", context_fingerprint="c", request_text="a question " * 20,
                    request_hash=uuid.uuid4().hex, answer_tokens=100)


def measure(store, rng: np.random.Generator, count: int, start: int) -> tuple[float, float, float, float]:
    entries = [entry(rng, start + i) for i in range(count)]
    cpu, wall = time.process_time(), time.perf_counter()
    for e in entries:
        store.write(e)
    write_cpu, write_wall = time.process_time() - cpu, time.perf_counter() - wall
    cpu, wall = time.process_time(), time.perf_counter()
    promoted = store.promote_due()
    promote_cpu, promote_wall = time.process_time() - cpu, time.perf_counter() - wall
    n = max(1, len(promoted))
    return 1000 * write_cpu / count, 1000 * write_wall / count, 1000 * promote_cpu / n, 1000 * promote_wall / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    redis_url = services.redis_url()
    services.pg_admin_url()
    rng = np.random.default_rng(0)
    with services.throwaway_database("semcache_store_ops_") as database, tempfile.TemporaryDirectory() as data:
        store = open_store(database, redis_url, Path(data), StoreConfig(ready_delay_s=0.0, index_dir=Path(data) / "i"),
                           migrate=True, redis_prefix="semcache-bench-" + uuid.uuid4().hex[:8])
        try:
            measure(store, rng, 30, 0)                      # warm-up: connections, statement caches
            print(f"{args.entries} entries per round; ms per entry")
            print("round  write CPU  write wall  promote CPU  promote wall")
            for r in range(args.rounds):
                w_cpu, w_wall, p_cpu, p_wall = measure(store, rng, args.entries, 1000 * (r + 1))
                print(f"{r + 1:5d} {w_cpu:10.3f} {w_wall:11.3f} {p_cpu:12.3f} {p_wall:13.3f}")
        finally:
            store.close()


if __name__ == "__main__":
    main()
