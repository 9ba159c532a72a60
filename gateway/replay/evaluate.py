"""`semcache eval CASES.jsonl`: the decision gates measured on labelled cases.

Each case is an earlier request (system prompt + `seed`) with the answer cached for it (`seed_answer`), a
new request (system prompt + `probe`) and a label (`expected`: hit, partial or miss) saying whether that
answer may be served for the probe. For each case:

1. the seed is warmed as a ready entry in a session of its own (the admin warm-up path);
2. the probe is decided in that session: a HIT on a case not labelled `hit` is a wrong HIT;
3. the probe is decided from another session too: answers are scoped to their session, so that must never
   HIT.

In process by default (the real DecisionPipeline with the configured models over a fresh SQLite store in a
temporary folder; nothing touches the configured database), or against a running gateway with `--url`
(warm-up through POST /admin/warmup, probes through /v1/chat/completions with `Cache-Control: no-store`).
The case schema is in docs/decision.md ("Evaluating the gates").
"""
from __future__ import annotations

import json
import math
import shutil
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

LABELS = ("hit", "partial", "miss")
OUTCOMES = ("HIT", "PARTIAL", "MISS", "BYPASS")
EXPECTED = {"hit": "HIT", "partial": "PARTIAL", "miss": "MISS"}
# the domains whose risk policy serves stored answers (code_qa reuses context only; medical_legal and
# realtime are never cached): HIT recall is also reported over the hit cases labelled with one of these
SERVABLE_DOMAINS = ("travel_planning", "customer_support", "doc_rewrite", "product_recommendation", "chitchat")
HTTP_MAX_TOKENS = 1024          # a HIT honours max_tokens: room for any stored answer
TENANT = "eval"


# ---- cases --------------------------------------------------------------------------------------------------
def _turns(value, where: str) -> list[dict]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{where} must be a non-empty list of {{role, content}}")
    for i, turn in enumerate(value):
        if not isinstance(turn, dict) or turn.get("role") not in ("user", "assistant") \
                or not isinstance(turn.get("content"), str):
            raise ValueError(f"{where}[{i}] must be {{\"role\": \"user\"|\"assistant\", \"content\": string}}")
    if value[-1]["role"] != "user":
        raise ValueError(f"{where} must end with a user turn")
    return [{"role": t["role"], "content": t["content"]} for t in value]


def load_cases(path: str | Path) -> list[dict]:
    """The cases of a JSONL file, checked: a bad line is a ValueError naming the file and line."""
    cases, seen = [], set()
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"{where}: not a JSON line: {exc}") from None
            if not isinstance(record, dict):
                raise ValueError(f"{where}: a case must be a JSON object")
            try:
                system = record.get("system") or ""
                if not isinstance(system, str):
                    raise ValueError("'system' must be a string")
                seed, probe = _turns(record.get("seed"), "'seed'"), _turns(record.get("probe"), "'probe'")
                answer = record.get("seed_answer")
                if not isinstance(answer, str) or not answer.strip():
                    raise ValueError("'seed_answer' must be a non-empty string")
                expected = record.get("expected")
                if expected not in LABELS:
                    raise ValueError(f"'expected' must be one of {', '.join(LABELS)}")
                for key in ("id", "category", "lang", "domain"):
                    if record.get(key) is not None and not isinstance(record[key], str):
                        raise ValueError(f"'{key}' must be a string")
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}") from None
            case_id = record.get("id") or f"line-{number}"
            if case_id in seen:
                raise ValueError(f"{where}: duplicate id {case_id!r}")
            seen.add(case_id)
            cases.append({"id": case_id, "category": record.get("category") or "-", "lang": record.get("lang") or "-",
                          "domain": record.get("domain"), "system": system, "seed": seed, "seed_answer": answer,
                          "probe": probe, "expected": expected})
    if not cases:
        raise ValueError(f"{path} holds no cases")
    return cases


def with_system(system: str, turns: list[dict]) -> list[dict]:
    return ([{"role": "system", "content": system}] if system else []) + turns


def _row(case: dict) -> dict:
    return {"id": case["id"], "category": case["category"], "lang": case["lang"], "domain": case["domain"],
            "expected": case["expected"]}


