"""The encoder batches texts that threads ask for at the same time: same vectors, fewer runs."""
import threading
from pathlib import Path

import numpy as np
import pytest

from fingerprint.encoder import TextEncoder, _length_groups
from tests.conftest import models_dir


@pytest.fixture(scope="module")
def encoder():
    # ONNX Runtime: its fp32 runs give the same vectors alone and in a batch (bf16: test_bf16_encoder.py)
    return TextEncoder("e5-small", backend="onnx", models_dir=Path(models_dir()), cache_size=64, threads=1)


def test_length_groups_bound_the_padding():
    lengths = [29, 30, 31, 60, 62, 10, 11, 29, 200]
    groups = _length_groups(lengths)
    assert sorted(r for g in groups for r in g) == list(range(len(lengths)))
    for group in groups:
        widest = max(lengths[r] for r in group)
        assert len(group) * widest <= 1.25 * sum(lengths[r] for r in group)


def test_concurrent_callers_get_their_own_vectors_from_shared_runs(encoder):
    texts = [f"How do I get started with topic number {i}? I have {i} hours a week." for i in range(24)]
    texts[5], texts[11] = "Short.", "A much longer sentence about gardening on a balcony in Lisbon " * 6
    alone = np.stack([encoder.encode([t])[0] for t in texts])
    encoder._cache.clear()
    runs = []
    real_run = encoder._session.run

    def counting_run(*args, **kwargs):
        runs.append(args[1]["input_ids"].shape[0])
        return real_run(*args, **kwargs)
    encoder._session.run = counting_run
    results: dict[int, np.ndarray] = {}
    barrier = threading.Barrier(len(texts))

    def ask(i):
        barrier.wait()
        results[i] = encoder.encode([texts[i]])[0]
    try:
        threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(texts))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        del encoder._session.run
    together = np.stack([results[i] for i in range(len(texts))])
    assert np.abs(together - alone).max() < 1e-5                 # batching changes float noise only
    assert sum(runs) == len(texts) and len(runs) < len(texts)     # some callers shared a run


def test_a_failed_run_reaches_every_caller_of_its_batch(encoder):
    def broken(*args, **kwargs):
        raise RuntimeError("onnx failed")
    encoder._session.run = broken
    try:
        with pytest.raises(RuntimeError, match="onnx failed"):
            encoder.encode(["this text was never encoded before 7f3a"])    # not cached: it runs
    finally:
        del encoder._session.run
    assert encoder.encode(["works again afterwards"]).shape == (1, encoder.dim)


def test_idle_work_runs_when_idle_and_is_dropped_under_load(encoder):
    import time

    from fingerprint import encoder as module
    done = []
    encoder._running = True                                       # busy: nothing idle may run
    try:
        for i in range(module.IDLE_QUEUE + 5):
            encoder.when_idle(lambda i=i: done.append(i))
        time.sleep(0.2)
        assert done == []
    finally:
        encoder._running = False
    deadline = time.monotonic() + 10
    while len(done) < module.IDLE_QUEUE and time.monotonic() < deadline:
        time.sleep(0.02)
    assert done == list(range(5, module.IDLE_QUEUE + 5))         # the oldest five were dropped, the rest ran
    encoder.when_idle(lambda: encoder.encode(["primed while idle 91c2"]))
    deadline = time.monotonic() + 10
    while "primed while idle 91c2" not in encoder._cache and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "primed while idle 91c2" in encoder._cache


def test_forget_makes_the_next_request_encode_again(encoder):
    kept, dropped = "kept text 5d1e", "dropped text 5d1e"
    encoder.encode([kept, dropped])
    runs = []
    real_run = encoder._session.run
    encoder._session.run = lambda *a, **k: runs.append(a[1]["input_ids"].shape[0]) or real_run(*a, **k)
    try:
        encoder.forget([dropped])
        encoder.encode([kept, dropped])
        assert runs == [1]                      # only the forgotten text was encoded again
        encoder.forget()
        encoder.encode([kept])
        assert runs == [1, 1]
    finally:
        encoder._session.run = real_run
