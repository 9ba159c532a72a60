"""KV tiers under the block pool: the store (capacity, ranking, checksums, restart), the recompute-or-load
rule, and the engine with tiers (spill, lookup across tiers, exact greedy tokens, loads off the step loop,
prefetch)."""
import threading
import time

import pytest
import torch

from backend_engine import EngineConfig, LLMEngine, SamplingParams
from backend_engine.kv_tiers import DISK, HOST, TierEntry, TierStore
from backend_engine.loader import load_model
from backend_engine.tier_cost import Rates, plan

GREEDY = SamplingParams(max_tokens=8, temperature=0, ignore_eos=True)
SHAPE = (1, 2, 4, 1, 32)                        # layers, K/V, block size, kv heads, head dim: 1 KiB in fp32


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def entry(h, parent=None, tokens=None, last_access=0.0, depth=4, protected=False):
    return TierEntry(h, parent, tokens or (h, h, h, h), depth, protected, "fp", last_access=last_access)


def data(seed):
    return torch.randn(*SHAPE, generator=torch.Generator().manual_seed(seed))


@pytest.fixture(scope="module")
def demo():
    return load_model("demo", max_model_len=1024)


# ---- the store -------------------------------------------------------------------
def test_host_overflow_moves_the_lowest_priority_block_to_disk(tmp_path):
    store = TierStore(2500, "fp", tmp_path, 10_000, "int4", policy="lru", clock=Clock())
    for h, t in ((1, 3.0), (2, 1.0), (3, 2.0)):        # block 2 was used longest ago
        assert store.put(entry(h, last_access=t), data(h))
    assert {h: e.tier for h, e in store.entries.items()} == {1: HOST, 2: DISK, 3: HOST}
    assert store.entries[2].dtype == "int4" and (tmp_path / f"{2:032x}.kvb").exists()
    assert store.tiers[HOST].used == 2 * 1024 and store.stats.moved_down == 1
    # reading it back from disk gives the INT4 data, within the INT4 bound of the original
    payload, dtype = store.read(store.entries[2])
    from backend_engine import kv_codec
    assert (kv_codec.decode(payload, dtype, torch.float32) - data(2)).abs().max() < 0.5
    assert store.stats.hits == {HOST: 0, DISK: 1}


def test_bottom_tier_drops_leaves_first_so_chains_go_tail_first(tmp_path):
    store = TierStore(0, "fp", tmp_path, 3 * 1400, "fp", policy="lru", clock=Clock())
    store.put(entry(10, last_access=1.0), data(1))            # parent: oldest, but it has a child
    store.put(entry(11, parent=10, last_access=5.0), data(2))
    store.put(entry(20, last_access=3.0), data(3))
    store.put(entry(30, last_access=4.0), data(4))             # over capacity: the oldest *leaf* (20) goes
    assert set(store.entries) == {10, 11, 30}
    store.put(entry(40, last_access=6.0), data(5))             # next: 30 (a leaf), never 10 under 11
    assert set(store.entries) == {10, 11, 40} and store.stats.dropped == 2
    assert not (tmp_path / f"{20:032x}.kvb").exists()


def test_lookup_compares_token_ids(tmp_path):
    store = TierStore(10_000, "fp")
    store.put(entry(7, tokens=(1, 2, 3, 4)), data(7))
    assert store.lookup(7, (1, 2, 3, 4)) is not None
    assert store.lookup(7, (1, 2, 3, 5)) is None               # same hash, other tokens: a collision
    assert store.lookup(8, (1, 2, 3, 4)) is None


