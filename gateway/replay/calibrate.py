"""Thresholds from replayed data: `semcache calibrate FILE --max-false-hit 1e-4`.

The sweep runs the decision pipeline in-process over a labelled set with every
threshold at zero, so each request's best candidate goes through the gates;
it records the candidate's score, whether the gates passed, the domain and the
label, and writes each answer as the gateway would. A threshold t then gives a
HIT exactly where the gates passed and the score is at least t, so one pass
yields hit rate and false-hit rate for every t.

Per domain, `candidate` is the lowest t whose false-hit rate meets the bound
(the most hits for the risk); `accept` is the lowest t above which no request
labelled non-reusable scored at all, before any gate, and never below
`candidate`. The false-hit rate's 95% upper bound is the exact Clopper-Pearson
bound (a beta quantile): a threshold is certified only when that bound meets
the target, and an uncertified one is written only with `--force`. The file is
edited with tomlkit, so its comments and order survive.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import tomlkit
from scipy.stats import beta

GRID = [round(0.70 + 0.005 * i, 3) for i in range(60)]


def threshold_sweep(sessions: list[dict], models_dir: Path | None = None, progress=None) -> list[dict]:
    """`progress(done, total)`: requests swept, after each one."""
    from gateway.cache import CacheRequest, SemanticCache
    from gateway.metrics import GatewayMetrics
    from gateway.store import StoreConfig, open_store
    folder = Path(tempfile.mkdtemp(prefix="semcache-sweep-"))
    store = open_store(None, None, folder, StoreConfig(ready_delay_s=0))
    try:
        cache = SemanticCache.build(store, GatewayMetrics(), models_dir=models_dir)
        policies = cache.pipeline.policies
        for table in [policies.default, *policies.domains.values()]:
            table.update(accept=0.0, candidate=0.0)
        rows = []
        total = sum(len(s["requests"]) for s in sessions)
        for session in sessions:
            for i, request in enumerate(session["requests"]):
                req = CacheRequest("sweep", session["session_id"], request["messages"])
                decision = cache.pipeline.decide(req)
                fp = decision.fingerprint
                rows.append({"session": session["session_id"], "turn": i, "label": request.get("label"),
                             "kind": request.get("kind"), "domain": fp.tags.intent_domain if fp else None,
                             "score": decision.score, "passed": decision.outcome == "HIT",
                             "reason": decision.reason})
                if decision.outcome != "HIT" and request.get("answer"):
                    cache.pipeline.write(req, decision, request["answer"],
                                         {"completion_tokens": max(len(request["answer"]) // 4, 1)})
                if progress:
                    progress(len(rows), total)
        return rows
    finally:
        store.close()


def upper_bound(false_hits: int, n: int, confidence: float = 0.95) -> float:
    """The exact (Clopper-Pearson) upper end of the two-sided `confidence` interval of a binomial rate."""
    if n <= 0 or false_hits >= n:
        return 1.0
    return float(beta.ppf(1 - (1 - confidence) / 2, false_hits + 1, n - false_hits))


def requests_to_certify(false_hits: int, n: int, target: float) -> int:
    """How many requests in all (with no further false hit) bring the upper bound down to `target`."""
    if upper_bound(false_hits, n) <= target:
        return n
    high = max(n, 1)
    while upper_bound(false_hits, high) > target:
        high *= 2
    low = high // 2
    while low + 1 < high:
        mid = (low + high) // 2
        low, high = (low, mid) if upper_bound(false_hits, mid) <= target else (mid, high)
    return high


def curves(rows: list[dict]) -> dict:
    """Hit rate and false-hit rate against the threshold, over all labelled rows."""
    labelled = [r for r in rows if r.get("label")]
    n = max(len(labelled), 1)
    out = {"threshold": GRID, "hit_rate": [], "false_hit_rate": []}
    for t in GRID:
        hits = [r for r in labelled if r["passed"] and r["score"] is not None and r["score"] >= t]
        out["hit_rate"].append(len(hits) / n)
        out["false_hit_rate"].append(sum(r["label"] != "hit" for r in hits) / n)
    return out


def choose_thresholds(rows: list[dict], max_false_hit: float) -> dict:
    by_domain: dict[str, list[dict]] = {}
    for r in rows:
        if r.get("label") and r.get("domain"):
            by_domain.setdefault(r["domain"], []).append(r)
    out = {}
    for domain, items in sorted(by_domain.items()):
        n = len(items)
        if not any(r["passed"] for r in items):
            out[domain] = {"n": n, "cacheable_at_bound": False,
                           "statement": f"{domain}: {n} requests, none passed the gates (or its policy serves no "
                                        f"direct hits); thresholds unchanged"}
            continue
        chosen = None
        for t in GRID:
            false_hits = sum(r["passed"] and r["score"] is not None and r["score"] >= t and r["label"] != "hit"
                             for r in items)
            if false_hits / n <= max_false_hit:
                chosen = (t, false_hits)
                break
        if chosen is None:
            out[domain] = {"n": n, "cacheable_at_bound": False,
                           "statement": f"{domain}: no threshold up to {GRID[-1]} meets {max_false_hit:g} on "
                                        f"{n} requests; keep its current thresholds"}
            continue
        t, false_hits = chosen
        negatives = [r["score"] for r in items if r["label"] != "hit" and r["score"] is not None]
        accept = max(t, min((g for g in GRID if all(s < g for s in negatives)), default=GRID[-1]))
        hits = sum(r["passed"] and r["score"] is not None and r["score"] >= t for r in items)
        bound = upper_bound(false_hits, n)
        more = requests_to_certify(false_hits, n, max_false_hit) - n
        statement = (f"{domain}: {n} requests, {false_hits} false hits at candidate {t:.3f} "
                     f"(hit rate {hits / n:.3f}); 95% upper bound (Clopper-Pearson) on the false-hit rate "
                     f"{bound:.2e}" + (f", certified at {max_false_hit:g}" if bound <= max_false_hit else
                                       f" - above {max_false_hit:g}: not certified; {more:,} more requests "
                                       f"without a false hit would certify it"))
        out[domain] = {"n": n, "candidate": t, "accept": accept, "false_hits": false_hits,
                       "hit_rate": round(hits / n, 4), "upper_bound_95": bound,
                       "certified": bound <= max_false_hit, "cacheable_at_bound": True, "statement": statement}
    return out


def write_thresholds(config: Path, chosen: dict, force: bool = False) -> dict:
    """Merge certified thresholds (all found ones with `force`) into the file's [thresholds.<domain>] tables,
    keeping every other key, comment and the order. Returns what was written."""
    document = tomlkit.parse(config.read_text()) if config.exists() else tomlkit.document()
    if "thresholds" not in document:
        document["thresholds"] = tomlkit.table(is_super_table=True)
    written = {}
    for domain, result in chosen.items():
        if result.get("cacheable_at_bound") and (result.get("certified") or force):
            values = {"accept": result["accept"], "candidate": result["candidate"]}
            table = tomlkit.table()
            table.update(values)
            document["thresholds"][domain] = table
            written[domain] = values
    if written:
        config.write_text(tomlkit.dumps(document))
    return written


def calibrate(path: Path, max_false_hit: float, config: Path, sessions_count: int | None = None,
              force: bool = False, progress=None) -> dict:
    """FILE: a labelled JSONL set (or `generated`), or a replay results.json that holds a sweep.
    `progress(done, total)`: requests swept (none for a results.json, whose sweep is already done)."""
    from gateway.replay.datasets import load_sessions
    if str(path).endswith(".json") and Path(path).exists():
        rows = json.loads(Path(path).read_text()).get("sweep")
        if not rows:
            raise ValueError(f"{path} has no 'sweep' rows: replay a labelled set to produce them")
    else:
        sessions = load_sessions(str(path), sessions_count or 10_000)
        if not any(r.get("label") for s in sessions for r in s["requests"]):
            raise ValueError(f"{path} carries no labels; calibration needs hit/partial/miss labels")
        rows = threshold_sweep(sessions, progress=progress)
    chosen = choose_thresholds(rows, max_false_hit)
    written = write_thresholds(config, chosen, force)
    return {"rows": len(rows), "domains": chosen, "written": written, "config": str(config)}