# ---- in process ---------------------------------------------------------------------------------------------
def run_in_process(cases: list[dict], settings, progress=None) -> list[dict]:
    """Every case through the real pipeline (the configured models, thresholds and risk policy) over a fresh
    SQLite store in a temporary folder, removed afterwards."""
    from gateway.cache import CacheRequest, SemanticCache
    from gateway.cache.decision import cached_messages
    from gateway.cache.warmup import check_entry
    from gateway.chat import unsupported_feature
    from gateway.errors import GatewayError
    from gateway.metrics import GatewayMetrics
    from gateway.store import StoreConfig, open_store
    if settings.cache_mode == "off":
        raise ValueError("cache_mode is off: the gateway decides nothing to evaluate")
    folder = Path(tempfile.mkdtemp(prefix="semcache-eval-"))
    store = open_store(None, None, folder, StoreConfig(ready_delay_s=0, feedback_floor=settings.feedback_floor,
                                                       feedback_max_score=settings.feedback_max_score))
    try:
        cache = SemanticCache.build(store, GatewayMetrics(), settings.embedding_model, settings.model_dir,
                                    settings.risk_policy, settings.search_k, settings.duplicate_window_s,
                                    settings.cache_mode, settings.thresholds, settings.encoder_threads or None,
                                    allow_sampled_hits=settings.hit_sampled_requests,
                                    encoder_backend=settings.encoder_backend, gate_k=settings.gate_k)
        pipeline = cache.pipeline
        # the first decision loads and warms the models: not one of the measured ones
        warm_req = CacheRequest("eval-warm-up", "warm-up", [{"role": "user", "content": "hello there"}])
        pipeline.warm(warm_req, "Hello!", "session")
        pipeline.decide(warm_req)
        run = uuid.uuid4().hex[:8]
        rows = []
        for n, case in enumerate(cases):
            session, other = f"eval-{run}-{n}", f"eval-{run}-{n}-other"
            seed = CacheRequest(TENANT, session, with_system(case["system"], case["seed"]))
            try:        # the admin warm-up's input checks
                check_entry({"messages": seed.messages, "answer": case["seed_answer"], "session_id": session,
                             "tenant": TENANT}, 0, settings.max_messages, settings.max_cache_message_chars)
                cache_id, status = pipeline.warm(seed, case["seed_answer"], "session")
            except GatewayError as exc:
                cache_id, status = None, f"refused: {exc.message}"
            seed_domain = None
            if cache_id:
                entry = pipeline.store.get(cache_id)
                seed_domain = (entry.get("tags") or {}).get("intent_domain")
            probe = with_system(case["system"], case["probe"])
            # what the chat route does not cache (a message over max_cache_message_chars) is a BYPASS there too
            unsupported = unsupported_feature({"messages": probe}, settings.max_cache_message_chars)
            same = pipeline.decide(CacheRequest(TENANT, session, probe, store=False, unsupported=unsupported))
            cross = pipeline.decide(CacheRequest(TENANT, other, probe, store=False, unsupported=unsupported))
            fp = same.fingerprint
            rows.append({**_row(case), "warmed": status, "seed_cache_id": cache_id,
                         "outcome": same.outcome, "reason": same.reason,
                         "score": None if same.score is None else round(same.score, 4),
                         "cache_id": (same.entry or {}).get("cache_id"),
                         "intent_domain": fp.tags.intent_domain if fp is not None else None,
                         "seed_intent_domain": seed_domain,
                         "gates": same.gates, "latency_ms": round(same.timings_ms.get("total", 0.0), 3),
                         "timings_ms": {k: round(v, 3) for k, v in same.timings_ms.items()},
                         "cross_outcome": cross.outcome, "cross_reason": cross.reason,
                         "cross_cache_id": (cross.entry or {}).get("cache_id") if cross.outcome == "HIT" else None,
                         "cross_latency_ms": round(cross.timings_ms.get("total", 0.0), 3)})
            if progress:
                progress(n + 1, len(cases))
        _settle(pipeline.fingerprinter.encoder)
        return rows
    finally:
        store.close()
        shutil.rmtree(folder, ignore_errors=True)


