"""`semcache replay`: replay conversation sets turn by turn through a real gateway, once per mode.

Modes: `nocache` (the cache off, and the embedded engine without prefix reuse or speculation: plain
inference), `exact` (only the same messages hit; the engine reuses prefixes and speculates from the
context) and `semantic` (semcache, which also sends a PARTIAL's matched answer as the draft). Each mode
gets a fresh gateway process and data dir. With the bundled engine the reference answer is replayed
as `forced_output`: every answer token still costs a forward step, and what the cache stores is the
logged answer, so the key-fact gates see real facts.

By default the modes run side by side (`order="interleaved"`): all gateways are up at once, and each turn
is sent to every mode before the session's next turn, the first mode rotating from turn to turn. A slow
minute of a shared machine then lands on every mode alike instead of on whichever mode ran in it, so the
ratios between modes hold from run to run. `order="sequential"` runs one mode after another, each with the
machine to itself (absolute latencies without the other modes' load).
"""
from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from gateway.settings import split_cores

MODES = ("nocache", "exact", "semantic")
ORDERS = ("interleaved", "sequential")
ADMIN_TOKEN = "replay-" + uuid.uuid4().hex[:12]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class GatewayProcess:
    """`semcache serve` for one mode, in its own process and data dir."""

    def __init__(self, mode: str, model: str, upstream: str | None, models_dir: Path, max_model_len: int,
                 promotion: str | None = None):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "SEMCACHE_DATA_DIR": tempfile.mkdtemp(prefix=f"semcache-replay-{mode}-"),
               "SEMCACHE_MODELS_DIR": str(models_dir), "SEMCACHE_ADMIN_TOKEN": ADMIN_TOKEN,
               "SEMCACHE_READY_DELAY_S": "0", "SEMCACHE_API_KEYS": "", "SEMCACHE_MAX_MESSAGES": "512",
               "SEMCACHE_CACHE_MODE": {"nocache": "off", "exact": "exact", "semantic": "semantic"}[mode],
               "SEMCACHE_ENGINE_PREFIX_CACHING": "false" if mode == "nocache" else "true",
               # nocache is plain inference; exact gets what any good backend has (prefix reuse, prompt
               # lookup); semantic adds the hits and the PARTIAL's cached-answer draft
               "SEMCACHE_ENGINE_SPECULATIVE": {"nocache": "off", "exact": "ngram", "semantic": "auto"}[mode],
               # every mode's engine gets the thread count the semantic gateway gives its in-process engine
               # (Settings.core_split): with three gateways on a few cores, the count alone moved nocache's and
               # exact's P50 by a third, which is not what a mode comparison measures
               "SEMCACHE_ENGINE_THREADS": os.environ.get("SEMCACHE_ENGINE_THREADS")
               or str(split_cores(os.cpu_count() or 1)[0]),
               "SEMCACHE_ENGINE_MAX_MODEL_LEN": str(max_model_len), "SEMCACHE_ENGINE_KV_CACHE_MEMORY": "256MiB",
               "SEMCACHE_BACKEND_URL": upstream or "embedded", "SEMCACHE_BACKEND_MODEL": model,
               "SEMCACHE_PROMOTION": promotion or "shadow"}
        for name in ("SEMCACHE_DATABASE_URL", "SEMCACHE_REDIS_URL", "SEMCACHE_CONFIG", "SEMCACHE_PROMOTION_MIN_SESSIONS"):
            env.pop(name, None)
        self.log = open(Path(env["SEMCACHE_DATA_DIR"]) / "gateway.log", "w+")
        self.proc = subprocess.Popen([sys.executable, "-m", "gateway.cli", "serve", "--host", "127.0.0.1",
                                      "--port", str(self.port), "--log-level", "warning"],
                                     env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.log.seek(0)
                raise RuntimeError(f"the {mode} gateway exited:\n{self.log.read()[-2000:]}")
            try:
                if httpx.get(self.url + "/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"the {mode} gateway did not become ready")

    def stats(self) -> dict:
        return httpx.get(self.url + "/admin/stats", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
                         timeout=30).json()

    def metric_samples(self, name: str) -> dict[str, float]:
        """The gateway's /metrics samples of one metric: {label text: value}."""
        text = httpx.get(self.url + "/metrics", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=30).text
        return {line[len(name):].rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                if line.startswith(name + "{") or line.startswith(name + " ")}

    def entries(self, **filters) -> list[dict]:
        out, offset = [], 0
        while True:
            page = httpx.get(self.url + "/admin/entries", params={**filters, "limit": 1000, "offset": offset},
                             headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=60).json()["entries"]
            out += page
            if len(page) < 1000:
                return out
            offset += 1000

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def replay_request(client: httpx.Client, url: str, session: dict, turn: int, model: str, max_tokens: int,
                   forced: bool, session_id: str) -> dict:
    """Send the session's request `turn` and time it: one row of the results."""
    request = session["requests"][turn]
    body = {"model": model, "messages": request["messages"], "max_tokens": max_tokens, "temperature": 0}
    if forced and request.get("answer"):
        body["forced_output"] = request["answer"]
        body["max_tokens"] = max(max_tokens, 4 * len(request["answer"]))
    started = time.perf_counter()
    try:
        # forced_output is an internal field: the gateway keeps it only for a caller with the admin token
        r = client.post(url + "/v1/chat/completions", json=body,
                        headers={"X-Session-Id": session_id, "X-Semcache-Admin-Token": ADMIN_TOKEN})
        status = r.status_code
        data = r.json() if status == 200 else {}
    except (httpx.HTTPError, ValueError):
        status, data, r = 599, {}, None
    elapsed = time.perf_counter() - started
    usage = data.get("usage") or {}
    cache = r.headers.get("x-cache") if r is not None else None
    served = ((data.get("choices") or [{}])[0].get("message") or {}).get("content")
    return {"wrong_answer": bool(request.get("exact_answer") and cache == "HIT" and served != request.get("answer")),
            "session": session["session_id"], "turn": turn, "label": request.get("label"),
            "kind": request.get("kind"), "lang": request.get("lang"), "status": status,
            "ms": elapsed * 1e3, "cache": cache,
            "reason": r.headers.get("x-cache-reason") if r is not None else None,
            "score": float(r.headers["x-cache-score"]) if r is not None and "x-cache-score" in r.headers
            else None, "prompt_tokens": usage.get("prompt_tokens", 0),
            "completion_tokens": usage.get("completion_tokens", 0),
            "cached_tokens": (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)}


def replay_session(client: httpx.Client, url: str, session: dict, model: str, max_tokens: int,
                   forced: bool, run_id: str, on_request=None) -> list[dict]:
    """The session's requests in order, to one gateway; `on_request()` after each one."""
    return replay_side_by_side(client, [("", url, run_id)], session, model, max_tokens, forced, 0, on_request)[""]


def replay_side_by_side(client: httpx.Client, targets: list[tuple[str, str, str]], session: dict, model: str,
                        max_tokens: int, forced: bool, rotation: int = 0, on_request=None) -> dict[str, list[dict]]:
    """The session's requests in order, each one sent to every target (name, url, run id) before the next
    turn; the target that goes first rotates with the turn (and `rotation`), so none is always first."""
    rows: dict[str, list[dict]] = {name: [] for name, _, _ in targets}
    for turn in range(len(session["requests"])):
        start = (turn + rotation) % len(targets)
        for name, url, run_id in targets[start:] + targets[:start]:
            rows[name].append(replay_request(client, url, session, turn, model, max_tokens, forced,
                                             f"{run_id}-{session['session_id']}"))
            if on_request:
                on_request()
    return rows


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(int(round(q * (len(values) - 1))), len(values) - 1)]


def _false_hit(row: dict) -> bool:
    """A HIT where none was right (label), or one that served another request's answer (sets whose answers
    are fixed per question, such as the help-desk set)."""
    return row["cache"] == "HIT" and (row["label"] != "hit" or row.get("wrong_answer", False))


def global_pool_audit(entries: list[dict], sessions: list[dict]) -> dict:
    """Entries in the global pool, and how many of them hold personal data: found by the PII patterns, or
    one of the details the set put into personal requests."""
    from validator.pii import has_pii
    details = {d for s in sessions for r in s["requests"] for d in r.get("personal") or []}
    pooled = [e for e in entries if e.get("scope") == "global" and e.get("state") != "invalid"]
    personal = [e for e in pooled if has_pii(e.get("request_text", ""), e.get("answer_text", ""))
                or any(d in e.get("request_text", "") or d in e.get("answer_text", "") for d in details)]
    return {"global_entries": len(pooled), "global_with_personal_data": len(personal)}


def summarize(rows: list[dict], stats: dict) -> dict:
    ok = [r for r in rows if r["status"] == 200]
    labelled = [r for r in ok if r["label"]]
    latencies = [r["ms"] for r in ok]
    hits = [r for r in ok if r["cache"] == "HIT"]
    return {"requests": len(rows), "errors": len(rows) - len(ok),
            "p50_ms": round(percentile(latencies, 0.5), 1), "p95_ms": round(percentile(latencies, 0.95), 1),
            "mean_ms": round(statistics.fmean(latencies), 1) if latencies else None,
            "hit_rate": round(len(hits) / max(len(ok), 1), 4),
            "partial_rate": round(sum(r["cache"] == "PARTIAL" for r in ok) / max(len(ok), 1), 4),
            "false_hit_rate": round(sum(_false_hit(r) for r in labelled) / max(len(labelled), 1), 6)
            if labelled else None,
            "false_hits": sum(_false_hit(r) for r in labelled),
            "reusable_share": round(sum(r["label"] == "hit" for r in labelled) / max(len(labelled), 1), 4)
            if labelled else None,
            "saved_prefill_tokens": int(stats.get("saved_prefill_tokens", 0)),
            "saved_decode_tokens": int(stats.get("saved_decode_tokens", 0)),
            "cache_pollution": int(stats.get("cache_pollution", 0)),
            "prefix_reuse": round(sum(r["cached_tokens"] for r in ok if r["cache"] != "HIT")
                                  / max(sum(r["prompt_tokens"] for r in ok if r["cache"] != "HIT"), 1), 4),
            "promotion": (stats.get("cache") or {}).get("promotion", {})}


WARM_SESSION = {"session_id": "warmup", "requests": [{"messages": [{"role": "user", "content": "Hello!"}],
                                                    "answer": "Hello! How can I help?"}]}


def _mode_summary(mode: str, gateway: GatewayProcess, rows: list[dict], sessions: list[dict]) -> dict:
    stats = gateway.stats()
    audit = global_pool_audit(gateway.entries(scope="global"), sessions) if mode == "semantic" else {}
    if mode == "semantic":
        evidence = gateway.metric_samples("semcache_promotion_evidence_total")
        audit["evidence"] = {k.strip("{}").replace('"', ""): int(v) for k, v in evidence.items()}
        audit["decision_ms"] = decision_stage_means(gateway)
    return {**summarize(rows, stats), **audit}


def decision_stage_means(gateway: GatewayProcess) -> dict[str, float]:
    """Mean milliseconds per decision stage (the gateway's semcache_decision_seconds histogram): where the
    semantic mode's time before the backend goes."""
    sums = gateway.metric_samples("semcache_decision_seconds_sum")
    counts = gateway.metric_samples("semcache_decision_seconds_count")
    stage = lambda labels: labels.strip("{}").split("=", 1)[-1].strip('"')
    return {stage(k): round(1e3 * v / counts[k], 2) for k, v in sums.items() if counts.get(k)}


def run_modes(runs: list[tuple[str, str | None]], sessions: list[dict], model: str, upstream: str | None,
              models_dir: Path, max_tokens: int, concurrency: int, max_model_len: int,
              on_request=None) -> dict[str, tuple[dict, list[dict]]]:
    """Every run (mode, promotion setting) in its own gateway, all up at once; each turn goes to all of them
    (replay_side_by_side; one run alone is the sequential order's step). Returns {name: (summary, rows)}."""
    gateways: dict[str, tuple[str, GatewayProcess]] = {}
    rows: dict[str, list[dict]] = {}
    lock = threading.Lock()
    try:
        for mode, setting in runs:
            name = f"{mode}+{setting}" if setting else mode
            gateways[name] = (mode, GatewayProcess(mode, model, upstream, models_dir, max_model_len, setting))
            rows[name] = []
        targets = [(name, gateway.url, uuid.uuid4().hex[:6]) for name, (_, gateway) in gateways.items()]
        with httpx.Client(timeout=600) as client:
            for name, url, run_id in targets:
                replay_session(client, url, WARM_SESSION, model, max_tokens, upstream is None, "warm-" + run_id)

            def one(numbered):
                index, session = numbered
                out = replay_side_by_side(client, targets, session, model, max_tokens, upstream is None, index,
                                          on_request)
                with lock:
                    for name, session_rows in out.items():
                        rows[name].extend(session_rows)
            with ThreadPoolExecutor(concurrency) as pool:
                list(pool.map(one, enumerate(sessions)))
        return {name: (_mode_summary(mode, gateway, rows[name], sessions), rows[name])
                for name, (mode, gateway) in gateways.items()}
    finally:
        for _, gateway in gateways.values():
            gateway.stop()


def print_table(results: dict) -> None:
    modes = results["modes"]
    width = max([9] + [len(m) for m in modes])
    print(f"{'mode':>{width}} {'requests':>8} {'p50 ms':>8} {'p95 ms':>8} {'hit':>7} {'partial':>8} "
          f"{'false hit':>10} {'prefix reuse':>12} {'saved prefill':>13} {'saved decode':>12}")
    for mode, m in modes.items():
        fhr = "-" if m["false_hit_rate"] is None else f"{m['false_hit_rate']:.4f}"
        print(f"{mode:>{width}} {m['requests']:>8} {m['p50_ms']:>8.1f} {m['p95_ms']:>8.1f} {m['hit_rate']:>7.3f} "
              f"{m['partial_rate']:>8.3f} {fhr:>10} {m['prefix_reuse']:>12.3f} {m['saved_prefill_tokens']:>13} "
              f"{m['saved_decode_tokens']:>12}")
    for mode, m in modes.items():
        if "global_entries" in m:
            counts = ", ".join(f"{k} {v}" for k, v in sorted(m["promotion"].items())) or "none"
            print(f"{mode}: false hits {m['false_hits']}; promotion states: {counts}; global pool "
                  f"{m['global_entries']} entries, {m['global_with_personal_data']} with personal data")
            if m.get("decision_ms"):
                print(f"{mode}: decision ms per request by stage (mean): "
                      + ", ".join(f"{k} {v}" for k, v in sorted(m["decision_ms"].items(), key=lambda kv: -kv[1])))
            if m.get("evidence"):
                print(f"{mode}: evidence (matches of other sessions' candidates by state and answer agreement): "
                      + ", ".join(f"{k} {v}" for k, v in sorted(m["evidence"].items())))
    off = modes.get("semantic+off")
    for mode, m in modes.items():
        if off is not None and mode.startswith("semantic+") and mode != "semantic+off":
            ratio = f"{m['hit_rate'] / off['hit_rate']:.2f}x" if off["hit_rate"] else "- (off served no HIT)"
            print(f"{mode} vs semantic+off: hit rate {ratio} ({m['hit_rate']:.3f} vs {off['hit_rate']:.3f})")
    base = modes.get("nocache")
    if base:
        for mode, m in modes.items():
            if mode != "nocache" and m["p50_ms"] and m["p95_ms"]:
                print(f"{mode} vs nocache: p50 {base['p50_ms'] / m['p50_ms']:.2f}x faster, "
                      f"p95 {base['p95_ms'] / m['p95_ms']:.2f}x faster")


def _request_counter(progress, total: int):
    """One shared count for the sessions' threads, reported as `progress(done, total)`."""
    lock = threading.Lock()
    done = 0

    def on_request() -> None:
        nonlocal done
        with lock:                     # sessions run on several threads; the bar must not go backwards
            done += 1
            progress(done, total)
    return on_request


def replay(dataset: str, sessions_count: int, modes: list[str], model: str = "demo", upstream: str | None = None,
           out: Path | None = None, plot: Path | None = None, max_tokens: int = 64, concurrency: int = 4,
           seed: int = 0, max_model_len: int = 4096, sweep: bool = True, progress=None,
           promotion: list[str] | None = None, order: str = "interleaved") -> dict:
    """`progress(done, total)`: requests replayed, over all modes (the warm-up request not counted).
    `promotion`: run the semantic mode once per promotion setting (off, shadow, auto), side by side.
    `order`: interleaved (every turn to every mode in turn, all gateways up at once) or sequential."""
    from gateway.replay.datasets import load_sessions
    from fingerprint.encoder import default_data_dir
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise ValueError(f"unknown mode(s) {unknown}; use {', '.join(MODES)}")
    bad = [p for p in promotion or [] if p not in ("off", "shadow", "auto")]
    if bad:
        raise ValueError(f"unknown promotion setting(s) {bad}; use off, shadow, auto")
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r}; use {', '.join(ORDERS)}")
    sessions = load_sessions(dataset, sessions_count, seed)
    if not sessions:
        raise ValueError("the dataset has no replayable sessions")
    models_dir = Path(os.environ.get("SEMCACHE_MODELS_DIR") or default_data_dir() / "models")
    results: dict = {"dataset": {"name": dataset, "sessions": len(sessions),
                                 "requests": sum(len(s["requests"]) for s in sessions)},
                     "model": upstream or model, "modes": {}, "rows": {}}
    runs = [(m, None) for m in modes if m != "semantic" or not promotion] + \
        ([("semantic", p) for p in promotion] if promotion and "semantic" in modes else [])
    on_request = _request_counter(progress, results["dataset"]["requests"] * len(runs)) if progress else None
    results["order"] = order
    done = {}
    for group in ([runs] if order == "interleaved" else [[run] for run in runs]):
        done.update(run_modes(group, sessions, model, upstream, models_dir, max_tokens, concurrency,
                              max_model_len, on_request))
    for name, (summary, rows) in done.items():
        results["modes"][name] = summary
        results["rows"][name] = rows
    labelled = any(r.get("label") for s in sessions for r in s["requests"])
    if sweep and labelled:
        from gateway.replay.calibrate import threshold_sweep
        results["sweep"] = threshold_sweep(sessions, models_dir)
    print_table(results)
    if out:
        Path(out).write_text(json.dumps(results, indent=1, ensure_ascii=False))
    if plot:
        from gateway.replay.plots import plot_results
        plot_results(results, Path(plot))
    return results
