"""Several backends behind one gateway, over real HTTP: a `semcache serve` process in front of three scripted
OpenAI-compatible replicas (each a real HTTP server on a loopback port that says who answered), driven with
the official openai client. Sessions stick to one replica and spread over all, a hot session is bounded, a
dead replica is ejected (its sessions move, no request fails) and comes back after a restart, and a stream
that broke after its first byte is never sent again."""
import json
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import openai
import pytest

from gateway.routing import Replica
from tests.conftest import ADMIN_TOKEN, RunningServer, free_port, fresh_dirs

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


class ScriptedReplica:
    """An OpenAI-shaped backend whose answers name it. Modes: normal; slow (answers after `delay` s); error
    (500 to chat); break_stream (a streamed answer's first chunk, then the connection drops)."""

    def __init__(self, name: str, owned_by: str = "scripted"):
        self.name, self.port, self.owned_by = name, free_port(), owned_by
        self.url = f"http://127.0.0.1:{self.port}"
        self.mode, self.delay = "normal", 0.0
        self.chats: list[dict] = []                   # {"session": x-session-id, "stream": bool}
        self.hints: list[dict] = []                   # prefetch notes: {"salt": x-cache-salt, "body": ...}
        self.drafts: list[dict] = []                  # late drafts (POST /v1/semcache/draft): their bodies
        self.server = None
        self.start()

    def start(self):
        replica = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _send(self, status: int, body: bytes, content_type: str = "application/json"):
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self._send(200, json.dumps({"object": "list", "data": [
                    {"id": "scripted", "object": "model", "owned_by": replica.owned_by}]}).encode())

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                if self.path.endswith("/semcache/prefetch"):
                    replica.hints.append({"salt": self.headers.get("x-cache-salt"), "body": body})
                    self._send(202, b'{"status": "accepted"}')
                    return
                if self.path.endswith("/semcache/draft"):
                    replica.drafts.append(body)
                    self._send(202, b'{"status": "accepted"}')
                    return
                stream = bool(body.get("stream"))
                replica.chats.append({"session": self.headers.get("x-session-id"), "stream": stream, "body": body})
                if replica.mode == "slow":
                    time.sleep(replica.delay)
                if replica.mode == "error":
                    self._send(500, b'{"error": {"message": "scripted failure"}}')
                    return
                text = f"answer from {replica.name}"
                usage = {"prompt_tokens": 40, "completion_tokens": 4, "total_tokens": 44,
                         "prompt_tokens_details": {"cached_tokens": 32}}
                if not stream:
                    self._send(200, json.dumps({
                        "id": "x", "object": "chat.completion", "created": 0, "model": "scripted",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                     "finish_reason": "stop"}], "usage": usage}).encode())
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()

                def event(delta, finish=None, use=None):
                    chunk = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "scripted",
                             "choices": [] if use else [{"index": 0, "delta": delta, "finish_reason": finish}]}
                    if use:
                        chunk["usage"] = use
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                    self.wfile.flush()
                event({"role": "assistant", "content": "answer "})
                if replica.mode == "break_stream":
                    time.sleep(0.2)
                    self.connection.shutdown(2)       # gone after the first byte reached the client
                    return
                event({"content": f"from {replica.name}"})
                event({}, "stop")
                event(None, use=usage)
                self.wfile.write(b"data: [DONE]\n\n")

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def kill(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def cluster():
    replicas = [ScriptedReplica(n) for n in ("r0", "r1", "r2")]
    env = {"SEMCACHE_BACKENDS": ",".join(r.url for r in replicas), "SEMCACHE_ADMIN_TOKEN": ADMIN_TOKEN,
           "SEMCACHE_BACKEND_EJECT_S": "1", "SEMCACHE_BACKEND_HEALTH_INTERVAL_S": "0.5", **fresh_dirs()}
    gateway = RunningServer(["serve"], env=env, ready_path="/readyz", timeout=240)
    client = openai.OpenAI(base_url=gateway.url + "/v1", api_key="unused", max_retries=0, timeout=30)
    yield gateway, replicas, client
    gateway.stop()
    for r in replicas:
        if r.server is not None:
            r.kill()


def reset(replicas):
    for r in replicas:
        r.mode, r.delay = "normal", 0.0
        r.chats.clear()


def ask(client, session: str, text: str, stream: bool = False) -> str:
    messages = [{"role": "user", "content": text}]
    headers = {"X-Session-Id": session}
    if not stream:
        reply = client.chat.completions.create(model="scripted", messages=messages, extra_headers=headers)
        return reply.choices[0].message.content
    return "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(
        model="scripted", messages=messages, extra_headers=headers, stream=True) if c.choices)


def served_by(answer: str) -> str:
    assert answer.startswith("answer from "), answer
    return answer.removeprefix("answer from ")


def replicas_state(gateway) -> dict:
    stats = httpx.get(gateway.url + "/admin/stats", headers=ADMIN, timeout=10).json()
    return {r["name"]: r for r in stats["replicas"]}


def natural_replica(replicas, session: str) -> str:
    """The replica rendezvous hashing gives the session (tenant 'default' without API keys), all healthy."""
    ranked = max(replicas, key=lambda r: Replica(None, r.url).rank(f"default\0{session}"))
    return ranked.name


