"""The engine's own model code against transformers on tiny random checkpoints."""
import json
import shutil

import pytest
import torch
from transformers import AutoModelForCausalLM, LlamaConfig, MistralConfig, Qwen2Config

from backend_engine import EngineConfig, LLMEngine, SamplingParams
from backend_engine.loader import DEMO_TOKENIZER_DIR, load_model
from backend_engine.model import AttentionBatch

COMMON = dict(vocab_size=761, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
              eos_token_id=None, bos_token_id=None, pad_token_id=None)
CONFIGS = {
    "llama": lambda: LlamaConfig(**COMMON, tie_word_embeddings=False),
    "llama-tied-llama3-rope": lambda: LlamaConfig(**COMMON, tie_word_embeddings=True, rope_parameters={
        "rope_type": "llama3", "rope_theta": 10000.0, "factor": 4.0, "low_freq_factor": 1.0,
        "high_freq_factor": 4.0, "original_max_position_embeddings": 128}),
    "qwen2": lambda: Qwen2Config(**COMMON, tie_word_embeddings=True),
    "mistral-yarn-rope": lambda: MistralConfig(**COMMON, sliding_window=None, rope_parameters={
        "rope_type": "yarn", "rope_theta": 10000.0, "factor": 2.0, "original_max_position_embeddings": 256}),
}


def save_random_checkpoint(cfg, folder):
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() > 1 or "bias" in name:
                p.normal_(0, 0.3)       # peaked logits: greedy choices far from ties
    model.save_pretrained(folder)
    for f in DEMO_TOKENIZER_DIR.iterdir():
        shutil.copy(f, folder / f.name)
    return model.eval()


