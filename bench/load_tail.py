"""Where the half-load tail comes from: one gateway, the load bench's traffic paced at a fixed rate, the
client's latencies beside the gateway's own (its access log), and the decision stages of the slowest requests.

    python bench/load_tail.py [--workers 1] [--rate 50] [--duration 20] [--slowest 12]

It runs bench/load.py's fixed 20 ms upstream, storage (PostgreSQL + Redis when the tests' servers answer) and
traffic, with the gateway's access log at info level. Forwarded requests (MISS, PARTIAL, BYPASS) only. If the
gateway's p99 is close to the client's, the tail is inside the gateway, and the stages show where. It prints;
it asserts nothing.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load  # noqa: E402

FORWARDED = ("MISS", "PARTIAL", "BYPASS")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--rate", type=float, default=50.0, help="requests per second, paced")
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--slowest", type=int, default=12)
    args = parser.parse_args()
    upstream, up_url = load.start_upstream(20.0)
    log_path = Path(tempfile.mkdtemp(prefix="semcache-tail-")) / "gateway.log"
    try:
        with load.storage("auto") as (store_env, label), open(log_path, "w") as log:
            gateway, url = load.start_gateway(args.workers, up_url, store_env, log, log_level="info")
            try:
                chat = url + "/v1/chat/completions"
                traffic = load.Traffic(seed=args.workers)
                asyncio.run(load.closed_loop(chat, 64, 5.0, traffic))             # warm-up, not counted
                log.flush()
                mark = log_path.stat().st_size
                paced = asyncio.run(load.paced(chat, args.rate, args.duration, traffic, 64))
            finally:
                gateway.terminate()
                gateway.wait(timeout=30)
    finally:
        upstream.terminate()
        upstream.wait(timeout=10)
    client = [r.ms for r in paced if r.status == 200 and r.cache in FORWARDED]
    server = []
    with open(log_path) as f:
        f.seek(mark)
        for line in f:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("msg") == "request" and record.get("path", "").endswith("/chat/completions") \
                    and record.get("cache") in FORWARDED:
                server.append(record)
    server_ms = [r["duration_ms"] for r in server]
    print(f"{args.workers} worker(s), {args.rate:.0f} req/s paced for {args.duration:.0f} s, store: {label}")
    print(f"{'forwarded':>10} {'n':>5} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8}")
    for name, values in (("client", client), ("gateway", server_ms)):
        print(f"{name:>10} {len(values):>5} {load.percentile(values, 0.5):>8.1f} {load.percentile(values, 0.9):>8.1f} {load.percentile(values, 0.99):>8.1f}")
    print(f"slowest {args.slowest} in the gateway (ms; decision stages from the decision record):")
    for record in sorted(server, key=lambda r: r["duration_ms"])[-args.slowest:]:
        stages = (record.get("decision") or {}).get("timings_ms") or {}
        print(f"  {record['duration_ms']:7.1f} {record.get('cache'):>7} {record.get('reason', ''):<22} "
              + " ".join(f"{k} {v:.1f}" for k, v in stages.items()))


if __name__ == "__main__":
    main()
