"""Fingerprint speed: per-request latency and throughput for 2-, 10- and 40-turn conversations.

    python bench/fingerprint.py [--requests 40]

For each backend (ONNX Runtime, sentence-transformers/torch) and conversation
length it measures the fingerprint of the conversation's latest request:
  cold    empty turn cache, every turn encoded;
  warm    the previous request was fingerprinted, the last answer was not
          (two encodings: the new user message and the answer);
  primed  as the gateway runs it: the answer was encoded when it was sent
          (Fingerprinter.prime), only the new user message is encoded.
It prints p50/p99 and fingerprints/s, and asserts nothing.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fingerprint import Fingerprinter, TextEncoder  # noqa: E402

USER = ["Plan a {n}-day trip to Lisbon for two with a budget of {b} euros.", "帮我把第{n}天改成去辛特拉，预算{b}元。",
        "Is the hotel near the tram line on day {n}, for {b} euros?", "那家餐厅第{n}天晚上需要预约吗？人均{b}元。"]
ASSISTANT = "Day {n}: morning in Alfama, lunch at a tasca, afternoon at the castle, dinner in Bairro Alto."


def conversation(turns: int, salt: int) -> list[dict]:
    messages = [{"role": "system", "content": "You are a meticulous travel planner. Answer with a day-by-day plan."}]
    for i in range(turns):
        messages.append({"role": "user", "content": USER[i % len(USER)].format(n=i + 1, b=1000 + 10 * salt + i)})
        if i < turns - 1:
            messages.append({"role": "assistant", "content": ASSISTANT.format(n=i + 1) + f" ({salt})"})
    return messages


def measure(fp: Fingerprinter, turns: int, requests: int, mode: str) -> list[float]:
    latencies = []
    for r in range(requests):
        conv = conversation(turns, salt=r + 100_000 * turns + {"cold": 0, "warm": 1000, "primed": 2000}[mode])
        if mode == "cold":
            fp.encoder.forget()
        else:
            # the previous request of this conversation: one user turn and one answer shorter
            fp.fingerprint(conv[:-2] if turns > 1 else conv)
            if mode == "primed":
                fp.prime(conv[:-1])
        started = time.perf_counter()
        fp.fingerprint(conv)
        latencies.append(time.perf_counter() - started)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=40)
    args = parser.parse_args()
    print(f"torch threads {torch.get_num_threads()}; latency of one request's fingerprint")
    print(f"{'backend':>8} {'turns':>5} {'cache':>6} {'p50 ms':>8} {'p99 ms':>8} {'fp/s':>7}")
    for backend in ("onnx", "torch"):
        fp = Fingerprinter(TextEncoder("e5-small", backend=backend))
        fp.fingerprint(conversation(2, salt=-1))                        # warm-up
        for turns in (2, 10, 40):
            for mode in ("cold", "warm", "primed"):
                lat = measure(fp, turns, args.requests if turns < 40 or mode != "cold" else max(args.requests // 4, 5),
                              mode)
                p50 = statistics.median(lat) * 1000
                p99 = statistics.quantiles(lat, n=100)[98] * 1000 if len(lat) > 2 else max(lat) * 1000
                print(f"{backend:>8} {turns:>5} {mode:>6} {p50:>8.1f} {p99:>8.1f} "
                      f"{1 / statistics.mean(lat):>7.1f}")


if __name__ == "__main__":
    main()