def test_sessions_stick_to_one_replica_and_spread_over_all(cluster):
    gateway, replicas, client = cluster
    reset(replicas)
    seen: dict[str, set] = {}
    for i in range(18):
        session = f"stick-{uuid.uuid4().hex[:8]}"
        for turn in range(3):
            answer = ask(client, session, f"Question {turn} of session {i}: what is {i} + {turn}?")
            seen.setdefault(session, set()).add(served_by(answer))
        assert seen[session] == {natural_replica(replicas, session)}
    assert all(len(names) == 1 for names in seen.values()), seen
    assert set().union(*seen.values()) == {"r0", "r1", "r2"}
    state = replicas_state(gateway)
    assert sum(r["requests"] for r in state.values()) >= 54
    assert all(r["state"] == "healthy" and r["cached_share"] == 0.8 for r in state.values()), state
    metrics = httpx.get(gateway.url + "/metrics", headers=ADMIN).text
    assert f'semcache_backend_cached_prompt_tokens_total{{replica="{replicas[0].url}"}}' in metrics
    # the labelled decision counter and the TTFT of forwarded answers (tenant label off by default)
    decided = [line for line in metrics.splitlines() if line.startswith("semcache_decisions_total{")]
    assert decided and all('tenant=""' in line for line in decided), decided
    assert sum(float(line.rsplit(" ", 1)[1]) for line in decided if 'outcome="MISS"' in line) >= 54
    assert any(line.startswith('semcache_time_to_first_token_seconds_count{cache="MISS"}')
               for line in metrics.splitlines())


def test_a_hot_session_is_spread_by_the_load_bound(cluster):
    gateway, replicas, client = cluster
    reset(replicas)
    session = f"hot-{uuid.uuid4().hex[:8]}"
    ask(client, session, "Warm-up question for the hot session.")     # the encoder is warm
    for r in replicas:
        r.mode, r.delay = "slow", 2.0
    with ThreadPoolExecutor(9) as pool:
        answers = list(pool.map(lambda i: ask(client, session, f"Parallel question number {i} of nine?"),
                                range(9)))
    counts = {name: [served_by(a) for a in answers].count(name) for name in ("r0", "r1", "r2")}
    assert sum(counts.values()) == 9
    assert sum(1 for n in counts.values() if n) >= 2, counts       # not all nine on the session's replica
    assert max(counts.values()) <= 4, counts                        # ceil(1.25 * 9 / 3)


def test_a_dead_replica_is_ejected_its_sessions_move_and_it_comes_back(cluster):
    gateway, replicas, client = cluster
    reset(replicas)
    by_name = {r.name: r for r in replicas}
    sessions = [f"move-{uuid.uuid4().hex[:8]}" for _ in range(12)]
    first = {s: served_by(ask(client, s, f"First turn of {s}?")) for s in sessions}
    victim = by_name[first[sessions[0]]]
    victim.kill()
    moved = {}
    for turn in range(2):                # no request fails; the victim's sessions land elsewhere and stay there
        for s in sessions:
            answer = served_by(ask(client, s, f"Turn {turn + 2} of {s}?"))
            if first[s] == victim.name:
                assert answer != victim.name
                assert moved.setdefault(s, answer) == answer
            else:
                assert answer == first[s]                # the other sessions did not move
    state = replicas_state(gateway)
    assert state[victim.url]["state"] == "ejected" and state[victim.url]["ejections"] >= 1, state
    victim.start()                       # restarted on the same port: an active check lets it back in
    deadline = time.monotonic() + 20
    while replicas_state(gateway)[victim.url]["state"] != "healthy":
        assert time.monotonic() < deadline, replicas_state(gateway)
        time.sleep(0.3)
    # a new session whose replica is the victim goes there again; a moved session stays where its KV now is
    fresh = next(s for s in (f"back-{i}-{uuid.uuid4().hex[:6]}" for i in range(200))
                 if natural_replica(replicas, s) == victim.name)
    assert served_by(ask(client, fresh, "A new session after the restart?")) == victim.name
    s = sessions[0]
    assert served_by(ask(client, s, "And one more turn?")) == moved[s]


def test_failed_answers_are_retried_on_another_replica_but_never_after_the_first_streamed_byte(cluster):
    gateway, replicas, client = cluster
    reset(replicas)
    by_name = {r.name: r for r in replicas}
    # a 500 before any byte reached the client: answered by the next replica
    session = f"retry-{uuid.uuid4().hex[:8]}"
    home = by_name[natural_replica(replicas, session)]
    home.mode = "error"
    answer = served_by(ask(client, session, "Will the failed answer be retried elsewhere?"))
    assert answer != home.name and len(home.chats) == 1
    # a stream that broke after its first chunk: the client sees the break, no replica is asked again
    reset(replicas)
    session = f"stream-{uuid.uuid4().hex[:8]}"
    home = by_name[natural_replica(replicas, session)]
    home.mode = "break_stream"
    with _broken_or_partial() as outcome:
        outcome.text = ask(client, session, "Stream something that breaks?", stream=True)
    assert len(home.chats) == 1 and home.chats[0]["stream"]
    time.sleep(0.5)
    assert sum(len(r.chats) for r in replicas if r is not home) == 0, [r.chats for r in replicas]


class _broken_or_partial:
    """The broken stream ends with the gateway's in-band error (the openai client raises it) or, at the
    latest, without the rest of the answer: either way the client never gets a second replica's answer."""

    def __enter__(self):
        self.text = None
        return self

    def __exit__(self, kind, exc, tb):
        if exc is None:
            assert self.text is not None and "from" not in self.text, self.text
            return False
        return isinstance(exc, (openai.APIError, httpx.HTTPError))
