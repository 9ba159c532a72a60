"""A forwarded answer is written after its response has gone out (SemanticCache.write_later): the gateway app
served by uvicorn on a loopback port in this process, in front of `semcache backend` (demo model), driven with
the openai client. The store's write is held on an event, so the order is what is asserted, never a time: the
response comes back while its write is still held; the session's next turn, a feedback on the answer's id and
the admin reads wait for the write; another session does not, when new answers are not servable at once."""
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import openai
import pytest

from gateway.app import create_app
from gateway.settings import Settings
from tests.conftest import ADMIN_TOKEN, app_server, fresh_dirs

QUESTION = "How do I descale a home espresso machine with citric acid?"
HELD_S = 60.0            # a held write is released by the test long before this; the bound only ends a hang


class HeldWrites:
    """The pipeline's write, held until `release()`; counts the writes that started and finished, and records
    for each decision how many writes had finished when it began (`seen`)."""

    def __init__(self, pipeline):
        self.write, self.decide = pipeline.write, pipeline.decide
        self.gate = threading.Event()
        self.started, self.finished = threading.Semaphore(0), 0
        self.seen: list[int] = []
        pipeline.write, pipeline.decide = self, self.deciding

    def deciding(self, *args, **kwargs):
        self.seen.append(self.finished)
        return self.decide(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        self.started.release()
        self.gate.wait(HELD_S)
        try:
            return self.write(*args, **kwargs)
        finally:
            self.finished += 1

    def release(self) -> None:
        self.gate.set()


@pytest.fixture(params=[0.0, 30.0], ids=["servable-at-once", "ready-delay"])
def gateway(request, demo_backend):
    dirs = fresh_dirs()
    settings = Settings(backend_url=demo_backend.url + "/v1", admin_token=ADMIN_TOKEN, ready_delay_s=request.param,
                        data_dir=dirs["SEMCACHE_DATA_DIR"], models_dir=dirs["SEMCACHE_MODELS_DIR"])
    app = create_app(settings)
    with app_server(app) as url:
        held = HeldWrites(app.state.cache.pipeline)
        yield url, held, request.param
        held.release()


def ask(url: str, session: str, text: str = QUESTION):
    client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0, timeout=HELD_S)
    raw = client.chat.completions.with_raw_response.create(
        model="demo", messages=[{"role": "user", "content": text}], temperature=1.0, seed=1, max_tokens=48,
        extra_headers={"X-Session-Id": session})
    return raw.headers, raw.parse()


def answered(url: str, session: str, text: str):
    """A MISS whose answer is written: the demo model's answer to some questions runs to max_tokens, and an
    incomplete answer is not written, so the question is varied until one completes."""
    for variant in range(12):
        headers, answer = ask(url, session, f"{text} (v{variant})")
        assert headers["x-cache"] == "MISS"
        if headers.get("x-cache-id"):
            assert answer.choices[0].finish_reason == "stop"
            return headers
    raise AssertionError("no demo answer completed")


def test_the_response_does_not_wait_for_its_write_and_the_next_turn_does(gateway):
    url, held, _ = gateway
    session = f"s-{uuid.uuid4().hex[:8]}"
    headers = answered(url, session, QUESTION)             # returns while the write is held
    cache_id = headers["x-cache-id"]
    assert held.started.acquire(timeout=HELD_S) and held.finished == 0
    with ThreadPoolExecutor(1) as pool:
        second = pool.submit(ask, url, session, "And how often should I do it?")    # the session's next turn
        held.release()
        headers2, _ = second.result(timeout=HELD_S)
    assert held.seen[-1] == 1                               # its decision began after the first write ended
    assert headers2["x-cache"] in ("HIT", "PARTIAL", "MISS")
    entry = httpx.get(f"{url}/admin/entries/{cache_id}", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert entry.status_code == 200 and entry.json()["cache_id"] == cache_id


def test_a_feedback_right_after_the_answer_finds_its_entry(gateway):
    url, held, _ = gateway
    headers = answered(url, f"s-{uuid.uuid4().hex[:8]}", QUESTION + " (feedback)")
    assert held.started.acquire(timeout=HELD_S) and held.finished == 0
    with ThreadPoolExecutor(1) as pool:
        vote = {"cache_id": headers["x-cache-id"], "signal": "positive"}
        sent = pool.submit(httpx.post, f"{url}/v1/feedback", json=vote, timeout=HELD_S)
        held.release()
        response = sent.result(timeout=HELD_S)
    assert response.status_code == 200, response.text


def test_admin_reads_see_answers_still_being_written(gateway):
    url, held, _ = gateway
    session = f"s-{uuid.uuid4().hex[:8]}"
    headers = answered(url, session, QUESTION + " (admin)")
    assert held.started.acquire(timeout=HELD_S)
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    with ThreadPoolExecutor(1) as pool:
        listed = pool.submit(httpx.get, f"{url}/admin/entries", params={"session_id": session}, headers=admin,
                             timeout=HELD_S)
        held.release()
        entries = listed.result(timeout=HELD_S).json()["entries"]
    assert [e["cache_id"] for e in entries] == [headers["x-cache-id"]]


def test_another_session_waits_only_when_answers_are_servable_at_once(gateway):
    url, held, ready_delay = gateway
    answered(url, f"s-{uuid.uuid4().hex[:8]}", QUESTION + " (other)")
    assert held.started.acquire(timeout=HELD_S) and held.finished == 0
    if ready_delay > 0:
        # no decision could serve an answer this young, so another session's request goes on past the write
        headers, _ = ask(url, f"s-{uuid.uuid4().hex[:8]}", QUESTION + " (other)")
        assert held.seen[-1] == 0 and headers["x-cache"] != "HIT"
        held.release()
    else:
        with ThreadPoolExecutor(1) as pool:
            other = pool.submit(ask, url, f"s-{uuid.uuid4().hex[:8]}", QUESTION + " (other)")
            held.release()
            other.result(timeout=HELD_S)
        assert held.seen[-1] == 1               # it saw the other session's answer written
