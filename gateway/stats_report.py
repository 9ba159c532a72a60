"""`semcache stats --url URL`: a running gateway's /admin/stats as a short report for an operator.

Problems (the gateway is down, the token is refused) are ValueErrors with a one-line message: the CLI
prints them as `semcache: error: ...` with exit status 2, never a traceback.
"""
from __future__ import annotations

import math
import sys

TIMEOUT_S = 10.0
TEXT_COLUMNS = ("stage", "name", "state")


def fetch_stats(url: str, token: str | None) -> dict:
    import httpx
    target = url.rstrip("/") + "/admin/stats"
    try:
        response = httpx.get(target, headers={"authorization": f"Bearer {token or ''}"}, timeout=TIMEOUT_S)
    except httpx.HTTPError as exc:
        reason = (str(exc).strip().splitlines() or [exc.__class__.__name__])[0]
        raise ValueError(f"cannot reach {target}: {reason}") from None
    if response.status_code == 401:
        raise ValueError(f"{target} answered 401: the admin token was refused "
                         "(pass --admin-token or set SEMCACHE_ADMIN_TOKEN)")
    if response.status_code != 200:
        body = " ".join(response.text.split())[:200]
        raise ValueError(f"{target} answered {response.status_code}: {body}")
    try:
        stats = response.json()
    except ValueError:
        raise ValueError(f"{target} did not answer JSON: is this a semcache gateway?") from None
    if not isinstance(stats, dict):
        raise ValueError(f"{target} answered {type(stats).__name__}, not the stats object")
    return stats


# ---- what is shown -----------------------------------------------------------------------------------------
def _count(value) -> str:
    return f"{int(value or 0):,}"


def _percent(value) -> str:
    return "-" if value is None else f"{100 * float(value):.1f}%"


def _ms(value) -> str:
    if value is None:
        return "-"
    value = float(value)
    # the quantiles are histogram bucket bounds: past the last bucket there is no finite bound to show
    return "> last bucket" if math.isinf(value) else f"{value:g}"


def _uptime(seconds) -> str:
    seconds = int(seconds or 0)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return (f"{days}d " if days else "") + f"{hours:02d}:{minutes:02d}:{secs:02d}"


def _pairs(mapping: dict | None) -> str:
    if not mapping:
        return "none"
    return ", ".join(f"{key} {_count(value)}" for key, value in sorted(mapping.items(), key=lambda kv: -kv[1]))


def summary_lines(stats: dict) -> list[str]:
    requests = stats.get("requests") or {}
    cache = stats.get("cache") or {}
    breaker = stats.get("breaker") or {}
    breaker_line = f"breaker: {breaker.get('state', '?')}"
    details = [f"{k.replace('_', ' ')} {breaker[k]}" for k in ("consecutive_failures", "opened", "retry_in_s",
                                                               "degraded_for_s") if breaker.get(k) is not None]
    if breaker.get("last_error"):
        details.append(f"last error {breaker['last_error']}")
    lines = [
        f"uptime {_uptime(stats.get('uptime_s'))}, backend {stats.get('backend', '?')}, "
        f"routing {stats.get('routing', '?')}",
        f"requests: {_count(sum(requests.values()))} ({_pairs(requests)})",
        f"hit rate {_percent(stats.get('hit_rate'))}, partial rate {_percent(stats.get('partial_rate'))}, "
        f"precision proxy {_percent(stats.get('precision_proxy'))}, "
        f"cache pollution {_count(stats.get('cache_pollution'))}",
        f"saved tokens: prefill {_count(stats.get('saved_prefill_tokens'))}, "
        f"decode {_count(stats.get('saved_decode_tokens'))}",
        f"entries: {_pairs(cache.get('entries'))}; indexed {_count(cache.get('indexed'))}, "
        f"hits {_count(cache.get('hits'))}, saved tokens {_count(cache.get('saved_tokens'))}",
        breaker_line + (f" ({', '.join(details)})" if details else ""),
    ]
    health = stats.get("health")
    if isinstance(health, dict):          # newer gateways: each dependency asked on its own
        shown = {True: "up", False: "DOWN", None: "not used"}
        lines.append("dependencies: " + ", ".join(f"{name} {shown.get(value, value)}"
                                                   for name, value in health.items()))
    if stats.get("upstream_errors"):
        lines.append(f"upstream errors: {_pairs(stats['upstream_errors'])}")
    return lines


def tables(stats: dict) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, headers, rows) for the decision latency per stage and the backend replicas."""
    latency = [[stage, _count(q.get("count")), _ms(q.get("p50_ms_le")), _ms(q.get("p99_ms_le"))]
               for stage, q in sorted((stats.get("decision_latency") or {}).items())]
    replicas = [[str(r.get("name", "?")), str(r.get("state", "?")), _count(r.get("in_flight")),
                 _count(r.get("requests")), _count(r.get("errors")), _count(r.get("ejections")),
                 _percent(r.get("cached_share"))] for r in stats.get("replicas") or []]
    return [("decision latency (ms, bucket bounds)", ["stage", "count", "p50 <=", "p99 <="], latency),
            ("replicas", ["name", "state", "in flight", "requests", "errors", "ejections", "cached share"],
             replicas)]


# ---- how it is shown ---------------------------------------------------------------------------------------
def print_report(stats: dict, url: str, out=None) -> None:
    out = out or sys.stdout
    try:
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text
    except ImportError:                   # rich is a dependency; a stripped install still gets the report
        _print_plain(stats, url, out)
        return
    # a pipe gets the same layout as a wide terminal, without colour codes
    terminal = getattr(out, "isatty", lambda: False)()
    console = Console(file=out, width=None if terminal else 120, highlight=False)
    console.print(f"semcache gateway {url}", style="bold", markup=False)
    for line in summary_lines(stats):
        console.print(line, markup=False)
    for title, headers, rows in tables(stats):
        if not rows:
            console.print(f"{title}: none", markup=False)
            continue
        table = Table(title=title, title_justify="left")
        for header in headers:
            # names and stages must stay whole to be greppable: fold rather than cut them
            table.add_column(header, justify="left" if header in TEXT_COLUMNS else "right", overflow="fold")
        for row in rows:
            table.add_row(*(Text(cell) for cell in row))     # a name like http://[::1]:8001 is not markup
        console.print(table)


def _print_plain(stats: dict, url: str, out) -> None:
    print(f"semcache gateway {url}", file=out)
    for line in summary_lines(stats):
        print(line, file=out)
    for title, headers, rows in tables(stats):
        if not rows:
            print(f"{title}: none", file=out)
            continue
        widths = [max(len(cell) for cell in column) for column in zip(headers, *rows)]
        print(f"{title}:", file=out)
        for row in [headers, *rows]:
            print("  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)), file=out)
