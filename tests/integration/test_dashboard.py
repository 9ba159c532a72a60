"""The dashboard in a real browser: Debian's headless Chromium driven by Playwright, against `semcache serve`
in front of `semcache backend` (demo model) that has served a warm-up and a few requests. It signs in,
sees the charts drawn with data, finds an entry by its text, invalidates it (confirming the dialog) and sees
it gone; a wrong token is refused. The screenshot goes to SEMCACHE_TEST_DASHBOARD_SCREENSHOT when set (that is
how docs/dashboard.png was made), else to a temporary file."""
import os
import shutil
import tempfile
import time
import uuid

import httpx
import openai
import pytest

from tests.conftest import ADMIN_TOKEN, RunningServer, fresh_dirs

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
KYOTO = "Plan a 3-day trip to Kyoto with a budget of 2000 dollars."
KYOTO_ANSWER = ("Day 1: Fushimi Inari shrine and Gion. Day 2: Arashiyama bamboo grove. Day 3: Kinkaku-ji and "
                "Nishiki market. Estimated total: $1,850 including a mid-range hotel.")
LISBON = "What should I pack for a week of hiking near Lisbon in April?"
LISBON_ANSWER = "Light layers, a rain shell, broken-in trail shoes, sunscreen and a refillable water bottle."


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("NO CHROMIUM for the browser test: install Debian's package (apt-get install chromium); "
                    ".ci/run does")
    return path


@pytest.fixture(scope="module")
def served(demo_backend):
    env = {"SEMCACHE_BACKEND_URL": demo_backend.url + "/v1", "SEMCACHE_ADMIN_TOKEN": ADMIN_TOKEN, **fresh_dirs()}
    server = RunningServer(["serve"], env=env, ready_path="/readyz", timeout=240)
    session = "dash-" + uuid.uuid4().hex[:8]
    warm = httpx.post(server.url + "/admin/warmup", headers=ADMIN, timeout=60, json={"entries": [
        {"messages": [{"role": "user", "content": KYOTO}], "answer": KYOTO_ANSWER, "session_id": session},
        {"messages": [{"role": "user", "content": LISBON}], "answer": LISBON_ANSWER, "session_id": session}]})
    assert warm.status_code == 200, warm.text
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)
    outcomes = []
    for text in ("plan a 3-day trip to Kyoto with a budget of 2000 dollars, please", "Write a haiku about rain.",
                 "Give me three names for a grey cat.", "what should I pack for a week of hiking near Lisbon in April"):
        raw = client.chat.completions.with_raw_response.create(
            model="demo", messages=[{"role": "user", "content": text}], temperature=0,
            extra_headers={"X-Session-Id": session})
        outcomes.append(raw.headers["x-cache"])
    assert "HIT" in outcomes and "MISS" in outcomes, outcomes
    deadline = time.monotonic() + 30           # the counts reach the events table within TIMELINE_FLUSH_S
    while httpx.get(server.url + "/admin/timeline", headers=ADMIN).json()["totals"]["HIT"] < outcomes.count("HIT"):
        assert time.monotonic() < deadline, "the timeline never showed the requests"
        time.sleep(0.5)
    yield server, warm.json()["ids"], outcomes
    server.stop()


def test_timeline_api_counts_what_was_served(served):
    server, _, outcomes = served
    timeline = httpx.get(server.url + "/admin/timeline?window=day", headers=ADMIN).json()
    assert timeline["bucket_s"] == 300 and len(timeline["buckets"]) == 288
    for outcome in ("HIT", "MISS"):
        assert timeline["totals"][outcome] == outcomes.count(outcome), (timeline["totals"], outcomes)
    assert timeline["totals"]["saved_prefill"] > 0          # a warmed answer has no decode token count
    assert any(r.startswith("HIT ") for r in timeline["reasons"])
    assert timeline["latency"]["HIT"]["p50"][-1] is not None or timeline["latency"]["HIT"]["p50"][-2] is not None
    assert {d["domain"] for d in timeline["domains"]} and all("entries" in d for d in timeline["domains"])
    assert httpx.get(server.url + "/admin/timeline?window=year", headers=ADMIN).status_code == 400
    assert httpx.get(server.url + "/admin/timeline").status_code == 401
    nowhere = httpx.get(f"{server.url}/admin/entries/{uuid.uuid4().hex}/events", headers=ADMIN)
    assert nowhere.status_code == 404 and nowhere.json()["error"]["code"] == "entry_not_found"
    # the page itself holds no data; its assets are a fixed list
    page = httpx.get(server.url + "/admin/dashboard")
    assert page.status_code == 200 and "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert httpx.get(server.url + "/admin/dashboard/static/uPlot.iife.min.js").status_code == 200
    assert httpx.get(server.url + "/admin/dashboard/static/..%2Fdashboard.py").status_code == 404


def test_the_dashboard_in_a_browser(served):
    from playwright.sync_api import expect, sync_playwright
    server, ids, outcomes = served
    executable = chromium()
    shot = os.environ.get("SEMCACHE_TEST_DASHBOARD_SCREENSHOT") or os.path.join(tempfile.mkdtemp(), "dashboard.png")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        errors = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(server.url + "/admin/dashboard")
        # a wrong token is refused and stays on the sign-in form
        page.fill("#token", "not-the-token")
        page.click("#login-button")
        # (locator waits, not wait_for_function: the page's CSP forbids the eval that one needs)
        expect(page.locator("#login-error")).to_contain_text("refused", timeout=20_000)
        assert page.is_visible("#login") and not page.is_visible("#app")
        page.fill("#token", ADMIN_TOKEN)
        page.click("#login-button")
        page.wait_for_selector("body[data-loaded=true]", timeout=30_000)
        for chart in ("outcomes", "saved", "quality", "reasons", "latency"):
            assert page.locator(f"#chart-{chart} canvas").count() >= 1, chart
        cards = dict(zip(page.locator(".card .label").all_inner_texts(), page.locator(".card .value").all_inner_texts()))
        assert int(cards["HIT"]) == outcomes.count("HIT") and int(cards["MISS"]) == outcomes.count("MISS"), cards
        assert int(cards["saved prefill tokens"]) > 0
        assert page.locator("#domains-table tbody tr").count() >= 1
        assert "database" in page.inner_text("#health-table")
        page.screenshot(path=shot, full_page=True)
        # the entries browser: find the Lisbon answer by its text, open it, invalidate it after confirming
        page.click("button[data-tab=entries]")
        page.fill("#search-text", "rain shell")
        page.click("#search-button")
        expect(page.locator("#entries-table tbody tr")).to_have_count(1, timeout=20_000)
        row = page.locator("#entries-table tbody tr").first
        assert "ready" in row.inner_text()
        cache_id = row.locator("td").first.inner_text()
        assert cache_id in ids
        row.click()
        page.wait_for_selector("#entry-events tbody tr")
        assert LISBON_ANSWER in page.inner_text("#entry-answer")
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("#entry-invalidate")
        expect(page.locator("#entry-message")).to_contain_text("invalid", timeout=20_000)
        page.select_option("#search-state", "ready")
        page.click("#search-button")
        expect(page.locator("#entries-table")).to_have_attribute("data-count", "0", timeout=20_000)
        browser.close()
    assert not errors, errors
    assert httpx.get(f"{server.url}/admin/entries/{cache_id}", headers=ADMIN).json()["state"] == "invalid"
    events = httpx.get(f"{server.url}/admin/entries/{cache_id}/events", headers=ADMIN).json()["events"]
    assert [e["kind"] for e in events][-1] == "invalidate"
    with open(shot, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(shot) > 20_000
