"""Index checkpoints shared by several gateway workers: concurrent savers never leave a torn or mixed set."""
import multiprocessing
import time
from pathlib import Path

import numpy as np

from gateway.index.hnsw import EntryTags, VectorIndex

DIM = 16


def build(labels: range, seed: int) -> VectorIndex:
    rng = np.random.default_rng(seed)
    index = VectorIndex(DIM, max_elements=64)
    vectors = rng.standard_normal((len(labels), DIM)).astype(np.float32)
    index.add_many(list(labels), vectors, [EntryTags("acme", f"s{seed}", "session", "general", "v1")] * len(labels))
    return index


def saver(folder: str, labels: tuple[int, int], seed: int, rounds: int) -> None:
    index = build(range(*labels), seed)
    for i in range(rounds):
        index.save(Path(folder), float(i))


def test_concurrent_savers_and_a_loader_see_whole_checkpoints(tmp_path):
    folder = tmp_path / "index"
    small, large = (1, 40), (100, 400)          # two workers whose indexes differ in size and labels
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=saver, args=(str(folder), labels, seed, 40))
             for labels, seed in ((small, 1), (large, 2))]
    for p in procs:
        p.start()
    loads = 0
    deadline = time.monotonic() + 60
    while any(p.is_alive() for p in procs) and time.monotonic() < deadline:
        index = VectorIndex.load(folder)
        if index is None:
            continue
        loads += 1
        live = sorted(index._live)
        assert live in (list(range(*small)), list(range(*large)))
        hits = index.search(index._index.get_items([live[0]])[0], 1)
        assert hits[0][0] == live[0]
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    assert VectorIndex.load(folder) is not None
    assert loads > 0
    assert not list(folder.glob("*.tmp"))       # every saver cleaned up after itself


def test_a_torn_checkpoint_is_not_loaded(tmp_path):
    folder = tmp_path / "index"
    build(range(1, 10), 1).save(folder, 1.0)
    build(range(50, 300), 2).save(tmp_path / "other", 2.0)
    (tmp_path / "other" / "index.bin").replace(folder / "index.bin")   # a crash between two renames
    assert VectorIndex.load(folder) is None
    build(range(1, 10), 1).save(folder, 3.0)
    loaded = VectorIndex.load(folder)
    assert loaded is not None and sorted(loaded._live) == list(range(1, 10)) and loaded.checkpoint_at == 3.0
