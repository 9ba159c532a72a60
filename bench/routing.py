"""Routing bench: three bundled backends (demo model), each its own `semcache backend` process, behind one
`semcache serve`, under cache affinity and under round-robin, side by side in one run.

    python bench/routing.py [--sessions 60] [--turns 6] [--concurrency 8] [--seed 3] [--num-blocks 1024]
                            [--max-tokens 128] [--kv-tiers off on]

Per KV tier setting, pool size and policy it starts three fresh backends and a fresh gateway (SEMCACHE_BACKENDS, cache
mode off: every turn is forwarded, so what is measured is where it lands), then runs `--sessions`
conversations of `--turns` turns at `--concurrency`, all conversations open at once (a conversation's next
turn, carrying the earlier answers, queues behind the other sessions' turns, as users pause between turns),
streamed with usage, and reports the prefix-reuse share (the backends' cached_tokens over prompt tokens) and P50/P95
time to first token.

A third run, affinity with a failure: a third of the way in, one backend is killed (SIGKILL); at two
thirds it is started again on the same port. It reports the requests that failed before their stream
started (target 0; a stream has started once its status line reached the client), those that broke
while streaming (allowed: never retried), where the dead backend's
sessions went (from the gateway's access log, which names each request's replica), and whether the
restarted backend served again. It prints tables; it asserts nothing.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from gateway.replay.runner import percentile  # noqa: E402
from load import free_port, wait_http  # noqa: E402  (bench/load.py: the same process helpers)

TOPICS = ["sourdough", "tax forms", "a garden shed", "a job interview", "bird migration", "unit tests",
          "a wedding toast", "knee pain", "solar panels", "a road trip", "sleep schedules", "chess endgames"]
# a conversation opens with its user's own details: sessions share no prefix beyond the chat template
TURNS = ["I am {n}, I live in {c} and I want to know about {t}. Where do I start?", "What should I do first about {t}?",
         "Give me a second idea, different from the first.", "How long would that take for someone like me?",
         "What could go wrong, and how do I avoid it?", "Summarise the plan in three short steps."]
CITIES = ["Lisbon", "Oslo", "Nairobi", "Osaka", "Lima", "Austin", "Krakow", "Hanoi", "Porto", "Quebec"]
ADMIN = "bench-admin-token"


@dataclass(frozen=True)
class Shape:
    """What every backend of a run gets: its KV pool, its KV tiers, and how long its answers are."""
    num_blocks: int
    tiers: str                          # on: the engine's defaults; off: evicted blocks are gone
    max_tokens: int

    @property
    def backend_args(self) -> list[str]:
        tiers = [] if self.tiers == "on" else ["--kv-host-tier", "0", "--kv-disk-tier", "0"]
        return ["--num-blocks", str(self.num_blocks), *tiers]


class Backend:
    def __init__(self, workdir: str, shape: Shape):
        self.port, self.shape = free_port(), shape
        self.url = f"http://127.0.0.1:{self.port}"
        self.workdir, self.proc = workdir, None

    def start(self) -> None:
        log = open(os.path.join(self.workdir, f"backend-{self.port}.log"), "a")
        self.proc = subprocess.Popen([sys.executable, "-m", "gateway.cli", "backend", "--model", "demo",
                                      "--max-model-len", "2048", "--host", "127.0.0.1", "--port", str(self.port),
                                      "--log-level", "warning", *self.shape.backend_args],
                                     cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        wait_http(self.url + "/healthz", self.proc)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class Cluster:
    """Three backends and a gateway in front of them, with the given routing policy."""

    def __init__(self, policy: str, shape: Shape):
        self.workdir = tempfile.mkdtemp(prefix=f"semcache-routing-{policy}-")
        self.backends = [Backend(self.workdir, shape) for _ in range(3)]
        for backend in self.backends:
            backend.start()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = os.path.join(self.workdir, "gateway.log")
        env = {**os.environ, "SEMCACHE_BACKENDS": ",".join(b.url for b in self.backends),
               "SEMCACHE_BACKEND_ROUTING": policy, "SEMCACHE_CACHE_MODE": "off", "SEMCACHE_ADMIN_TOKEN": ADMIN,
               "SEMCACHE_BACKEND_EJECT_S": "2", "SEMCACHE_BACKEND_HEALTH_INTERVAL_S": "1",
               "SEMCACHE_DATA_DIR": self.workdir, "SEMCACHE_MODELS_DIR": str(models_dir())}
        self.proc = subprocess.Popen([sys.executable, "-m", "gateway.cli", "serve", "--host", "127.0.0.1",
                                      "--port", str(self.port), "--log-level", "info"], cwd=ROOT, env=env,
                                     stdout=open(self.log_path, "w"), stderr=subprocess.STDOUT)
        wait_http(self.url + "/readyz", self.proc)

    def replicas(self) -> list[dict]:
        return httpx.get(self.url + "/admin/stats", headers={"Authorization": f"Bearer {ADMIN}"},
                         timeout=10).json()["replicas"]

    def access_log(self) -> list[dict]:
        rows = []
        for line in open(self.log_path):
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if row.get("logger") == "semcache.access" and row.get("path") == "/v1/chat/completions":
                rows.append(row)
        return rows

    def stop(self) -> None:
        try:
            self.proc.terminate()
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        finally:
            for backend in self.backends:
                backend.stop()


def models_dir() -> Path:
    return Path(os.environ.get("SEMCACHE_MODELS_DIR") or Path(os.environ.get("SEMCACHE_DATA_DIR") or
                                                             Path.home() / ".semcache") / "models")


def conversations(count: int, turns: int, seed: int) -> list[tuple[str, list[str]]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        topic = rng.choice(TOPICS)
        first = TURNS[0].format(t=topic, n=rng.randint(18, 80), c=rng.choice(CITIES))
        out.append((f"bench-{uuid.UUID(int=rng.getrandbits(128)).hex[:12]}",
                    [first] + [t.format(t=topic) for t in TURNS[1:turns]]))
    return out


async def one_turn(client: httpx.AsyncClient, url: str, session: str, messages: list[dict],
                   max_tokens: int) -> dict:
    """A streamed turn: TTFT to the first content chunk, the answer, its usage, and how it ended."""
    started = time.perf_counter()
    row = {"session": session, "ttft_ms": None, "status": None, "started_stream": False, "error": None,
           "answer": "", "usage": None}
    body = {"model": "demo", "messages": messages, "max_tokens": max_tokens, "temperature": 0, "stream": True,
            "stream_options": {"include_usage": True}}
    try:
        async with client.stream("POST", url + "/v1/chat/completions", json=body,
                                 headers={"X-Session-Id": session}) as response:
            row["status"] = response.status_code
            # the status line is the first byte the client gets: from here on nothing can be retried
            row["started_stream"] = response.status_code == 200
            if response.status_code != 200:
                await response.aread()
                row["error"] = f"HTTP {response.status_code}"
                return row
            async for line in response.aiter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                chunk = json.loads(line[6:])
                if "error" in chunk:
                    row["error"] = chunk["error"].get("code") or "stream_error"
                    return row
                if chunk.get("usage"):
                    row["usage"] = chunk["usage"]
                for choice in chunk.get("choices") or []:
                    text = (choice.get("delta") or {}).get("content")
                    if text:
                        if row["ttft_ms"] is None:
                            row["ttft_ms"] = (time.perf_counter() - started) * 1e3
                        row["answer"] += text
    except httpx.HTTPError as exc:
        row["error"] = exc.__class__.__name__
    return row


async def drive(url: str, convs: list, concurrency: int, max_tokens: int, on_progress=None) -> list[dict]:
    """All conversations are open at once, as users who pause between turns: a conversation's next turn
    joins the back of the queue when its answer arrives, so other sessions' turns run in between (and each
    replica's KV pool must keep every session it serves)."""
    queue: asyncio.Queue = asyncio.Queue()
    for session, turns in convs:
        queue.put_nowait((session, turns, 0, []))
    rows: list[dict] = []
    total = sum(len(turns) for _, turns in convs)

    async def worker(client):
        while len(rows) < total:
            try:
                session, turns, index, messages = queue.get_nowait()
            except asyncio.QueueEmpty:
                await asyncio.sleep(0.01)          # another worker's turn will enqueue its next one
                continue
            messages = [*messages, {"role": "user", "content": turns[index]}]
            row = await one_turn(client, url, session, messages, max_tokens)
            rows.append(row)
            if on_progress is not None:
                await on_progress(len(rows), total)
            if row["error"]:
                messages.pop()                     # the conversation goes on from its last good turn
            else:
                messages.append({"role": "assistant", "content": row["answer"]})
            if index + 1 < len(turns):
                queue.put_nowait((session, turns, index + 1, messages))

    async with httpx.AsyncClient(timeout=120, limits=httpx.Limits(max_connections=concurrency * 2)) as client:
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
    return rows


