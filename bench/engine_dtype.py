"""The engine in float32 against bfloat16 (`EngineConfig.dtype`), side by side in one run: SmolLM2 greedy
decoding of one request alone and of a batch of requests at once, without speculation, so the cost of bf16's
exact attention rows under batching shows (docs/engine.md, "Compute dtype").

    python bench/engine_dtype.py [--batch 16] [--max-tokens 64]

Prints decode tokens/s per dtype and the bf16/fp32 ratios, and how many requests gave the same tokens in both
(bf16 and fp32 answers may part after some tokens). bf16 runs only where `auto` would choose it. It asserts
nothing.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend_engine import EngineConfig, LLMEngine  # noqa: E402
from backend_engine.dtype_choice import choose_dtype  # noqa: E402
from backend_engine.loader import load_model  # noqa: E402
from backend_engine.sampling import SamplingParams  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from speculative import sharegpt_prompts  # noqa: E402


def decode(dtype: str, prompts: list[str], max_tokens: int) -> tuple[float, list[list[int]]]:
    """Decode tokens/s of `prompts` generated together, and their tokens."""
    loaded = load_model("smollm2", 2048, None)
    engine = LLMEngine(EngineConfig(model="smollm2", num_blocks=512, max_model_len=2048, speculative="off",
                                    dtype=dtype), loaded=loaded)
    seqs = [engine.add_request(f"r{i}", engine.apply_chat_template([{"role": "user", "content": p}]),
                               SamplingParams(max_tokens=max_tokens, temperature=0, ignore_eos=True))
            for i, p in enumerate(prompts)]
    while any(not s.num_output_tokens for s in seqs):        # prefill, not counted
        engine.step()
    started, before = time.perf_counter(), sum(s.num_output_tokens for s in seqs)
    while not all(s.is_finished for s in seqs):
        engine.step()
    seconds = time.perf_counter() - started
    return (sum(s.num_output_tokens for s in seqs) - before) / seconds, [s.output_token_ids for s in seqs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--max-tokens", type=int, default=64)
    args = parser.parse_args()
    import torch
    if choose_dtype("auto") is not torch.bfloat16:
        print("auto chooses float32 on this CPU: nothing to compare")
        return
    prompts = sharegpt_prompts(args.batch)
    rows = []
    for label, batch in (("1 request", prompts[:1]), (f"{args.batch} requests", prompts)):
        fp32, fp32_tokens = decode("float32", batch, args.max_tokens)
        bf16, bf16_tokens = decode("bfloat16", batch, args.max_tokens)
        same = sum(a == b for a, b in zip(fp32_tokens, bf16_tokens))
        rows.append((label, fp32, bf16, same, len(batch)))
    print(f"\nSmolLM2-135M-Instruct, greedy, {args.max_tokens} tokens each, no speculation\n")
    print(f"{'batch':<14} {'fp32 tok/s':>10} {'bf16 tok/s':>10} {'ratio':>6} {'same tokens':>11}")
    for label, fp32, bf16, same, n in rows:
        print(f"{label:<14} {fp32:>10.1f} {bf16:>10.1f} {bf16 / fp32:>5.2f}x {same:>7}/{n}")


if __name__ == "__main__":
    main()
