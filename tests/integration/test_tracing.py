"""OpenTelemetry traces with the in-memory exporter: the gateway app served by uvicorn on a loopback port (in
this process, so the exporter can be read), in front of `semcache backend` (demo model), driven with the
openai client. A HIT's span tree is request -> decide -> stages, with no upstream call; a PARTIAL's has the
upstream call too; the decision record is on the request span."""
import uuid

import httpx
import openai
import pytest

pytest.importorskip("opentelemetry.sdk")
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from gateway.app import create_app  # noqa: E402
from gateway.settings import Settings  # noqa: E402
from gateway.tracing import Tracing  # noqa: E402
from tests.conftest import ADMIN_TOKEN, app_server, fresh_dirs  # noqa: E402

ROOT_SPAN = "POST /v1/chat/completions"
SYSTEM = {"role": "system", "content": "You are a careful travel planner. Keep plans realistic and within the "
                                       "stated budget, and list costs per day."}
KYOTO = "Plan a 3-day trip to Kyoto with a budget of 2000 dollars."
KYOTO_ANSWER = ("Day 1: Fushimi Inari shrine and Gion. Day 2: Arashiyama bamboo grove. Day 3: Kinkaku-ji and "
                "Nishiki market. Estimated total: $1,850 including a mid-range hotel.")


@pytest.fixture(scope="module")
def traced_gateway(demo_backend):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    dirs = fresh_dirs()
    settings = Settings(backend_url=demo_backend.url + "/v1", admin_token=ADMIN_TOKEN, ready_delay_s=0.0,
                        data_dir=dirs["SEMCACHE_DATA_DIR"], models_dir=dirs["SEMCACHE_MODELS_DIR"])
    with app_server(create_app(settings, tracing=Tracing(provider))) as url:
        yield url, exporter


def chat(url: str, messages: list[dict], session: str):
    client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
    raw = client.chat.completions.with_raw_response.create(model="demo", messages=messages, temperature=0,
                                                           extra_headers={"X-Session-Id": session})
    return raw.headers, raw.parse()


def tree(exporter: InMemorySpanExporter, request_id: str) -> tuple[object, dict[str, list[str]]]:
    """The request span whose trace holds this request, and {span name: names of its children}."""
    spans = exporter.get_finished_spans()
    roots = [s for s in spans if s.name == ROOT_SPAN and s.parent is None]
    root = next(r for r in roots if r.attributes.get("semcache.request_id") == request_id)
    mine = [s for s in spans if s.context.trace_id == root.context.trace_id]
    by_id = {s.context.span_id: s for s in mine}
    children: dict[str, list[str]] = {s.name: [] for s in mine}
    for s in mine:
        if s.parent is not None:
            children[by_id[s.parent.span_id].name].append(s.name)
    return root, children


def test_a_hit_and_a_partial_have_their_span_trees(traced_gateway):
    url, exporter = traced_gateway
    session = "trace-" + uuid.uuid4().hex[:8]
    headers, _ = chat(url, [SYSTEM, {"role": "user", "content": KYOTO}], session)
    assert headers["x-cache"] == "MISS"
    warm = httpx.post(url + "/admin/warmup", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=60,
                      json={"entries": [{"messages": [SYSTEM, {"role": "user", "content": KYOTO}],
                                         "answer": KYOTO_ANSWER, "session_id": session}]})
    assert warm.status_code == 200, warm.text
    # the same question in other words of form only: served from the warmed entry, through the gates
    hit_headers, _ = chat(url, [SYSTEM, {"role": "user", "content": "plan a 3-day trip to Kyoto with a budget "
                                                                     "of 2000 dollars, please"}], session)
    followup = [SYSTEM, {"role": "user", "content": KYOTO}, {"role": "assistant", "content": KYOTO_ANSWER},
                {"role": "user", "content": "Raise the budget to 3000 dollars."}]
    partial_headers, _ = chat(url, followup, session)
    assert hit_headers["x-cache"] == "HIT", dict(hit_headers)
    assert partial_headers["x-cache"] == "PARTIAL", dict(partial_headers)

    root, children = tree(exporter, hit_headers["x-request-id"])
    assert root.attributes["semcache.cache"] == "HIT"
    assert root.attributes["semcache.cache_id"] == hit_headers["x-cache-id"]
    assert root.attributes["http.response.status_code"] == 200
    # the request went to the bundled engine as it arrived (early forwarding) and the HIT cancelled it
    assert sorted(children[ROOT_SPAN]) == ["semcache.decide", "semcache.upstream"]
    cancelled = next(s for s in exporter.get_finished_spans() if s.name == "semcache.upstream"
                     and s.context.trace_id == root.context.trace_id)
    assert cancelled.attributes["semcache.early_forward"] is True and cancelled.attributes["semcache.cancelled"]
    assert {"semcache.fingerprint", "semcache.search", "semcache.gates"} <= set(children["semcache.decide"])
    assert "semcache.gates" in root.attributes and "semcache.timings_ms" in root.attributes

    root, children = tree(exporter, partial_headers["x-request-id"])
    assert root.attributes["semcache.cache"] == "PARTIAL"
    assert root.attributes["semcache.reason"] == partial_headers["x-cache-reason"]
    assert sorted(children[ROOT_SPAN]) == ["semcache.decide", "semcache.upstream"]
    # (a PARTIAL may be decided before the gates, e.g. entities:conflict)
    assert {"semcache.signals", "semcache.fingerprint", "semcache.search"} <= set(children["semcache.decide"])
    upstream = next(s for s in exporter.get_finished_spans() if s.name == "semcache.upstream"
                    and s.context.trace_id == root.context.trace_id)
    assert upstream.attributes["semcache.replica"] and upstream.attributes["http.response.status_code"] == 200
    assert upstream.attributes["semcache.early_forward"] is True and "semcache.cancelled" not in upstream.attributes