def reuse(rows: list[dict]) -> tuple[float, int, int]:
    prompt = sum((r["usage"] or {}).get("prompt_tokens", 0) for r in rows)
    cached = sum(((r["usage"] or {}).get("prompt_tokens_details") or {}).get("cached_tokens", 0) for r in rows)
    return (cached / prompt if prompt else 0.0), cached, prompt


def run_policy(policy: str, convs: list, concurrency: int, shape: Shape) -> dict:
    cluster = Cluster(policy, shape)
    try:
        started = time.perf_counter()
        rows = asyncio.run(drive(cluster.url, convs, concurrency, shape.max_tokens))
        wall = time.perf_counter() - started
        share, cached, prompt = reuse([r for r in rows if not r["error"]])
        ttfts = [r["ttft_ms"] for r in rows if r["ttft_ms"] is not None]
        return {"policy": policy, "blocks": shape.num_blocks, "tiers": shape.tiers, "requests": len(rows),
                "errors": sum(1 for r in rows if r["error"]),
                "reuse": share, "cached": cached, "prompt": prompt, "p50": percentile(ttfts, 0.5),
                "p95": percentile(ttfts, 0.95), "wall_s": wall}
    finally:
        cluster.stop()


def run_failure(convs: list, concurrency: int, shape: Shape) -> dict:
    cluster = Cluster("affinity", shape)
    victim = cluster.backends[1]
    total = sum(len(turns) for _, turns in convs)
    events: dict[str, float] = {}

    async def on_progress(done: int, _total: int) -> None:
        if "killed" not in events and done >= total // 3:
            victim.kill()
            events["killed"] = time.time()
        elif "killed" in events and "restarted" not in events and done >= 2 * total // 3:
            events["restarted"] = time.time()      # first: other workers report progress while it starts
            await asyncio.to_thread(victim.start)

    try:
        rows = asyncio.run(drive(cluster.url, convs, concurrency, shape.max_tokens, on_progress))
        time.sleep(3)                       # the restarted backend's check lets it back in
        state = {r["name"]: r for r in cluster.replicas()}
        log = cluster.access_log()
    finally:
        cluster.stop()
    before = {}
    after_kill: dict[str, set] = {}
    restarted_served = 0
    for row in log:
        # the access log line is written when a request ends: place it by when it began
        replica, session, ts = row.get("replica"), row.get("session_id"), row["ts"] - row["duration_ms"] / 1e3
        if replica is None or row.get("status") != 200:
            continue
        if ts < events["killed"]:
            before[session] = replica
        elif ts < events.get("restarted", float("inf")):
            after_kill.setdefault(session, set()).add(replica)
        elif replica == victim.url:
            restarted_served += 1
    orphans = [s for s, r in before.items() if r == victim.url and s in after_kill]
    moved_to = {r for s in orphans for r in after_kill[s]}
    stable = sum(1 for s in orphans if len(after_kill[s]) == 1)
    failed_before_stream = [r for r in rows if r["error"] and not r["started_stream"]]
    broke_mid_stream = [r for r in rows if r["error"] and r["started_stream"]]
    return {"requests": len(rows), "failed_before_stream": len(failed_before_stream),
            "failed_errors": sorted({r["error"] for r in failed_before_stream}),
            "broke_mid_stream": len(broke_mid_stream), "orphaned_sessions": len(orphans),
            "orphans_on_victim_after_kill": sum(1 for s in orphans if victim.url in after_kill[s]),
            "moved_to": sorted(moved_to), "orphans_stable": stable, "victim_state": state[victim.url]["state"],
            "victim_ejections": state[victim.url]["ejections"], "served_after_restart": restarted_served,
            "victim": victim.url}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=60)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--num-blocks", type=int, nargs="+", default=[1024],
                        help="KV pool per backend, in 16-token blocks: 1024 holds about a third of the sessions' "
                             "KV at the end of the run (each replica's share under affinity)")
    parser.add_argument("--max-tokens", type=int, default=128,
                        help="answer length (greedy; the demo model rarely stops early): 128 is a short chat answer")
    parser.add_argument("--kv-tiers", choices=("off", "on"), nargs="+", default=["off", "on"],
                        help="off: a backend without KV offload (vLLM's and SGLang's default), whose evicted blocks "
                             "are gone; on: the bundled engine's default, whose evicted blocks wait in host memory")
    parser.add_argument("--no-failure", action="store_true", help="skip the run with a killed backend")
    args = parser.parse_args()
    results = []
    for tiers in args.kv_tiers:
        for blocks in args.num_blocks:
            for i, policy in enumerate(("affinity", "round_robin")):
                # each policy gets its own conversations (and fresh backends): no run reuses another's KV blocks
                results.append(run_policy(policy, conversations(args.sessions, args.turns, args.seed + i),
                                          args.concurrency, Shape(blocks, tiers, args.max_tokens)))
                print(f"  {policy}, {blocks} blocks, KV tiers {tiers}: done in {results[-1]['wall_s']:.1f} s",
                      file=sys.stderr)
    print(f"\n{args.sessions} sessions x {args.turns} turns (interleaved), concurrency {args.concurrency}, "
          f"answers of {args.max_tokens} tokens, 3 demo backends\n")
    print(f"{'KV tiers':>8} {'KV blocks':>9} {'policy':<12} {'requests':>8} {'errors':>6} {'reuse share':>11} "
          f"{'cached/prompt tokens':>22} {'TTFT p50 ms':>11} {'TTFT p95 ms':>11}")
    for r in results:
        print(f"{r['tiers']:>8} {r['blocks']:>9} {r['policy']:<12} {r['requests']:>8} {r['errors']:>6} "
              f"{r['reuse']:>11.3f} {r['cached']:>10}/{r['prompt']:<11} {r['p50']:>11.1f} {r['p95']:>11.1f}")
    print()
    for affinity, rr in zip(results[::2], results[1::2]):
        print(f"KV tiers {affinity['tiers']:>3}, {affinity['blocks']:>5} blocks: affinity / round-robin reuse share "
              f"{ratio(affinity['reuse'], rr['reuse'])}, TTFT p50 {rr['p50'] / affinity['p50']:.2f}x "
              f"faster, p95 {rr['p95'] / affinity['p95']:.2f}x faster")
    if args.no_failure:
        return
    blocks, tiers = args.num_blocks[0], args.kv_tiers[0]
    failure = run_failure(conversations(args.sessions, args.turns, args.seed + 2), args.concurrency,
                          Shape(blocks, tiers, args.max_tokens))
    print(f"\naffinity ({blocks} blocks, KV tiers {tiers}), backend {failure['victim']} killed at 1/3 of the run, "
          f"restarted at 2/3:")
    for key in ("requests", "failed_before_stream", "failed_errors", "broke_mid_stream", "orphaned_sessions",
                "orphans_on_victim_after_kill", "moved_to", "orphans_stable", "victim_ejections",
                "victim_state", "served_after_restart"):
        print(f"  {key:<30} {failure[key]}")


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "n/a (round-robin reused nothing)"


if __name__ == "__main__":
    main()
