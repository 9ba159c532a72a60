"""Load bench: `semcache serve --workers W` (W = 1, 2, 4) at 64 clients in front of a fixed 20 ms upstream.

    python bench/load.py [--workers 1 2 4] [--clients 64] [--duration 20] [--database auto|sqlite|postgres]

It starts the fixed upstream (bench/fixed_upstream.py: sleeps 20 ms, returns
one fixed completion), then for each W a fresh gateway in front of it
(PostgreSQL + Redis as the tests find them, tests/services.py: the servers at
SEMCACHE_TEST_PG_URL / SEMCACHE_TEST_REDIS_URL, default 127.0.0.1:5432 and
:6379, else throwaway ones it starts; if none can be had, SQLite and the
in-process hot store; a throwaway database and Redis prefix per W), and:

1. peak: 64 closed-loop clients (httpx, one client and connection each) for a fixed duration, after a warm-up;
   throughput in requests/s and decisions/s (responses whose X-Cache is HIT,
   PARTIAL or MISS: the gateway fingerprinted them), p50/p99 of forwarded
   requests, and the CPU seconds the gateway's processes used;
2. half load: the same traffic paced at half the peak throughput (open loop,
   latency counted from each request's scheduled time), and the upstream
   called directly at the same rate for its own p50/p99; the ratio
   gateway p99 / upstream p99 is the issue's "≤ 3x at half load".

The traffic: sessions of 1-3 turns, most first turns new questions (topic x
ask x details, so the encoder's cache cannot answer them), follow-ups from a
small set of phrases, and some repeats (a later turn of an old session asks
its first question again, which can be a HIT once the entry is ready).
Client, upstream and gateway share the machine's cores: on a 2-core VM the
client's own CPU is part of what is measured. It prints tables; it asserts
nothing.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from gateway.replay.runner import percentile  # noqa: E402

TOPICS = ["sourdough baking", "python packaging", "marathon training", "balcony gardening", "learning Spanish",
          "home espresso", "watercolor painting", "bouldering", "personal budgeting", "sleep hygiene",
          "starting a podcast", "bird watching", "chess openings", "bike maintenance", "composting",
          "touch typing", "public speaking", "aquarium care", "knitting socks", "solo camping",
          "SQL indexing", "guitar chords", "meal prepping", "raising chickens", "film photography",
          "home networking", "beekeeping", "rock climbing knots", "writing a novel", "3d printing",
          "kombucha brewing", "rust lifetimes", "yoga for runners", "calligraphy", "saltwater fishing",
          "drone flying", "cheese making", "origami", "stargazing", "woodworking joints"]
ASKS = ["How do I get started with {t}?", "What are the most common beginner mistakes in {t}?",
        "Give me a short checklist for {t}.", "Explain {t} to a complete beginner.",
        "What should I read first to learn {t}?", "Compare two popular approaches to {t}.",
        "Which tools do I really need for {t}?", "How do I stay motivated with {t}?"]
DETAILS = ["I have about {n} hours a week.", "I live in {c} and my budget is {n}0 euros.",
           "I am {n} years old and have never tried it.", "My friend in {c} recommended it {n} weeks ago."]
CITIES = ["Lisbon", "Oslo", "Nairobi", "Osaka", "Lima", "Austin", "Krakow", "Hanoi", "Porto", "Quebec",
          "Seville", "Tbilisi", "Perth", "Bergen", "Cusco", "Accra", "Izmir", "Leeds", "Graz", "Busan"]
FOLLOW_UPS = ["Can you give me a concrete example?", "Summarise that in three bullet points.",
              "How long does that usually take?", "What would you do first?", "Is there a cheaper way?"]
REPEAT_SHARE = 0.15


def question(rng: random.Random) -> str:
    detail = rng.choice(DETAILS).format(n=rng.randint(2, 60), c=rng.choice(CITIES))
    return rng.choice(ASKS).format(t=rng.choice(TOPICS)) + " " + detail


@dataclass
class Session:
    session_id: str
    messages: list = field(default_factory=list)
    turns_left: int = 1


class Traffic:
    """Chat bodies of many sessions: mostly new questions, follow-ups, some repeats."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.finished: list[Session] = []

    def next_session(self) -> Session:
        if self.finished and self.rng.random() < REPEAT_SHARE:
            old = self.finished.pop(self.rng.randrange(len(self.finished)))
            first = next(m["content"] for m in old.messages if m["role"] == "user")
            old.messages.append({"role": "user", "content": first})
            old.turns_left = 1
            return old
        session = Session("load-" + uuid.uuid4().hex[:12], turns_left=self.rng.choice((1, 1, 2, 3)))
        session.messages.append({"role": "user", "content": question(self.rng)})
        return session

    def after(self, session: Session, answer: str) -> Session | None:
        session.messages.append({"role": "assistant", "content": answer})
        session.turns_left -= 1
        if session.turns_left <= 0:
            if len(self.finished) < 2000:
                self.finished.append(session)
            return None
        session.messages.append({"role": "user", "content": self.rng.choice(FOLLOW_UPS)})
        return session


