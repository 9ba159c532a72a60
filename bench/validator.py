"""Pair judge + key-fact validator latency on the CPU (the gates on the best hit candidate).

    python bench/validator.py [--n 200]

Three kinds of pair, timed side by side: a form-only edit (alignment settles it, no model), a changed
number (alignment vetoes it, no model), and a paraphrase (the pair model runs). Each line is the judge
plus the key-fact validator. It asserts nothing.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fingerprint.encoder import default_data_dir, resolve_encoder_dir  # noqa: E402
from validator import KeyFactExtractor, KeyFactValidator  # noqa: E402
from validator.pair_judge import PairJudge  # noqa: E402

CACHED = [{"role": "user", "content": "Plan 3 days in Rome, budget 3000 euros"},
          {"role": "assistant", "content": "Day 1: Colosseum. Total 2800 euros."}]
PROBES = {"form only (alignment)": "plan 3 days in rome, budget 3000 euros, please!",
          "number changed (veto)": "Plan 3 days in Rome, budget 2000 euros",
          "paraphrase (model)": "Could you put together a three-day Rome itinerary for about 3000 euros?"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=200)
    args = parser.parse_args()
    models = default_data_dir() / "models"
    judge = PairJudge.prepared(resolve_encoder_dir("e5-small", models_dir=models)[0], models)
    validator, facts = KeyFactValidator(), KeyFactExtractor().for_entry(CACHED[:1], CACHED[1]["content"])
    results = {}
    for name, text in PROBES.items():
        new = [{"role": "user", "content": text}]
        judge.judge(new, CACHED)
        latencies = []
        for _ in range(args.n):
            started = time.perf_counter()
            verdict = judge.judge(new, CACHED)
            validator.check(new, facts)
            latencies.append((time.perf_counter() - started) * 1e3)
        results[name] = (statistics.median(latencies), statistics.quantiles(latencies, n=100)[98], verdict)
    base = results["paraphrase (model)"][0]
    for name, (p50, p99, verdict) in results.items():
        print(f"{name:24s} judge + validate p50 {p50:6.2f} ms  p99 {p99:6.2f} ms  ({p50 / base:.2f}x the model's p50)"
              f"  -> {verdict.label} by {verdict.by}")


if __name__ == "__main__":
    main()
