"""The engine's tokenizer wrapper renders chat templates exactly as transformers does."""
import pytest
from transformers import AutoTokenizer

from backend_engine.loader import DEMO_TOKENIZER_DIR, default_data_dir
from backend_engine.tokenizer import ChatTemplateError, ChatTokenizer

CONVERSATIONS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "预算八千元，三天两晚"},
     {"role": "assistant", "content": "好的。"}, {"role": "user", "content": "去掉博物馆"}],
]


def folders():
    out = [DEMO_TOKENIZER_DIR]
    smol = default_data_dir() / "models" / "smollm2-135m-instruct"
    if (smol / "tokenizer.json").exists():
        out.append(smol)
    return out


@pytest.mark.parametrize("folder", folders(), ids=lambda f: f.name)
@pytest.mark.parametrize("messages", CONVERSATIONS)
def test_matches_transformers(folder, messages):
    ours = ChatTokenizer(folder)
    ref = AutoTokenizer.from_pretrained(str(folder))
    text = ours.apply_chat_template(messages)
    assert text == ref.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert ours.encode(text) == ref.encode(text, add_special_tokens=False)
    ids = ours.encode("Paris, 北京 and $8,000")
    assert ours.decode(ids) == ref.decode(ids, skip_special_tokens=True)
    assert ours.eos_token_id == ref.eos_token_id
    assert len(ours) == len(ref)


def test_template_errors_are_value_errors(tmp_path):
    for f in DEMO_TOKENIZER_DIR.iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    (tmp_path / "chat_template.jinja").write_text("{{ raise_exception('roles must alternate') }}")
    with pytest.raises(ChatTemplateError, match="alternate"):
        ChatTokenizer(tmp_path).apply_chat_template([{"role": "user", "content": "x"}])