@dataclass
class Result:
    started: float
    ms: float
    status: int
    cache: str | None
    worker: str | None


SEEN_ERRORS: set[str] = set()


async def send(client: httpx.AsyncClient, url: str, session: Session, scheduled: float | None = None
               ) -> tuple[Result, str]:
    body = {"model": "fixed", "messages": session.messages, "max_tokens": 32}
    started = time.perf_counter()
    try:
        r = await client.post(url, json=body, headers={"X-Session-Id": session.session_id})
        status, cache, worker = r.status_code, r.headers.get("x-cache"), r.headers.get("x-semcache-worker")
        answer = r.json()["choices"][0]["message"]["content"] if status == 200 else ""
    except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as exc:
        status, cache, worker, answer = 599, None, None, ""
        if type(exc).__name__ not in SEEN_ERRORS:         # say once per kind what went wrong
            SEEN_ERRORS.add(type(exc).__name__)
            print(f"  client error: {type(exc).__name__}: {exc!r}"[:300], file=sys.stderr)
    end = time.perf_counter()
    return Result(started, (end - (scheduled or started)) * 1e3, status, cache, worker), answer


def own_clients(count: int) -> list[httpx.AsyncClient]:
    """One client per simulated user, each with its one keep-alive connection, as separate apps would have.
    One shared pool of 64 connections cost the bench itself up to 10 CPU-seconds per 20 s pass, half a core
    taken from the gateway: httpcore scans every pooled connection for every queued request. Made before a
    pass starts, sharing one TLS context: each client would otherwise load the CA bundle (tens of ms)."""
    tls = ssl.create_default_context()
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    return [httpx.AsyncClient(limits=limits, timeout=120, verify=tls) for _ in range(count)]


async def closed_loop(url: str, clients: int, duration: float, traffic: Traffic) -> list[Result]:
    results: list[Result] = []
    users = own_clients(clients)
    stop = time.perf_counter() + duration

    async def one(client: httpx.AsyncClient):
        session = None
        async with client:
            while time.perf_counter() < stop:
                session = session or traffic.next_session()
                result, answer = await send(client, url, session)
                results.append(result)
                session = traffic.after(session, answer) if result.status == 200 else None
    await asyncio.gather(*(one(client) for client in users))
    return results


async def paced(url: str, rate: float, duration: float, traffic: Traffic, clients: int) -> list[Result]:
    """Open loop: request k is due at t0 + k / rate; latency counts from when it was due."""
    results: list[Result] = []
    users = own_clients(clients)
    t0 = time.perf_counter() + 0.2
    total = int(rate * duration)
    ticket = [0]

    async def one(client: httpx.AsyncClient):
        session = None
        async with client:
            while ticket[0] < total:
                due = t0 + ticket[0] / rate
                ticket[0] += 1
                await asyncio.sleep(max(0.0, due - time.perf_counter()))
                session = session or traffic.next_session()
                result, answer = await send(client, url, session, scheduled=due)
                results.append(result)
                session = traffic.after(session, answer) if result.status == 200 else None
    await asyncio.gather(*(one(client) for client in users))
    return results