def engine_logits(loaded, ids):
    model = loaded.model
    block_size = 16
    nblocks = -(-len(ids) // block_size)
    cfg = loaded.config
    caches = [(torch.zeros(nblocks, block_size, cfg.num_kv_heads, cfg.head_dim),
               torch.zeros(nblocks, block_size, cfg.num_kv_heads, cfg.head_dim), None) for _ in range(cfg.num_layers)]
    batch = AttentionBatch(slot_mapping=torch.arange(len(ids)), block_tables=torch.arange(nblocks)[None].int(),
                           prefix_lens=torch.tensor([0]), extend_lens=torch.tensor([len(ids)]), is_decode=False)
    with torch.no_grad():
        hidden = model(torch.tensor(ids), torch.arange(len(ids)), batch, caches)
        return model.compute_logits(hidden)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_logits_and_greedy_tokens_match_transformers(name, tmp_path):
    hf = save_random_checkpoint(CONFIGS[name](), tmp_path)
    loaded = load_model(str(tmp_path), max_model_len=256)
    prompt = loaded.tokenizer.encode("Plan a three day trip to Paris with a budget of 8000 dollars.")
    with torch.no_grad():
        ref = hf(torch.tensor([prompt])).logits[0]
    torch.testing.assert_close(engine_logits(loaded, prompt), ref, atol=1e-4, rtol=1e-4)

    with torch.no_grad():
        expected = hf.generate(torch.tensor([prompt]), do_sample=False, max_new_tokens=32,
                               attention_mask=torch.ones(1, len(prompt), dtype=torch.long))[0, len(prompt):].tolist()
    engine = LLMEngine(EngineConfig(model=str(tmp_path), num_blocks=16, max_model_len=256, dtype="float32"), loaded)
    out = engine.generate([prompt], SamplingParams(max_tokens=32, temperature=0, ignore_eos=True))[0]
    assert len(expected) == 32
    assert out["token_ids"] == expected


@pytest.mark.parametrize("name", ["llama", "qwen2"])
def test_oneDNN_packed_weights_give_the_same_logits(name, tmp_path):
    """The CPU engine multiplies through oneDNN-packed weights (qwen2: with the q/k/v bias); its logits
    must stay those of transformers, for one row (decode) and many (prefill, draft verification)."""
    if not torch.backends.mkldnn.is_available():
        pytest.skip("torch built without oneDNN")
    hf = save_random_checkpoint(CONFIGS[name](), tmp_path)
    loaded = load_model(str(tmp_path), max_model_len=256)
    prompt = loaded.tokenizer.encode("Plan a three day trip to Paris with a budget of 8000 dollars.")
    assert loaded.model.pack_weights()
    assert loaded.model.layers[0].self_attn.qkv_proj.packed is not None
    with torch.no_grad():
        ref = hf(torch.tensor([prompt])).logits[0]
    packed = engine_logits(loaded, prompt)
    torch.testing.assert_close(packed, ref, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(engine_logits(loaded, prompt[:1]), ref[:1], atol=1e-4, rtol=1e-4)
    # passes of up to 2 rows through the dense weights, larger ones packed (matmul_choice.py)
    loaded.model.use_dense_rows(2)
    assert loaded.model.layers[0].mlp.down_proj.dense_rows == 2
    torch.testing.assert_close(engine_logits(loaded, prompt[:2]), ref[:2], atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(engine_logits(loaded, prompt), ref, atol=1e-4, rtol=1e-4)


def test_the_runner_measures_which_matmul_serves_few_rows(tmp_path, monkeypatch):
    """Dense serves a pass size only while it is clearly faster there and at every smaller size; the
    choice is made once per loaded model, so engines that share it compute alike; a config value wins."""
    from backend_engine import matmul_choice
    if not torch.backends.mkldnn.is_available():
        pytest.skip("torch built without oneDNN")
    save_random_checkpoint(CONFIGS["llama"](), tmp_path)
    loaded = load_model(str(tmp_path), max_model_len=256)
    assert loaded.model.pack_weights()

    def timings(table):
        monkeypatch.setattr(matmul_choice, "_pass_seconds", lambda model, rows, dense_rows:
                            table[rows][0 if dense_rows else 1])
    timings({1: (0.8, 1.0), 2: (0.9, 1.0), 4: (1.3, 1.1)})
    assert matmul_choice.choose_dense_rows(loaded.model) == 2 and loaded.model.dense_rows == 2
    timings({1: (0.98, 1.0), 2: (0.5, 1.0), 4: (0.5, 1.0)})       # within the noise margin at 1 row
    assert matmul_choice.choose_dense_rows(loaded.model) == 0
    timings({1: (1.5, 1.0), 2: (1.5, 1.0), 4: (1.5, 1.0)})
    assert matmul_choice.choose_dense_rows(loaded.model) == 0
    assert loaded.model.layers[1].self_attn.qkv_proj.dense_rows == 0

    monkeypatch.undo()
    fresh = load_model(str(tmp_path), max_model_len=256)
    LLMEngine(EngineConfig(model=str(tmp_path), num_blocks=16, max_model_len=256, dtype="float32", dense_rows=4), fresh)
    assert fresh.model.dense_rows == 4
    LLMEngine(EngineConfig(model=str(tmp_path), num_blocks=16, max_model_len=256, dtype="float32"), fresh)
    assert fresh.model.dense_rows == 4                    # chosen once: a second engine keeps it
    measured = load_model(str(tmp_path), max_model_len=256)
    LLMEngine(EngineConfig(model=str(tmp_path), num_blocks=16, max_model_len=256, dtype="float32"), measured)
    assert measured.model.dense_rows in matmul_choice.ROWS + (0,)


def test_generation_config_suppress_tokens_are_never_sampled(tmp_path):
    save_random_checkpoint(CONFIGS["llama"](), tmp_path)
    loaded = load_model(str(tmp_path), max_model_len=256)
    prompt = loaded.tokenizer.encode("Plan a three day trip to Paris.")
    engine = LLMEngine(EngineConfig(model=str(tmp_path), num_blocks=16, max_model_len=256, dtype="float32"), loaded)
    free = engine.generate([prompt], SamplingParams(max_tokens=16, temperature=0, ignore_eos=True))[0]["token_ids"]
    (tmp_path / "generation_config.json").write_text(json.dumps({"suppress_tokens": sorted(set(free))}))
    loaded = load_model(str(tmp_path), max_model_len=256)
    engine = LLMEngine(EngineConfig(model=str(tmp_path), num_blocks=16, max_model_len=256, dtype="float32"), loaded)
    for params in (SamplingParams(max_tokens=16, temperature=0, ignore_eos=True),
                   SamplingParams(max_tokens=16, temperature=1.0, seed=3, ignore_eos=True)):
        out = engine.generate([prompt], params)[0]["token_ids"]
        assert len(out) == 16 and not set(out) & set(free)


@pytest.mark.parametrize("ids", [[5, 10**9], [-1], ["7"], 3])
def test_suppress_tokens_outside_the_vocabulary_are_a_clear_error_at_load(tmp_path, ids):
    from backend_engine.loader import BadGenerationConfig
    save_random_checkpoint(CONFIGS["llama"](), tmp_path)
    (tmp_path / "generation_config.json").write_text(json.dumps({"suppress_tokens": ids}))
    with pytest.raises(BadGenerationConfig, match="suppress_tokens must be token ids"):
        load_model(str(tmp_path), max_model_len=256)


def test_chat_template_comes_from_the_tokenizer(tmp_path):
    save_random_checkpoint(CONFIGS["qwen2"](), tmp_path)
    loaded = load_model(str(tmp_path), max_model_len=256)
    engine = LLMEngine(EngineConfig(model=str(tmp_path), num_blocks=8, max_model_len=256, dtype="float32"), loaded)
    ids = engine.apply_chat_template([{"role": "user", "content": "hello"}])
    text = loaded.tokenizer.decode(ids, skip_special_tokens=False)
    assert text == "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n"