def _settle(encoder, timeout_s: float = 30.0) -> None:
    """Wait until the encoder's idle-time work is done: a daemon thread still inside ONNX Runtime when the
    interpreter exits aborts the process."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        thread = getattr(encoder, "_idle_thread", None)
        if not getattr(encoder, "_idle_work", None) and (thread is None or not thread.is_alive()):
            return
        time.sleep(0.01)


# ---- over HTTP ----------------------------------------------------------------------------------------------
def run_http(cases: list[dict], url: str, admin_token: str, api_key: str | None = None, tenant: str = "default",
             model: str | None = None, progress=None) -> list[dict]:
    """Every case against a running gateway: warm-up through its admin API, probes through its chat route.
    A probe is streamed and closed once the headers (X-Cache, X-Cache-Reason) are read: a MISS never waits
    for, nor pays for, the whole answer, and `no-store` keeps the probes from writing entries."""
    import httpx
    base = url.rstrip("/")
    admin = {"authorization": f"Bearer {admin_token}"}
    chat_headers = {"cache-control": "no-store", **({"authorization": f"Bearer {api_key}"} if api_key else {})}
    try:
        return _run_http(cases, base, admin, chat_headers, tenant, model, progress)
    except httpx.HTTPError as exc:
        raise ValueError(f"the gateway at {base} failed: {exc.__class__.__name__}: {exc}") from None


def _run_http(cases, base, admin, chat_headers, tenant, model, progress) -> list[dict]:
    import httpx
    run = uuid.uuid4().hex[:8]
    rows = []
    with httpx.Client(timeout=httpx.Timeout(120.0, connect=10.0)) as http:
        def probe(messages: list[dict], session: str) -> tuple[dict, float]:
            body = {"messages": messages, "max_tokens": HTTP_MAX_TOKENS, "stream": True,
                    **({"model": model} if model else {})}
            started = time.perf_counter()
            with http.stream("POST", base + "/v1/chat/completions", json=body,
                             headers={**chat_headers, "x-session-id": session}) as r:
                elapsed = (time.perf_counter() - started) * 1e3
                if r.status_code != 200:
                    r.read()
                    raise ValueError(f"{base}/v1/chat/completions answered {r.status_code}: {r.text[:300]}")
                return dict(r.headers), elapsed

        for n, case in enumerate(cases):
            session, other = f"eval-{run}-{n}", f"eval-{run}-{n}-other"
            entry = {"messages": with_system(case["system"], case["seed"]), "answer": case["seed_answer"],
                     "session_id": session, "tenant": tenant, "scope": "session"}
            r = http.post(base + "/admin/warmup", json={"entries": [entry]}, headers=admin)
            if r.status_code == 400:            # this entry's input (too long, too many messages): not warmed
                warmed = {"cache_id": None, "status": f"refused: {_error_message(r)}"}
            elif r.status_code != 200:
                raise ValueError(f"{base}/admin/warmup answered {r.status_code}: {r.text[:300]}")
            else:
                warmed = r.json()["results"][0]
            messages = with_system(case["system"], case["probe"])
            same, latency = probe(messages, session)
            cross, cross_latency = probe(messages, other)
            score = same.get("x-cache-score")
            rows.append({**_row(case), "warmed": warmed["status"], "seed_cache_id": warmed["cache_id"],
                         "outcome": same.get("x-cache"), "reason": same.get("x-cache-reason"),
                         "score": float(score) if score else None,
                         "cache_id": same.get("x-cache-id"), "latency_ms": round(latency, 3),
                         "cross_outcome": cross.get("x-cache"), "cross_reason": cross.get("x-cache-reason"),
                         "cross_cache_id": cross.get("x-cache-id") if cross.get("x-cache") == "HIT" else None,
                         "cross_latency_ms": round(cross_latency, 3)})
            if progress:
                progress(n + 1, len(cases))
    return rows


def _error_message(response) -> str:
    try:
        return response.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return response.text[:300]


# ---- summary ------------------------------------------------------------------------------------------------
def percentile(values: list[float], q: float) -> float | None:
    """The nearest-rank percentile (q in 0..100)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def _recall(rows: list[dict], langs: list[str], want: str) -> dict:
    out = {}
    for lang in [*langs, "all"]:
        items = [r for r in rows if lang == "all" or r["lang"] == lang]
        got = sum(r["outcome"] == want for r in items)
        out[lang] = {"n": len(items), "got": got, "recall": round(got / len(items), 4) if items else None}
    return out