# ---- processes -------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, proc: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args} exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer")


def wait_workers(url: str, workers: int, timeout: float = 300) -> None:
    """Every worker has finished its start-up: W distinct PIDs answered /readyz on new connections."""
    seen: set[str] = set()
    deadline = time.monotonic() + timeout
    while len(seen) < workers and time.monotonic() < deadline:
        try:
            r = httpx.get(url + "/readyz", timeout=5)
            if r.status_code == 200:
                seen.add(r.headers.get("x-semcache-worker", ""))
        except httpx.HTTPError:
            time.sleep(0.2)
    if len(seen) < workers:
        raise RuntimeError(f"only {len(seen)} of {workers} workers became ready")


def tree(pid: int) -> list[int]:
    """pid and its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                ppid = int(open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def cpu_seconds(pids: list[int]) -> float:
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


@contextlib.contextmanager
def storage(kind: str):
    """(env, label): a throwaway PostgreSQL database + Redis prefix, or SQLite in the data dir."""
    if kind in ("auto", "postgres"):
        sys.path.insert(0, str(ROOT))
        from tests import services          # the tests' servers: configured ones, else throwaway ones
        try:
            redis_url = services.redis_url()
            services.pg_admin_url()
        except services.Unavailable as exc:
            if kind == "postgres":
                raise
            print(f"({exc}; using SQLite)")
        else:
            with services.throwaway_database("semcache_load_") as database:
                env = {"SEMCACHE_DATABASE_URL": database, "SEMCACHE_REDIS_URL": redis_url,
                       "SEMCACHE_REDIS_PREFIX": "semcache-load-" + uuid.uuid4().hex[:8]}
                subprocess.run([sys.executable, "-m", "gateway.cli", "migrate"], cwd=ROOT, check=True,
                               env={**os.environ, **env}, capture_output=True)
                yield env, "PostgreSQL + Redis"
            return
    yield {}, "SQLite, in-process hot store"


def models_dir() -> str:
    return os.environ.get("SEMCACHE_MODELS_DIR") or str(Path(os.environ.get("SEMCACHE_DATA_DIR")
                                                             or Path.home() / ".semcache") / "models")


# ---- one gateway ----------------------------------------------------------------------
def start_upstream(latency_ms: float) -> tuple[subprocess.Popen, str]:
    """The fixed upstream (bench/fixed_upstream.py) on a free port, answering: (process, its URL)."""
    port = free_port()
    upstream = subprocess.Popen([sys.executable, "bench/fixed_upstream.py", "--port", str(port),
                                 "--latency-ms", str(latency_ms)], cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    wait_http(url + "/v1/models", upstream)
    return upstream, url


def start_gateway(workers: int, up_url: str, store_env: dict, log, log_level: str = "warning",
                  **settings: str) -> tuple[subprocess.Popen, str]:
    """`semcache serve --workers N` in front of `up_url`, ready with all its workers: (process, its URL).
    `settings`: more SEMCACHE_* variables."""
    port = free_port()
    env = {**os.environ, **store_env, "SEMCACHE_BACKEND_URL": up_url + "/v1",
           "SEMCACHE_DATA_DIR": tempfile.mkdtemp(prefix="semcache-load-"), "SEMCACHE_MODELS_DIR": models_dir(),
           "SEMCACHE_READY_DELAY_S": "1.0", **settings}
    gateway = subprocess.Popen([sys.executable, "-m", "gateway.cli", "serve", "--workers", str(workers),
                                "--port", str(port), "--log-level", log_level], cwd=ROOT, env=env,
                               stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(url + "/readyz", gateway)
        wait_workers(url, workers)
    except BaseException:
        gateway.kill()
        raise
    return gateway, url


def profile_pids(pids: list[int], folder: str, duration: float) -> list[subprocess.Popen]:
    """py-spy over each of the gateway's processes for the peak pass, as collapsed stacks (FOLDER/pid.txt).
    Sampling costs the gateway a little CPU: a profiled pass is for finding where time goes, not for its numbers."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    spy = str(Path(sys.executable).with_name("py-spy"))
    return [subprocess.Popen([spy, "record", "-p", str(pid), "-d", str(int(duration)), "-r", "100", "-f", "raw",
                              "-o", str(Path(folder) / f"{pid}.txt"), "--nonblocking"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for pid in pids]


def run_workers(workers: int, up_url: str, upstream_pid: int, args, encoder_backend: str = "auto") -> dict:
    with storage(args.database) as (store_env, store_label):
        log = open(Path(tempfile.gettempdir()) / f"semcache-load-{uuid.uuid4().hex[:8]}.log", "w")
        gateway, url = start_gateway(workers, up_url, store_env, log,
                                     SEMCACHE_BACKEND_EARLY_FORWARD=args.early_forward,
                                     SEMCACHE_ENCODER_BACKEND=encoder_backend)
        try:
            chat = url + "/v1/chat/completions"
            traffic = Traffic(seed=workers)
            asyncio.run(closed_loop(chat, args.clients, args.warmup, traffic))          # not counted
            pids = tree(gateway.pid)
            spies = profile_pids(pids, args.profile, args.duration) if args.profile else []
            cpu0, up0, me0, wall0 = cpu_seconds(pids), cpu_seconds([upstream_pid]), time.process_time(), \
                time.perf_counter()
            peak = asyncio.run(closed_loop(chat, args.clients, args.duration, traffic))
            gateway_cpu, wall = cpu_seconds(pids) - cpu0, time.perf_counter() - wall0
            for spy in spies:
                spy.wait(timeout=60)
            upstream_cpu, client_cpu = cpu_seconds([upstream_pid]) - up0, time.process_time() - me0
            ok = [r for r in peak if r.status == 200]
            decided = [r for r in ok if r.cache in ("HIT", "PARTIAL", "MISS")]
            rps = len(ok) / wall
            half_rate = rps / 2
            half = asyncio.run(paced(chat, half_rate, args.duration, traffic, args.clients))
            direct = asyncio.run(paced(up_url + "/v1/chat/completions", half_rate, args.duration / 2,
                                       Traffic(seed=99), args.clients))
        finally:
            gateway.terminate()
            try:
                gateway.wait(timeout=30)
            except subprocess.TimeoutExpired:
                gateway.kill()
            log.close()
    forwarded = [r.ms for r in ok if r.cache in ("MISS", "PARTIAL", "BYPASS")]
    half_ok = [r for r in half if r.status == 200]
    half_fwd = [r.ms for r in half_ok if r.cache in ("MISS", "PARTIAL", "BYPASS")]
    direct_ms = [r.ms for r in direct if r.status == 200]
    outcomes: dict[str, int] = {}
    for r in ok:
        outcomes[r.cache or "?"] = outcomes.get(r.cache or "?", 0) + 1
    for r in peak + half:                    # failures by status (599: the client's own error, e.g. a reset)
        if r.status != 200:
            outcomes[f"status {r.status}"] = outcomes.get(f"status {r.status}", 0) + 1
    return {"workers": workers, "encoder": encoder_backend, "store": store_label, "requests": len(peak), "errors": len(peak) - len(ok),
            "rps": rps, "dps": len(decided) / wall, "gateway_cpu_s": gateway_cpu, "wall_s": wall,
            "upstream_cpu_s": upstream_cpu, "client_cpu_s": client_cpu,
            "p50": percentile(forwarded, 0.5), "p99": percentile(forwarded, 0.99),
            "pids": len({r.worker for r in ok}), "outcomes": outcomes,
            "half_rate": half_rate, "half_errors": len(half) - len(half_ok),
            "half_p50": percentile(half_fwd, 0.5), "half_p99": percentile(half_fwd, 0.99),
            "up_p50": percentile(direct_ms, 0.5), "up_p99": percentile(direct_ms, 0.99)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of each measured pass")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--early-forward", choices=("auto", "on", "off"), default="auto",
                        help="backend_early_forward (auto: the fixed upstream gets no early requests)")
    parser.add_argument("--database", choices=("auto", "sqlite", "postgres"), default="auto")
    parser.add_argument("--encoder-backend", nargs="+", choices=("auto", "onnx", "int8", "bf16"), default=["auto"],
                        help="encoder_backend of the gateway; several: each worker count runs with each, in turn")
    parser.add_argument("--profile", metavar="DIR", help="py-spy (pip install py-spy) over the gateway's "
                        "processes during each peak pass, collapsed stacks into DIR")
    args = parser.parse_args()
    upstream, up_url = start_upstream(args.latency_ms)
    cores = os.cpu_count() or 1
    rows = []
    try:
        for workers, backend in [(w, b) for w in args.workers for b in args.encoder_backend]:
            rows.append(run_workers(workers, up_url, upstream.pid, args, backend))
            r = rows[-1]
            print(f"  workers {workers}, encoder {backend}: {r['requests']} requests, {r['errors']} errors, outcomes {r['outcomes']}, "
                  f"{r['pids']} worker PIDs answered; CPU s in the {r['wall_s']:.1f} s peak pass: gateway "
                  f"{r['gateway_cpu_s']:.1f}, client {r['client_cpu_s']:.1f}, upstream {r['upstream_cpu_s']:.1f}",
                  flush=True)
    finally:
        upstream.terminate()
        upstream.wait(timeout=10)
    print(f"\n{args.clients} clients, upstream {args.latency_ms:.0f} ms, {args.duration:.0f} s per pass, "
          f"{cores} CPUs shared by client, upstream and gateway; store: {rows[0]['store'] if rows else '-'}; "
          f"backend_early_forward {args.early_forward}")
    print("peak (closed loop):")
    print(f"{'workers':>7} {'encoder':>7} {'req/s':>7} {'dec/s':>7} {'dec/s/core':>10} {'dec/CPU-s':>9} "
          f"{'fwd p50 ms':>10} {'fwd p99 ms':>10}")
    for r in rows:
        print(f"{r['workers']:>7} {r['encoder']:>7} {r['rps']:>7.1f} {r['dps']:>7.1f} {r['dps'] / cores:>10.1f} "
              f"{r['dps'] * r['wall_s'] / max(r['gateway_cpu_s'], 1e-9):>9.1f} {r['p50']:>10.1f} {r['p99']:>10.1f}")
    print("half load (paced at half the peak req/s; the upstream alone at the same rate):")
    print(f"{'workers':>7} {'encoder':>7} {'rate/s':>7} {'fwd p50 ms':>10} {'fwd p99 ms':>10} {'up p50 ms':>9} {'up p99 ms':>9} "
          f"{'p99/up p99':>10}")
    for r in rows:
        print(f"{r['workers']:>7} {r['encoder']:>7} {r['half_rate']:>7.1f} {r['half_p50']:>10.1f} {r['half_p99']:>10.1f} "
              f"{r['up_p50']:>9.1f} {r['up_p99']:>9.1f} {r['half_p99'] / r['up_p99']:>10.2f}")
    print("dec/s: responses the gateway decided (HIT, PARTIAL, MISS) per second; dec/s/core: over all "
          f"{cores} CPUs; dec/CPU-s: per CPU-second the gateway's own processes used")


if __name__ == "__main__":
    main()
