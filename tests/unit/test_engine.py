"""Engine behaviour on the demo model: exact incremental prefill, chunking, sharing, preemption, sampling."""
import pytest

from backend_engine import EngineConfig, LLMEngine, PromptTooLong, SamplingParams
from backend_engine.loader import load_model

GREEDY = SamplingParams(max_tokens=24, temperature=0, ignore_eos=True)


@pytest.fixture(scope="module")
def demo():
    return load_model("demo", max_model_len=1024)


def make_engine(demo, **kw):
    cfg = dict(model="demo", num_blocks=128, max_model_len=1024)
    cfg.update(kw)
    return LLMEngine(EngineConfig(**cfg), demo)


def conversation(engine):
    system = {"role": "system", "content": "You are a travel assistant. " * 8}
    turn1 = [system, {"role": "user", "content": "Plan a three day trip to Paris with a budget of 8000 dollars."}]
    return turn1


def test_turn_two_reuses_the_prefix_and_matches_a_fresh_engine(demo):
    engine = make_engine(demo)
    turn1 = conversation(engine)
    first = engine.generate([engine.apply_chat_template(turn1)], GREEDY)[0]
    turn2 = turn1 + [{"role": "assistant", "content": first["text"]},
                     {"role": "user", "content": "Change the budget to 10k and remove the museums."}]
    prompt2 = engine.apply_chat_template(turn2)
    warm = engine.generate([prompt2], GREEDY)[0]
    cold = make_engine(demo, enable_prefix_caching=False).generate([prompt2], GREEDY)[0]
    assert warm["token_ids"] == cold["token_ids"]
    assert cold["cached_tokens"] == 0
    history = engine.apply_chat_template(turn1)
    shared = 0
    for a, b in zip(history + first["token_ids"], prompt2):
        if a != b:
            break
        shared += 1
    assert warm["cached_tokens"] >= (shared // 16) * 16 > 0
    assert warm["cached_tokens"] < len(prompt2)


def test_demo_answers_come_back_as_the_tokens_generated(demo):
    """A quoted answer re-tokenizes to the tokens that were generated, so its KV is found next turn."""
    engine = make_engine(demo, num_blocks=256)
    suppressed = set(demo.config.suppress_token_ids)
    assert 0 < len(suppressed) < len(demo.tokenizer) - 50
    turn1 = [{"role": "user", "content": "Plan a three day trip to Paris with a budget of 8000 dollars."}]
    for seed in range(4):
        prompt = engine.apply_chat_template(turn1)
        out = engine.generate([prompt], SamplingParams(max_tokens=48, temperature=1.0, seed=seed))[0]
        assert out["token_ids"] and not suppressed & set(out["token_ids"])
        turn2 = turn1 + [{"role": "assistant", "content": out["text"]}, {"role": "user", "content": "Why?"}]
        generated = [t for t in out["token_ids"] if t != demo.tokenizer.eos_token_id]
        assert engine.apply_chat_template(turn2)[:len(prompt) + len(generated)] == prompt + generated
        again = engine.generate([engine.apply_chat_template(turn2)], GREEDY)[0]
        assert again["cached_tokens"] == (len(prompt) + len(out["token_ids"]) - 1) // 16 * 16


def test_chunked_prefill_gives_the_same_tokens(demo):
    prompt = make_engine(demo).apply_chat_template(conversation(None))
    whole = make_engine(demo).generate([prompt], GREEDY)[0]
    chunked = make_engine(demo, max_num_batched_tokens=16).generate([prompt], GREEDY)[0]
    assert len(prompt) > 32 and whole["token_ids"] == chunked["token_ids"]


def test_concurrent_requests_share_system_prompt_blocks(demo):
    engine = make_engine(demo)
    system = {"role": "system", "content": "You are a support agent for an online shop. " * 6}
    p1 = engine.apply_chat_template([system, {"role": "user", "content": "Where is my order?"}])
    p2 = engine.apply_chat_template([system, {"role": "user", "content": "How do I get a refund?"}])
    a = engine.add_request("a", p1, SamplingParams(max_tokens=8, temperature=0, ignore_eos=True))
    engine.step()                                   # a's prompt is computed and its blocks published
    b = engine.add_request("b", p2, SamplingParams(max_tokens=8, temperature=0, ignore_eos=True))
    engine.step()
    assert not a.is_finished and not b.is_finished
    shared = b.num_cached_tokens // 16
    assert shared >= 4
    assert a.block_table[:shared] == b.block_table[:shared]
    physical = set(a.block_table) | set(b.block_table)
    assert engine.block_manager.num_used == len(physical) == len(a.block_table) + len(b.block_table) - shared
    while engine.has_work():
        engine.step()
    assert engine.block_manager.num_used == 0                    # nothing leaked
    assert all(block.ref_count == 0 for block in engine.block_manager.blocks)


def test_preemption_by_recompute_keeps_outputs_exact(demo):
    prompts = [make_engine(demo).apply_chat_template([{"role": "user", "content": f"Question number {i}: " + "why? " * 12}])
               for i in range(4)]
    params = SamplingParams(max_tokens=40, temperature=0, ignore_eos=True)
    roomy = make_engine(demo).generate(prompts, params)
    tight_engine = make_engine(demo, num_blocks=12)
    tight = tight_engine.generate(prompts, params)
    assert tight_engine.scheduler.num_preemptions > 0
    assert [r["token_ids"] for r in tight] == [r["token_ids"] for r in roomy]
    assert tight_engine.block_manager.num_used == 0


def test_prompt_that_never_fits_is_rejected(demo):
    engine = make_engine(demo, num_blocks=4, max_model_len=1024)
    with pytest.raises(PromptTooLong):
        engine.add_request("x", list(range(5, 5 + 64)), SamplingParams())
    with pytest.raises(PromptTooLong):
        engine.add_request("y", [], SamplingParams())


def test_seeded_sampling_is_reproducible_and_stop_strings_cut(demo):
    engine = make_engine(demo)
    prompt = engine.apply_chat_template([{"role": "user", "content": "tell me something"}])
    p = SamplingParams(max_tokens=20, temperature=1.0, top_p=0.9, top_k=50, seed=7, ignore_eos=True)
    a = engine.generate([prompt], p)[0]
    b = engine.generate([prompt], p)[0]
    assert a["token_ids"] == b["token_ids"]
    greedy = engine.generate([prompt], GREEDY)[0]["text"]
    stop = greedy[3:6]
    cut = engine.generate([prompt], SamplingParams(max_tokens=24, temperature=0, ignore_eos=True, stop=[stop]))[0]
    assert cut["finish_reason"] == "stop"
    assert cut["text"] == greedy[:greedy.find(stop)]


def test_max_tokens_gives_finish_reason_length(demo):
    engine = make_engine(demo)
    out = engine.generate([[10, 11, 12]], SamplingParams(max_tokens=5, temperature=0, ignore_eos=True))[0]
    assert out["finish_reason"] == "length" and len(out["token_ids"]) == 5


def test_forced_output_replays_a_given_answer_at_full_cost(demo):
    engine = make_engine(demo)
    prompt = engine.apply_chat_template([{"role": "user", "content": "plan a trip"}])
    answer = "Day 1: Gion. Day 2: Arashiyama. Total 1850 dollars."
    ids = engine.tokenizer.encode(answer, add_special_tokens=False)
    out = engine.generate([prompt], SamplingParams(max_tokens=200, forced_text=answer, forced_token_ids=ids))[0]
    assert out["text"] == answer and out["finish_reason"] == "stop" and out["token_ids"] == ids
    cut = engine.generate([prompt], SamplingParams(max_tokens=4, forced_text=answer, forced_token_ids=ids))[0]
    assert cut["finish_reason"] == "length" and cut["token_ids"] == ids[:4]


def test_internal_fields_need_a_trusted_caller():
    from backend_engine.protocol import OpenAIError, parse_chat
    body = b'{"messages": [{"role": "user", "content": "hi"}], "forced_output": "x"}'
    with pytest.raises(OpenAIError) as exc:
        parse_chat(body)
    assert exc.value.status == 403 and exc.value.code == "internal_field" and exc.value.param == "forced_output"
    with pytest.raises(OpenAIError):
        parse_chat(b'{"messages": [{"role": "user", "content": "hi"}], "cache_salt": "acme"}', "globex")
    assert parse_chat(body, trusted=True).params.forced_text == "x"
    assert parse_chat(b'{"messages": [{"role": "user", "content": "hi"}]}', "globex").cache_salt == "globex"


@pytest.mark.parametrize("raw, param", [
    (b'{"key": "short", "draft": "x"}', "key"),
    (b'{"key": "has spaces in it", "draft": "x"}', "key"),
    (b'{"key": "' + b"k" * 65 + b'", "draft": "x"}', "key"),
    (b'{"key": "good-key-01", "draft": ""}', "draft"),
    (b'{"key": "good-key-01", "draft": 7}', "draft"),
    (b'{"key": "good-key-01", "draft": "' + b"d" * 64_001 + b'"}', "draft"),
    (b'[1, 2]', None),
])
def test_a_late_draft_is_checked_like_any_input(raw, param):
    from backend_engine.protocol import OpenAIError, parse_chat, parse_late_draft
    with pytest.raises(OpenAIError) as exc:
        parse_late_draft(raw)
    assert exc.value.status == 400 and (param is None or exc.value.param == param)
    assert parse_late_draft(b'{"key": "good-key-01", "draft": "Day 1"}') == ("good-key-01", "Day 1")
    chat = b'{"messages": [{"role": "user", "content": "hi"}], "semcache": {"draft_key": "%s"}}'
    assert parse_chat(chat % b"good-key-01").params.draft_key == "good-key-01"
    with pytest.raises(OpenAIError) as exc:
        parse_chat(chat % b"no")
    assert exc.value.status == 400 and exc.value.param == "semcache.draft_key"


def test_the_engine_steps_with_its_own_thread_count_and_leaves_other_threads_theirs(demo):
    """`threads`: torch keeps its count per OS thread, so the thread that runs the steps takes the engine's
    and a thread beside it (the gateway's encoder, in one process) keeps its own."""
    import threading

    import torch
    with pytest.raises(ValueError, match="threads"):
        EngineConfig(model="demo", threads=0)
    engine = make_engine(demo, threads=1)
    seen = {}

    def steps():
        torch.set_num_threads(2)
        engine.generate([[1, 2, 3, 4]], GREEDY)
        seen["stepping thread"] = torch.get_num_threads()
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        worker = threading.Thread(target=steps)
        worker.start()
        worker.join()
        assert seen == {"stepping thread": 1} and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
