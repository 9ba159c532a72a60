"""Gateway overhead: a fixed-latency upstream called directly vs through `semcache serve`.

    python bench/gateway_overhead.py [--latency-ms 0 20] [--requests 400]

For each upstream latency it starts the fixed upstream and a gateway in front
of it (separate processes on loopback), then for concurrency 1 and 32 sends
the same chat request to both, interleaved round by round, and prints p50/p99
latency, the ratio and the overhead in ms. It asserts nothing.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
BODY = {"model": "fixed", "messages": [{"role": "user", "content": "How long does shipping to Lisbon take?"}],
        "max_tokens": 16}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args: list[str], url: str, env: dict | None = None) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, *args], cwd=ROOT, env={**os.environ, **(env or {})},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"{args} did not start")


class KeepAliveConnection:
    """A bare HTTP/1.1 keep-alive client: a load generator much lighter than httpx, so that on a
    2-core machine the client does not dominate what is measured."""

    def __init__(self, port: int, path: str):
        self.port = port
        payload = json.dumps(BODY).encode()
        self.request = (f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                        f"content-length: {len(payload)}\r\n\r\n").encode() + payload
        self.reader = self.writer = None

    async def post(self) -> None:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.write(self.request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        await self.reader.readexactly(length)
        if status != 200:
            raise RuntimeError(f"HTTP {status}")

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def measure(port: int, path: str, concurrency: int, requests: int) -> list[float]:
    latencies: list[float] = []
    remaining = [requests]
    connections = [KeepAliveConnection(port, path) for _ in range(concurrency)]

    async def worker(conn: KeepAliveConnection):
        while remaining[0] > 0:
            remaining[0] -= 1
            started = time.perf_counter()
            await conn.post()
            latencies.append(time.perf_counter() - started)

    await asyncio.gather(*(worker(c) for c in connections))
    for c in connections:
        c.close()
    return latencies


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] * 1000 if len(values) > 1 else values[0] * 1000


async def run(up_port: int, gw_port: int, concurrency: int, requests: int, rounds: int = 4):
    path = "/v1/chat/completions"
    await measure(up_port, path, concurrency, concurrency * 4)            # warm-up, not counted
    await measure(gw_port, path, concurrency, concurrency * 4)
    a, b = [], []
    for _ in range(rounds):                                               # interleaved: same conditions
        a += await measure(up_port, path, concurrency, requests // rounds)
        b += await measure(gw_port, path, concurrency, requests // rounds)
    return a, b


def bench_latency(latency_ms: float, requests: int) -> None:
    up_port, gw_port = free_port(), free_port()
    upstream = start(["bench/fixed_upstream.py", "--port", str(up_port), "--latency-ms", str(latency_ms)],
                     f"http://127.0.0.1:{up_port}/v1/models")
    gateway = start(["-m", "gateway.cli", "serve", "--port", str(gw_port), "--log-level", "warning",
                     "--backend-url", f"http://127.0.0.1:{up_port}"], f"http://127.0.0.1:{gw_port}/readyz")
    try:
        print(f"\nupstream latency {latency_ms:.0f} ms, {requests} requests per side per concurrency, "
              f"{os.cpu_count()} CPUs (client, gateway and upstream share them)")
        print(f"{'conc':>4} {'direct p50':>11} {'gw p50':>8} {'ratio':>6} {'overhead p50':>13} "
              f"{'direct p99':>11} {'gw p99':>8} {'ratio':>6} {'overhead p99':>13}")
        for concurrency in (1, 32):
            direct, via = asyncio.run(run(up_port, gw_port, concurrency, requests))
            d50, g50, d99, g99 = pct(direct, 50), pct(via, 50), pct(direct, 99), pct(via, 99)
            print(f"{concurrency:>4} {d50:>9.2f}ms {g50:>6.2f}ms {g50 / d50:>6.3f} {g50 - d50:>11.2f}ms "
                  f"{d99:>9.2f}ms {g99:>6.2f}ms {g99 / d99:>6.3f} {g99 - d99:>11.2f}ms")
    finally:
        for proc in (gateway, upstream):
            proc.terminate()
            proc.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency-ms", type=float, nargs="+", default=[0.0, 20.0])
    parser.add_argument("--requests", type=int, default=400)
    args = parser.parse_args()
    for latency in args.latency_ms:
        bench_latency(latency, args.requests)

if __name__ == "__main__":
    main()
