"""INT8 cold blocks in the engine: demotion, protected system prompt, exact greedy tokens, memory."""
import pytest
import torch

from backend_engine import EngineConfig, LLMEngine, SamplingParams
from backend_engine.loader import load_model

GREEDY = SamplingParams(max_tokens=12, temperature=0, ignore_eos=True)


@pytest.fixture(scope="module")
def demo():
    return load_model("demo", max_model_len=1024)


def conversation_tokens(engine: LLMEngine, int8: bool):
    system = {"role": "system", "content": "You are a concise travel planner for a small agency. " * 3}
    turn1 = [system, {"role": "user", "content": "Plan three days in Lisbon on a budget of 2000 euros."}]
    p1 = engine.apply_chat_template(turn1)
    protected = engine.protected_prefix_len(turn1, p1)
    first = engine.generate([p1], GREEDY, protected_tokens=protected)[0]
    turn2 = turn1 + [{"role": "assistant", "content": first["text"]},
                     {"role": "user", "content": "Now remove the museums and add a day trip to Sintra."}]
    p2 = engine.apply_chat_template(turn2)
    second = engine.generate([p2], GREEDY, protected_tokens=engine.protected_prefix_len(turn2, p2))[0]
    return protected, first, second


def test_greedy_tokens_unchanged_with_int8_cold_blocks(demo):
    full = LLMEngine(EngineConfig(model="demo", num_blocks=64, max_model_len=1024), demo)
    int8 = LLMEngine(EngineConfig(model="demo", num_blocks=64, max_model_len=1024, kv_cold_dtype="int8"), demo)
    _, f1, f2 = conversation_tokens(full, False)
    protected, i1, i2 = conversation_tokens(int8, True)
    bm = int8.block_manager
    assert bm.num_demotions > 0 and bm.num_cold_cached > 0
    assert i2["cached_tokens"] > protected + 16          # turn 2 read demoted (INT8) blocks too
    assert (f1["token_ids"], f2["token_ids"]) == (i1["token_ids"], i2["token_ids"])
    assert bm.num_used == 0                               # nothing leaked in the hot pool


def test_system_prompt_blocks_stay_full_precision(demo):
    engine = LLMEngine(EngineConfig(model="demo", num_blocks=64, max_model_len=1024, kv_cold_dtype="int8"), demo)
    protected, _, _ = conversation_tokens(engine, True)
    assert protected >= 32
    hot = [b for b in engine.block_manager.cached.values() if b.block_id < engine.block_manager.num_blocks]
    cold = [b for b in engine.block_manager.cached.values() if b.block_id >= engine.block_manager.num_blocks]
    assert {b.depth_tokens for b in hot} == {16 * (i + 1) for i in range(protected // 16)}
    assert all(b.depth_tokens > (protected // 16) * 16 for b in cold) and cold


def test_memory_saved_per_block(demo):
    engine = LLMEngine(EngineConfig(model="demo", num_blocks=8, max_model_len=1024, kv_cold_dtype="int8"), demo)
    # head_dim 32: 4 bytes per value hot in fp32 (2 in bf16) vs 1 byte + a 4-byte scale per 32 values cold
    hot = torch.finfo(engine.runner.kv_caches[0][0].dtype).bits // 8
    assert engine.cold_block_bytes / engine.hot_block_bytes == pytest.approx((32 + 4) / (hot * 32))