def _domain_tag(rows: list[dict]) -> dict | None:
    """How often the probe's domain tag is the case's domain, by domain (in process only: over HTTP the
    tag is not in the response)."""
    tagged = [r for r in rows if r.get("intent_domain") and r.get("domain")]
    if not tagged:
        return None
    by: dict = {}
    for r in tagged:
        cell = by.setdefault(r["domain"], {"n": 0, "got": 0, "as": Counter()})
        cell["n"] += 1
        cell["got"] += r["intent_domain"] == r["domain"]
        cell["as"][r["intent_domain"]] += r["intent_domain"] != r["domain"]
    return {"n": len(tagged), "got": sum(c["got"] for c in by.values()),
            "by_domain": {d: {"n": c["n"], "got": c["got"], "wrong_as": dict(+c["as"])} for d, c in sorted(by.items())}}


def summarize(rows: list[dict], mode: str = "in_process") -> dict:
    langs = sorted({r["lang"] for r in rows})
    wrong = [r for r in rows if r["outcome"] == "HIT" and r["expected"] != "hit"]
    cross = [r for r in rows if r["cross_outcome"] == "HIT"]
    hits = [r for r in rows if r["expected"] == "hit"]
    categories: dict = {}
    for r in rows:
        cell = categories.setdefault(r["category"], {}).setdefault(r["lang"], {
            "n": 0, "expected": dict.fromkeys(LABELS, 0), "outcomes": dict.fromkeys(OUTCOMES, 0), "wrong_hits": 0})
        cell["n"] += 1
        cell["expected"][r["expected"]] += 1
        cell["outcomes"][r["outcome"]] = cell["outcomes"].get(r["outcome"], 0) + 1
        cell["wrong_hits"] += r["outcome"] == "HIT" and r["expected"] != "hit"
    latencies = [r["latency_ms"] for r in rows if r.get("latency_ms") is not None]
    return {
        "mode": mode, "cases": len(rows), "languages": langs,
        "labels": dict(Counter(r["expected"] for r in rows)),
        "wrong_hits": len(wrong),
        "wrong_hit_cases": [{k: r[k] for k in ("id", "category", "lang", "expected", "reason", "score")}
                            for r in wrong],
        "non_hit_cases": sum(r["expected"] != "hit" for r in rows),
        "cross_session_hits": len(cross),
        "cross_session_hit_cases": [{k: r[k] for k in ("id", "category", "lang", "cross_reason", "cross_cache_id")}
                                    for r in cross],
        "hit_recall": _recall(hits, langs, "HIT"),
        "hit_recall_servable": _recall([r for r in hits if r["domain"] in SERVABLE_DOMAINS], langs, "HIT"),
        "partial_recall": _recall([r for r in rows if r["expected"] == "partial"], langs, "PARTIAL"),
        "miss_recall": _recall([r for r in rows if r["expected"] == "miss"], langs, "MISS"),
        "domain_tag": _domain_tag(rows),
        "missed_hit_reasons": dict(Counter(r["reason"] for r in hits if r["outcome"] != "HIT").most_common()),
        "not_warmed": dict(Counter(r["warmed"] for r in rows if not r["seed_cache_id"])),
        "categories": categories,
        "latency_ms": {"what": "in-process decision of the same-session probe" if mode == "in_process"
                       else "HTTP time to the response headers of the same-session probe",
                       "n": len(latencies), "p50": percentile(latencies, 50), "p99": percentile(latencies, 99),
                       "max": max(latencies) if latencies else None},
    }


def _fraction(cell: dict) -> str:
    if not cell["n"]:
        return "-"
    return f"{cell['got']}/{cell['n']} {cell['recall']:.2f}"


