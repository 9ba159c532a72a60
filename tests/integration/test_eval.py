"""`semcache eval CASES.jsonl` as users run it: in process (the real pipeline over a fresh store) and against a
running gateway (`--url`), on a small labelled file of the project's own (tests/data/eval_cases.jsonl).

One case there is an exact repeat deliberately labelled `partial`: its seed answer is served, so the command
must count it as a wrong HIT and exit with status 1."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ADMIN_TOKEN, ROOT, RunningServer, fresh_dirs, models_dir

CASES = Path(__file__).parents[1] / "data" / "eval_cases.jsonl"
FORCED = "own-en-cs-001"                   # an exact repeat labelled partial
REPEATS = ("own-en-travel-001", "own-zh-prod-001")    # exact repeats labelled hit


def cli(args, timeout=600):
    env = {**os.environ, "SEMCACHE_MODELS_DIR": models_dir()}
    return subprocess.run([sys.executable, "-m", "gateway.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def in_process(tmp_path_factory):
    out = tmp_path_factory.mktemp("eval") / "eval.json"
    done = cli(["eval", str(CASES), "--json", str(out)])
    return done, json.loads(out.read_text()) if out.exists() else None


def test_in_process_counts_a_served_partial_as_a_wrong_hit(in_process):
    done, result = in_process
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    summary, rows = result["summary"], result["rows"]
    ids = [json.loads(line)["id"] for line in CASES.read_text().splitlines() if line.strip()]
    assert [r["id"] for r in rows] == ids
    by_id = {r["id"]: r for r in rows}
    assert summary["mode"] == "in_process" and summary["cases"] == len(ids) == 6
    assert summary["languages"] == ["en", "zh"] and summary["labels"] == {"hit": 2, "partial": 2, "miss": 2}
    # the wrong HIT: the seed answer served to a probe labelled partial
    assert by_id[FORCED]["outcome"] == "HIT" and by_id[FORCED]["score"] == pytest.approx(1.0, abs=1e-3)
    assert summary["wrong_hits"] == 1 and summary["non_hit_cases"] == 4
    assert [w["id"] for w in summary["wrong_hit_cases"]] == [FORCED]
    assert summary["wrong_hit_cases"][0]["reason"] == "accept"
    # answers are scoped to their session: no probe from another session is served
    assert summary["cross_session_hits"] == 0 and all(r["cross_outcome"] != "HIT" for r in rows)
    # recall: the two exact repeats labelled hit are served, per language and over the servable domains
    for rid in REPEATS:
        assert by_id[rid]["outcome"] == "HIT", by_id[rid]
    for key in ("hit_recall", "hit_recall_servable"):
        assert summary[key]["en"] == {"n": 1, "got": 1, "recall": 1.0}
        assert summary[key]["zh"] == {"n": 1, "got": 1, "recall": 1.0}
        assert summary[key]["all"] == {"n": 2, "got": 2, "recall": 1.0}
    assert summary["partial_recall"]["all"]["n"] == 2 and summary["partial_recall"]["zh"]["n"] == 0
    assert summary["partial_recall"]["zh"]["recall"] is None
    assert summary["miss_recall"]["zh"]["n"] == 2 and summary["miss_recall"]["en"]["n"] == 0
    # a live-data seed is never written: the probe decides without it
    assert by_id["own-zh-rt-001"]["warmed"] == "policy:realtime" and by_id["own-zh-rt-001"]["outcome"] == "MISS"
    assert summary["not_warmed"] == {"policy:realtime": 1}
    # the per-category table
    cell = summary["categories"]["exact_repeat"]["en"]
    assert cell["n"] == 2 and cell["expected"] == {"hit": 1, "partial": 1, "miss": 0}
    assert cell["outcomes"]["HIT"] == 2 and cell["wrong_hits"] == 1
    assert set(summary["categories"]) == {"exact_repeat", "number_change", "entity_change", "realtime"}
    assert sum(c["n"] for by_lang in summary["categories"].values() for c in by_lang.values()) == 6
    latency = summary["latency_ms"]
    assert latency["n"] == 6 and 0 < latency["p50"] <= latency["p99"] <= latency["max"]
    assert all(r["timings_ms"]["total"] == r["latency_ms"] for r in rows)
    # what it prints
    out = done.stdout
    assert "wrong HITs: 1 of 4 non-hit cases (must be 0)" in out
    line = next(line for line in out.splitlines() if FORCED in line)
    assert "exact_repeat" in line and " en " in line and "accept" in line and "1.0000" in line
    assert "cross-session HITs: 0 (must be 0)" in out
    assert "HIT (all hit cases)" in out and "HIT (servable domains)" in out
    assert "PARTIAL" in out and "MISS" in out
    recall = next(line for line in out.splitlines() if line.startswith("HIT (all hit cases)")).split()
    assert recall[-6:] == ["1/1", "1.00", "1/1", "1.00", "2/2", "1.00"]
    row = next(line for line in out.splitlines() if line.startswith("exact_repeat") and " en " in line).split()
    assert row == ["exact_repeat", "en", "2", "1/1/0", "2", "0", "0", "0", "1"]
    assert "latency (in-process decision" in out and "p50" in out and "p99" in out


def test_exit_status_0_without_a_wrong_hit(tmp_path):
    cases, out = tmp_path / "cases.jsonl", tmp_path / "out.json"
    lines = [line for line in CASES.read_text().splitlines() if line.strip() and json.loads(line)["id"] != FORCED]
    # a message longer than max_cache_message_chars: the warm-up refuses it and the chat route forwards it
    long = {**json.loads(lines[0]), "id": "own-en-long-001", "expected": "miss", "category": "too_long"}
    long["seed"] = long["probe"] = [{"role": "user", "content": "Describe this itinerary. " + "Walk. " * 400}]
    cases.write_text("".join(line + "\n" for line in [*lines, json.dumps(long)]))
    env = {**os.environ, "SEMCACHE_MODELS_DIR": models_dir(), "SEMCACHE_MAX_CACHE_MESSAGE_CHARS": "1000"}
    done = subprocess.run([sys.executable, "-m", "gateway.cli", "eval", str(cases), "--json", str(out)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "wrong HITs: 0 of 4 non-hit cases" in done.stdout
    row = json.loads(out.read_text())["rows"][-1]
    assert row["warmed"].startswith("refused: ") and "too long" in row["warmed"]
    assert row["outcome"] == row["cross_outcome"] == "BYPASS" and row["reason"] == "unsupported:too_long"


def test_a_bad_case_is_a_message_naming_its_line(tmp_path):
    first = CASES.read_text().splitlines()[0]
    bad = json.loads(first)
    bad["expected"] = "maybe"
    cases = tmp_path / "cases.jsonl"
    cases.write_text(first + "\n" + json.dumps(bad) + "\n")
    done = cli(["eval", str(cases)])
    assert done.returncode == 2 and f"{cases}:2: 'expected' must be one of hit, partial, miss" in done.stderr
    del bad["probe"]
    cases.write_text(json.dumps(bad) + "\n")
    done = cli(["eval", str(cases)])
    assert done.returncode == 2 and "'probe' must be a non-empty list" in done.stderr


@pytest.fixture(scope="module")
def eval_gateway(demo_backend):
    """A gateway with API keys and an admin token of its own, in front of the demo backend."""
    server = RunningServer(["serve"], env={"SEMCACHE_BACKEND_URL": demo_backend.url + "/v1", **fresh_dirs(),
                                           "SEMCACHE_API_KEYS": "sk-eval-1:evalco", "SEMCACHE_ADMIN_TOKEN": ADMIN_TOKEN},
                           ready_path="/readyz")
    yield server
    server.stop()


def test_over_http_the_gateway_decides_as_the_pipeline_does(eval_gateway, in_process, tmp_path):
    out = tmp_path / "http.json"
    done = cli(["eval", str(CASES), "--url", eval_gateway.url, "--admin-token", ADMIN_TOKEN,
                "--api-key", "sk-eval-1", "--tenant", "evalco", "--json", str(out)])
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    result = json.loads(out.read_text())
    summary, rows = result["summary"], result["rows"]
    assert summary["mode"] == "http" and [w["id"] for w in summary["wrong_hit_cases"]] == [FORCED]
    assert summary["cross_session_hits"] == 0
    by_id = {r["id"]: r for r in rows}
    assert by_id[FORCED]["cache_id"] == by_id[FORCED]["seed_cache_id"]       # the warmed entry was served
    # the same models and thresholds: the same decisions as in process
    assert [(r["id"], r["outcome"], r["reason"]) for r in rows] == \
        [(r["id"], r["outcome"], r["reason"]) for r in in_process[1]["rows"]]
    assert "latency (HTTP time to the response headers" in done.stdout
    # the admin token is checked
    denied = cli(["eval", str(CASES), "--url", eval_gateway.url, "--admin-token", "wrong"])
    assert denied.returncode == 2 and "/admin/warmup answered 401" in denied.stderr
