"""Block pool logic: chained hashes, tenant salts, collisions, accounting and eviction order."""
import backend_engine.block_manager as bm_module
from backend_engine.block_manager import BlockManager, hash_block
from backend_engine.sampling import SamplingParams
from backend_engine.sequence import Sequence


class FakeClock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        self.t += 1.0
        return self.t


def run_sequence(bm: BlockManager, tokens: list[int], salt: str = "") -> Sequence:
    """Admit, compute every token, publish the blocks and finish: what the scheduler does for one request."""
    seq = Sequence(f"r{len(tokens)}-{tokens[:3]}", tokens, SamplingParams(), salt)
    ok, matched = bm.can_admit(seq, len(tokens))
    assert ok
    bm.admit(seq, matched)
    assert bm.ensure_slots(seq, seq.num_uncomputed_tokens)
    seq.num_computed_tokens = len(seq)
    bm.commit_full_blocks(seq)
    bm.free(seq)
    return seq


def test_hash_is_chained_and_salted():
    a = hash_block(None, (1, 2, 3, 4))
    assert a == hash_block(None, (1, 2, 3, 4))
    assert a != hash_block(None, (1, 2, 3, 5))
    assert hash_block(a, (5, 6, 7, 8)) != hash_block(None, (5, 6, 7, 8))
    assert a != hash_block(None, (1, 2, 3, 4), "tenant-b")


def test_prefix_hit_leaves_one_token_to_compute():
    bm = BlockManager(16, 4)
    run_sequence(bm, list(range(12)))
    again = Sequence("x", list(range(12)), SamplingParams())
    # 12 tokens = 3 full blocks, but the last block is recomputed so there are logits
    assert len(bm.match_prefix(again)) == 2
    longer = Sequence("y", list(range(13)), SamplingParams())
    assert len(bm.match_prefix(longer)) == 3


def test_tenants_never_share_blocks():
    bm = BlockManager(16, 4)
    run_sequence(bm, list(range(9)), salt="tenant-a")
    assert len(bm.match_prefix(Sequence("b", list(range(9)), SamplingParams(), "tenant-b"))) == 0
    assert len(bm.match_prefix(Sequence("a", list(range(9)), SamplingParams(), "tenant-a"))) == 2


def test_hash_collision_cannot_return_a_wrong_block(monkeypatch):
    monkeypatch.setattr(bm_module, "hash_block", lambda parent, tokens, extra="": 42)
    bm = BlockManager(16, 4)
    run_sequence(bm, [1, 2, 3, 4, 5])
    # same (colliding) hash, different tokens: the token comparison must reject it
    assert bm.match_prefix(Sequence("c", [9, 9, 9, 9, 5], SamplingParams())) == []
    assert len(bm.match_prefix(Sequence("d", [1, 2, 3, 4, 5], SamplingParams()))) == 1


def test_no_block_leaks_and_shared_blocks_are_refcounted():
    bm = BlockManager(8, 4)
    a = Sequence("a", list(range(10)), SamplingParams())
    ok, m = bm.can_admit(a, 10)
    bm.admit(a, m)
    bm.ensure_slots(a, 10)
    a.num_computed_tokens = 10
    bm.commit_full_blocks(a)
    b = Sequence("b", list(range(8)) + [77, 78, 79], SamplingParams())
    ok, m = bm.can_admit(b, 11)
    bm.admit(b, m)
    bm.ensure_slots(b, b.num_uncomputed_tokens)
    assert b.block_table[:2] == a.block_table[:2]               # the same physical blocks
    assert bm.num_used == len(set(a.block_table) | set(b.block_table)) == 4
    assert bm.blocks[a.block_table[0]].ref_count == 2
    bm.free(a)
    bm.free(b)
    assert bm.num_used == 0 and bm.num_free == 8
    assert all(block.ref_count == 0 for block in bm.blocks)


def test_chain_is_evicted_tail_first():
    bm = BlockManager(4, 4, clock=FakeClock())
    run_sequence(bm, list(range(13)))                            # 3 cached blocks + 1 empty
    chain = list(bm.cached)                                      # hashes, root first
    run_sequence(bm, [100 + i for i in range(9)])               # needs 3 blocks: 1 empty + 2 evicted
    assert chain[0] in bm.cached                                 # the root outlives its tail
    assert chain[1] not in bm.cached and chain[2] not in bm.cached


def shared_prompt_scenario(policy: str) -> int:
    """Many sessions share a system prompt; then one long session; then memory pressure."""
    bm = BlockManager(12, 4, policy=policy, clock=FakeClock())
    system = list(range(1000, 1008))                             # 2 blocks
    for s in range(5):
        run_sequence(bm, system + [2000 + 10 * s + i for i in range(4)] + [1])
    run_sequence(bm, [3000 + i for i in range(25)])             # one long single-session tail: 6 blocks
    run_sequence(bm, [4000 + i for i in range(25)])             # pressure: 6 more blocks
    new_session = Sequence("n", system + [5000, 5001, 5002], SamplingParams())
    return len(bm.match_prefix(new_session)) * 4


def test_cost_model_keeps_a_shared_system_prompt_that_lru_evicts():
    assert shared_prompt_scenario("cost") == 8
    assert shared_prompt_scenario("lru") == 0


def test_demotion_moves_cached_blocks_to_the_cold_pool():
    bm = BlockManager(6, 4, clock=FakeClock(), num_cold_blocks=3)
    seq = Sequence("a", list(range(13)), SamplingParams(), num_protected_tokens=4)
    ok, m = bm.can_admit(seq, 13)
    bm.admit(seq, m)
    bm.ensure_slots(seq, 13)
    seq.num_computed_tokens = 13
    bm.commit_full_blocks(seq)
    bm.free(seq)
    demotions = bm.take_demotions()
    assert len(demotions) == 2                               # blocks 2 and 3; block 1 is protected
    assert bm.num_used == 0 and bm.num_free == 6             # hot blocks came back at once
    chain = bm.match_prefix(Sequence("b", list(range(13)), SamplingParams()))
    assert [b.block_id >= 6 for b in chain] == [False, True, True]
    assert chain[1].parent is chain[0] and chain[2].parent is chain[1]
    # a second chain fills the cold pool: cold leaves are evicted to make room, tail first
    run_sequence(bm, [50 + i for i in range(13)])
    assert bm.num_cold_cached == 3
    assert len(bm.match_prefix(Sequence("c", list(range(13)), SamplingParams()))) >= 1
