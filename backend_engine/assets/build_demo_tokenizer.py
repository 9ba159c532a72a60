"""Rebuild the demo model's byte-level BPE tokenizer (checked in under demo_tokenizer/).

    python backend_engine/assets/build_demo_tokenizer.py

Deterministic: a fixed bilingual corpus, a fixed vocabulary size. The demo
model's text is meaningless; the tokenizer only has to cover any input
(byte-level) and carry a ChatML chat template.
"""
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

OUT = Path(__file__).parent / "demo_tokenizer"
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
CORPUS = [
    "You are a helpful assistant. Answer the user's question briefly and accurately.",
    "Plan a three day trip to Paris with a budget of 8000 dollars, including museums and food.",
    "Change the budget to 10k and remove the museums. Add a day trip to Versailles.",
    "My order has not arrived. How do I request a refund? What are your customer service hours?",
    "How do I reverse a list in Python? Use slicing, reversed(), or list.reverse().",
    "def add(a, b):\n    return a + b\n\nprint(add(2, 3))",
    "Rewrite this paragraph in a formal tone and keep it under 100 words.",
    "The capital of France is Paris. The capital of Japan is Tokyo.",
    "帮我规划一个三天两晚的北京行程，预算八千元，去掉博物馆。",
    "我的订单还没到，怎么申请退款？客服的工作时间是几点？",
    "把预算改成一万二，再加上长城一日游。重新开始。忘了之前的吧。",
    "请把这段话改写得更正式一些，不超过一百字。",
    "0123456789 10 100 1000 2026-11-29 12:30 $8,000 ¥8000 3.14 50% 8k",
]


def main() -> None:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=2048, special_tokens=SPECIAL, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS * 20, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|im_start|>", eos_token="<|im_end|>",
                                   unk_token="<|endoftext|>", pad_token="<|endoftext|>")
    fast.chat_template = CHAT_TEMPLATE
    OUT.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(OUT)
    print(f"wrote {OUT} (vocab {tok.get_vocab_size()})")


if __name__ == "__main__":
    main()