def report(summary: dict) -> str:
    """The summary as the command prints it."""
    langs = [*summary["languages"], "all"]
    lines = [f"{summary['cases']} cases ({', '.join(f'{k} {v}' for k, v in sorted(summary['labels'].items()))}); "
             f"{'in process' if summary['mode'] == 'in_process' else 'over HTTP'}"]
    if summary["not_warmed"]:
        lines.append("seeds not warmed (policy): " + ", ".join(f"{k} {v}" for k, v in summary["not_warmed"].items()))
    lines.append("")
    lines.append(f"wrong HITs: {summary['wrong_hits']} of {summary['non_hit_cases']} non-hit cases (must be 0)")
    for w in summary["wrong_hit_cases"]:
        score = "-" if w["score"] is None else f"{w['score']:.4f}"
        lines.append(f"  {w['id']:<28} {w['category']:<26} {w['lang']:<3} {w['expected']:<8} {w['reason']:<20} "
                     f"{score}")
    lines.append(f"cross-session HITs: {summary['cross_session_hits']} (must be 0)")
    for w in summary["cross_session_hit_cases"]:
        lines.append(f"  {w['id']:<28} {w['category']:<26} {w['lang']:<3} {w['cross_reason']}")
    lines.append("")
    width = 16
    lines.append(f"{'recall':<30}" + "".join(f"{lang:>{width}}" for lang in langs))
    for title, key in (("HIT (all hit cases)", "hit_recall"), ("HIT (servable domains)", "hit_recall_servable"),
                       ("PARTIAL", "partial_recall"), ("MISS", "miss_recall")):
        lines.append(f"{title:<30}" + "".join(f"{_fraction(summary[key][lang]):>{width}}" for lang in langs))
    tag = summary.get("domain_tag")
    if tag:
        lines.append(f"domain tag = case domain: {tag['got']}/{tag['n']} ("
                     + ", ".join(f"{d} {c['got']}/{c['n']}" for d, c in tag["by_domain"].items()) + ")")
    if summary["missed_hit_reasons"]:
        lines.append("hit cases not served, by reason: "
                     + ", ".join(f"{k} {v}" for k, v in summary["missed_hit_reasons"].items()))
    lines.append("")
    lines.append(f"{'category':<26} {'lang':<4} {'n':>4}  {'expected h/p/m':>14}  "
                 + " ".join(f"{o:>7}" for o in OUTCOMES) + f" {'wrong':>6}")
    for category, by_lang in summary["categories"].items():
        for lang in sorted(by_lang):
            cell = by_lang[lang]
            expected = "/".join(str(cell["expected"][label]) for label in LABELS)
            lines.append(f"{category:<26} {lang:<4} {cell['n']:>4}  {expected:>14}  "
                         + " ".join(f"{cell['outcomes'].get(o, 0):>7}" for o in OUTCOMES)
                         + f" {cell['wrong_hits']:>6}")
    latency = summary["latency_ms"]
    lines.append("")
    if latency["n"]:
        lines.append(f"latency ({latency['what']}, n={latency['n']}): p50 {latency['p50']:.1f} ms, "
                     f"p99 {latency['p99']:.1f} ms, max {latency['max']:.1f} ms")
    return "\n".join(lines)


def evaluate(path: str | Path, settings, url: str | None = None, admin_token: str | None = None,
             api_key: str | None = None, tenant: str = "default", model: str | None = None,
             out: Path | None = None, progress=None) -> dict:
    """Run the cases, write `out` (rows and summary) when given; returns {"rows", "summary"}."""
    cases = load_cases(path)
    if url:
        if not admin_token:
            raise ValueError("--url needs the gateway's admin token (--admin-token or SEMCACHE_ADMIN_TOKEN)")
        rows = run_http(cases, url, admin_token, api_key, tenant, model, progress)
    else:
        rows = run_in_process(cases, settings, progress)
    summary = summarize(rows, "http" if url else "in_process")
    summary["file"] = str(path)
    result = {"summary": summary, "rows": rows}
    if out is not None:
        Path(out).write_text(json.dumps(result, ensure_ascii=False, indent=1))
    return result