def test_corrupt_files_are_skipped_counted_deleted_and_the_tier_survives_a_restart(tmp_path):
    store = TierStore(0, "fp", tmp_path, 100_000, "fp")
    for h in (1, 2, 3, 4):
        store.put(entry(h), data(h))
    files = {h: tmp_path / f"{h:032x}.kvb" for h in (1, 2, 3, 4)}
    raw = bytearray(files[2].read_bytes())
    raw[len(raw) // 2] ^= 0xFF                                  # a flipped bit in the payload
    files[2].write_bytes(bytes(raw))
    files[3].write_bytes(files[3].read_bytes()[:700])           # a torn write (short file)
    (tmp_path / f".{4:032x}.kvb.999.tmp").write_bytes(b"half")  # a crashed writer's temp file

    assert store.read(store.entries[2]) is None and store.num_corrupt == 1
    assert 2 not in store.entries and not files[2].exists()

    restarted = TierStore(0, "fp", tmp_path, 100_000, "fp")     # the index is rebuilt from the files
    assert set(restarted.entries) == {1, 3, 4}                  # 3's header is intact: found, checked on read
    assert restarted.read(restarted.entries[3]) is None and restarted.num_corrupt == 1
    payload, _ = restarted.read(restarted.entries[1])
    assert torch.equal(payload["x"], data(1))                   # intact blocks are served, bit for bit
    assert not list(tmp_path.glob("*.tmp"))


def test_protected_blocks_stay_full_precision_in_every_tier(tmp_path):
    store = TierStore(1100, "int8", tmp_path, 100_000, "int4", policy="lru", clock=Clock())
    store.put(entry(1, protected=True, last_access=1.0), data(1))
    store.put(entry(2, last_access=2.0), data(2))
    assert store.entries[1].tier == DISK and store.entries[1].dtype == "fp"
    assert store.entries[2].tier == HOST and store.entries[2].dtype == "int8"
    assert torch.equal(store.read(store.entries[1])[0]["x"], data(1))


# ---- the recompute-or-load rule ---------------------------------------------------------------
def test_cost_rule_loads_long_runs_and_recomputes_short_ones():
    rates = Rates(token_s=1e-4, attn_s=1e-8, byte_s={HOST: 1e-9, DISK: 1e-8}, fixed_s=5e-3)
    blocks = [TierEntry(i, None, (), 16, False, "int8", nbytes=100_000, tier=HOST) for i in range(32)]
    assert plan(blocks, 0, 16, rates) == 32                    # 512 tokens: 51 ms to compute, 8 ms to load
    assert plan(blocks[:2], 0, 16, rates) == 0                 # 32 tokens: 3 ms to compute, > 5 ms to load
    slow = [TierEntry(i, None, (), 16, False, "int4", nbytes=100_000, tier=DISK) for i in range(32)]
    rates.byte_s[DISK] = 1e-6                                   # a slow disk: 0.1 s per block
    assert plan(slow, 0, 16, rates) == 0
    # deep in a long context attention makes recomputing dearer: the same slow blocks are worth loading
    assert plan(slow[:4], 1_000_000, 16, rates) == 4
    assert plan(blocks[:2], 0, 16, rates, "load") == 2 and plan(blocks, 0, 16, rates, "recompute") == 0


def test_real_prefill_steps_correct_a_bad_start_up_measurement():
    true = Rates(token_s=1e-3, attn_s=1e-7)
    rates = Rates(token_s=1.5e-2, attn_s=1.5e-6)           # start-up read 15x too slow (a busy machine)
    for step in range(40):
        spans = [(step * 256, step * 256 + 256)]
        rates.observe_prefill(spans, sum(true.recompute(a, b) for a, b in spans))
    assert rates.token_s == pytest.approx(true.token_s, rel=0.05)
    assert rates.attn_s == pytest.approx(true.attn_s, rel=0.05)
    for _ in range(40):
        rates.observe_load(DISK, 100_000, 0.05)              # 2 MB/s, against 100 MB/s measured at start-up
    assert rates.byte_s[DISK] == pytest.approx(5e-7, rel=0.05)


# ---- the engine -------------------------------------------------------------------------------
def prompts(n, length, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(100, 500, (length,), generator=g).tolist() for _ in range(n)]


def run_sessions(engine, sessions):
    return [engine.generate([p], GREEDY)[0] for p in sessions]


def test_evicted_sessions_come_back_from_host_and_disk_with_identical_tokens(demo, tmp_path):
    sessions = prompts(6, 100)
    plain = LLMEngine(EngineConfig(model="demo", num_blocks=16, max_model_len=1024, kv_host_tier=0), demo)
    assert plain.tiers is None
    tiered = LLMEngine(EngineConfig(model="demo", num_blocks=16, max_model_len=1024, kv_host_tier=40_000,
                                    kv_host_dtype="fp", kv_disk_dtype="fp", data_dir=str(tmp_path),
                                    kv_disk_tier=10**7, kv_tier_policy="load"), demo)
    run_sessions(plain, sessions)
    run_sessions(tiered, sessions)                               # 6 x 7 blocks through a 16-block pool
    store = tiered.tiers.store
    assert store.stats.stored > 0 and store.stats.moved_down > 0
    again_plain = run_sessions(plain, sessions)
    again = run_sessions(tiered, sessions)
    assert [r["token_ids"] for r in again] == [r["token_ids"] for r in again_plain]
    assert [r["cached_tokens"] for r in again] == [96] * 6       # whole prefixes, back from the tiers
    assert [r["cached_tokens"] for r in again_plain][:4] == [0] * 4
    assert store.stats.hits[HOST] > 0 and store.stats.hits[DISK] > 0
    assert tiered.tiers.counters.loaded_blocks >= 6 * 6 - 16
    assert tiered.block_manager.num_used == 0 and not tiered.tiers.in_flight
    tiered.close()


def chat(engine, system_repeat=3):
    system = {"role": "system", "content": "You are a concise travel planner for a small agency. " * system_repeat}
    turn1 = [system, {"role": "user", "content": "Plan three days in Lisbon on a budget of 2000 euros."}]
    p1 = engine.apply_chat_template(turn1)
    first = engine.generate([p1], GREEDY, protected_tokens=engine.protected_prefix_len(turn1, p1))[0]
    turn2 = turn1 + [{"role": "assistant", "content": first["text"]},
                     {"role": "user", "content": "Now remove the museums and add a day trip to Sintra."}]
    p2 = engine.apply_chat_template(turn2)
    return p1, p2, first


@pytest.mark.parametrize("dtype", ["fp", "int8", "int4"])
def test_greedy_tokens_of_a_returning_conversation_with_quantized_tiers(demo, tmp_path, dtype):
    """fp: identical by construction. INT8/INT4: the stated bound keeps this short generation identical."""
    ref = LLMEngine(EngineConfig(model="demo", num_blocks=64, max_model_len=1024, kv_host_tier=0), demo)
    p1, p2, _ = chat(ref)
    expected = ref.generate([p2], GREEDY)[0]["token_ids"]
    engine = LLMEngine(EngineConfig(model="demo", num_blocks=32, max_model_len=1024, kv_host_tier=10**7,
                                    kv_host_dtype=dtype, kv_tier_policy="load"), demo)
    chat(engine)
    for other in prompts(4, 400, seed=5):                        # other sessions push the conversation out
        engine.generate([other], SamplingParams(max_tokens=1, temperature=0))
    stored = {e.dtype for e in engine.tiers.store.entries.values()}
    assert dtype in stored and "fp" in stored                     # system-prompt blocks stay full precision
    got = engine.generate([p2], GREEDY)[0]
    assert got["cached_tokens"] >= 96 and engine.tiers.counters.loaded_blocks > 0
    assert got["token_ids"] == expected
    engine.close()


def test_a_sequence_waiting_for_its_load_does_not_hold_up_others(demo):
    engine = LLMEngine(EngineConfig(model="demo", num_blocks=16, max_model_len=1024, kv_host_tier=10**7,
                                    kv_host_dtype="fp", kv_tier_policy="load"), demo)
    returning, other, filler = prompts(3, 100, seed=3)
    engine.generate([returning], GREEDY)
    engine.generate([filler], GREEDY)                             # evicts the returning session's blocks
    engine.generate([prompts(1, 120, seed=9)[0]], GREEDY)
    gate = threading.Event()
    read = engine.tiers.store.read
    engine.tiers.store.read = lambda e: (gate.wait(10), read(e))[1]    # the loader stalls on its first read
    a = engine.add_request("returning", returning, SamplingParams(**vars(GREEDY)))
    b = engine.add_request("other", other, SamplingParams(**vars(GREEDY)))
    for _ in range(3):
        engine.step()
    assert a.loading is not None and a.num_computed_tokens == 0
    assert b.num_computed_tokens > 0                              # the other request ran meanwhile
    gate.set()
    while not (a.is_finished and b.is_finished):
        engine.step()
    assert a.num_cached_tokens == 96
    engine.close()


def test_prefetch_brings_a_prefix_into_the_pool_before_the_request(demo):
    engine = LLMEngine(EngineConfig(model="demo", num_blocks=16, max_model_len=1024, kv_host_tier=10**7,
                                    kv_host_dtype="int8", kv_tier_policy="load"), demo)
    returning, f1, f2 = prompts(3, 100, seed=4)
    engine.generate([returning], GREEDY, cache_salt="acme")
    engine.generate([f1], GREEDY)
    engine.generate([f2], GREEDY)
    in_pool = len(engine.block_manager.match_prefix(
        engine.add_request("probe", returning, SamplingParams(max_tokens=1), cache_salt="acme")))
    engine.abort("probe")
    assert in_pool < 6
    assert engine.prefetch(returning, cache_salt="globex") == 0          # another tenant's salt: nothing
    assert engine.prefetch(returning, cache_salt="acme") == 6 - in_pool
    while engine.tiers.loader.in_flight:
        engine.tiers.loader.wait(0.1)
        engine.tiers.install_finished()
    assert engine.block_manager.num_used == 0                          # cached, unreferenced: nothing pinned
    jobs = engine.tiers.counters.load_jobs
    out = engine.generate([returning], GREEDY, cache_salt="acme")[0]
    assert out["cached_tokens"] == 96 and engine.tiers.counters.load_jobs == jobs   # no load left to do
    engine.close()


def test_prefetch_endpoint(demo):
    from litestar.testing import TestClient

    from backend_engine.server import create_app
    engine = LLMEngine(EngineConfig(model="demo", num_blocks=32, max_model_len=1024, kv_host_tier=10**7), demo)
    messages = [{"role": "user", "content": "hello there"}]
    with TestClient(create_app(engine, internal_token="tok")) as client:
        r = client.post("/v1/semcache/prefetch", json={"messages": messages})
        assert r.status_code == 202 and r.json()["status"] == "accepted"
        assert r.json()["prompt_tokens"] == len(engine.apply_chat_template(messages))
        r = client.post("/v1/semcache/prefetch", json={"prompt_token_ids": [1, 2, 3]},
                        headers={"X-Cache-Salt": "acme"})
        assert r.status_code == 202
        assert client.post("/v1/semcache/prefetch", json={"messages": messages, "cache_salt": "x"}).status_code == 403
        r = client.post("/v1/semcache/prefetch", json={"messages": messages, "cache_salt": "x"},
                        headers={"X-Semcache-Internal": "tok"})
        assert r.status_code == 202
        assert client.post("/v1/semcache/prefetch", json={}).status_code == 400
        for _ in range(50):                  # the hints are applied by the engine thread
            if "semcache_engine_kv_tier_prefetches_total 3.0" in client.get("/metrics").text:
                break
            time.sleep(0.05)
        else:
            raise AssertionError("prefetch hints were not applied")


def test_disk_tier_folder_is_per_model_identity(demo, tmp_path):
    def folder(**kw):
        engine = LLMEngine(EngineConfig(model="demo", num_blocks=16, max_model_len=1024, kv_host_tier=0,
                                        kv_disk_tier=10**7, data_dir=str(tmp_path), **kw), demo)
        engine.close()
        return engine.tiers.store.disk.dir
    a, b = folder(), folder(block_size=32)
    assert a.parent == b.parent == tmp_path / "kv_tier" and a != b and folder() == a
