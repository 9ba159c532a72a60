"""The labelled end-to-end suite (tests/data/decision_cases.json, EN + ZH, hard negatives included), over HTTP.

Each probe gets a fresh session holding only its scenario's cached turn (warm-up), and is sent with
`Cache-Control: no-store` so that no probe's answer changes another's outcome. The floors are stated
here; the one that may never move is zero wrong HITs.
"""
import json
import uuid
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests.conftest import ADMIN_TOKEN

CASES = json.loads((Path(__file__).parents[1] / "data" / "decision_cases.json").read_text())["scenarios"]
# measured 1/14 with the pair judge, which serves repeats and form-only edits but no reworded paraphrase at its
# threshold (8/14 with the change-intent classifier before it, which served 16 wrong HITs on the independent set)
HIT_RECALL_FLOOR = 0.07
PARTIAL_RECALL_FLOOR = 0.8   # measured 17/17
EXPECTED = {"hit": "HIT", "partial": "PARTIAL", "miss": "MISS"}


def probe_messages(scenario: dict, probe: dict) -> list[dict]:
    ask = {"role": "user", "content": probe["text"]}
    if probe["mode"] == "single":
        return [ask]
    return [*scenario["cached"], {"role": "assistant", "content": scenario["answer"]}, ask]


def run_probe(http: httpx.Client, url: str, scenario: dict, probe: dict) -> str:
    session = "suite-" + uuid.uuid4().hex[:10]
    warm = http.post(url + "/admin/warmup", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
                     json={"entries": [{"messages": scenario["cached"], "answer": scenario["answer"],
                                        "session_id": session, "tenant": "acme"}]})
    assert warm.status_code == 200 and warm.json()["written"] == 1, warm.text
    r = http.post(url + "/v1/chat/completions",
                  headers={"Authorization": "Bearer sk-acme-1", "X-Session-Id": session, "Cache-Control": "no-store"},
                  # room for the stored answer (a HIT honours max_tokens); the demo model stops early on a
                  # partial byte, which no stored answer holds
                  json={"model": "demo", "messages": probe_messages(scenario, probe), "max_tokens": 256,
                        "stop": ["\ufffd"]})
    assert r.status_code == 200, r.text
    return r.headers["x-cache"]


@pytest.fixture(scope="module")
def outcomes(cache_gateway):
    rows = []
    with httpx.Client(timeout=60) as http:
        for scenario in CASES:
            for probe in scenario["probes"]:
                got = run_probe(http, cache_gateway.url, scenario, probe)
                rows.append({"id": scenario["id"], "lang": scenario["lang"], "kind": probe["kind"],
                             "label": probe["label"], "got": got, "text": probe["text"]})
    return rows


def test_no_wrong_hits(outcomes):
    wrong = [r for r in outcomes if r["got"] == "HIT" and r["label"] != "hit"]
    assert not wrong, wrong


def test_recall_by_label_and_language(outcomes):
    table = Counter((r["label"], r["lang"], r["got"] == EXPECTED[r["label"]]) for r in outcomes)
    report = {}
    for label in EXPECTED:
        for lang in ("en", "zh", "all"):
            right = sum(v for (lb, lg, ok), v in table.items() if lb == label and ok and lang in (lg, "all"))
            total = sum(v for (lb, lg, _), v in table.items() if lb == label and lang in (lg, "all"))
            report[f"{label}_{lang}"] = f"{right}/{total}"
    print("\ndecision suite recall:", json.dumps(report))
    print("misses:", [(r["id"], r["text"], r["label"], r["got"]) for r in outcomes if r["got"] != EXPECTED[r["label"]]])

    def recall(label):
        rows = [r for r in outcomes if r["label"] == label]
        return sum(r["got"] == EXPECTED[label] for r in rows) / len(rows)
    assert recall("hit") >= HIT_RECALL_FLOOR, report
    assert recall("partial") >= PARTIAL_RECALL_FLOOR, report
    # a request labelled miss may never be served; as PARTIAL it only reuses the KV prefix
    assert all(r["got"] in ("MISS", "PARTIAL") for r in outcomes if r["label"] == "miss")
