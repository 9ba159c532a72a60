"""The operator's dashboard at /admin/dashboard: one page and its scripts, served from the package.

The page holds no data and no powers of its own: it asks for the admin token (kept in the browser's
session storage) and reads and acts only through the admin API (/admin/stats, /admin/timeline,
/admin/entries, /admin/invalidate, promote, demote). Charts use uPlot (MIT, vendored under static/vendor):
nothing is loaded from the network.
"""
from __future__ import annotations

import asyncio
from pathlib import Path

from litestar import Request, Response, get

from gateway.auth import admin_guard
from gateway.cache import SemanticCache
from gateway.errors import GatewayError, invalid
from gateway.timeline import WINDOWS, domain_table, load

STATIC = Path(__file__).parent / "static"
ASSETS = {  # name -> (file, media type): a fixed list, so no request can name another file
    "dashboard.js": ("dashboard.js", "application/javascript"),
    "dashboard.css": ("dashboard.css", "text/css"),
    "uPlot.iife.min.js": ("vendor/uplot/uPlot.iife.min.js", "application/javascript"),
    "uPlot.min.css": ("vendor/uplot/uPlot.min.css", "text/css"),
}
# the page runs only its own scripts: nothing inline, nothing from elsewhere
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "frame-ancestors 'none'; base-uri 'none'; form-action 'none'")


@get("/admin/dashboard", summary="The operator's dashboard (an HTML page; its data needs the admin token)",
     include_in_schema=False)
async def dashboard_page() -> Response:
    return Response(content=(STATIC / "dashboard.html").read_bytes(), media_type="text/html",
                    headers={"Content-Security-Policy": CSP, "Cache-Control": "no-cache",
                             "X-Content-Type-Options": "nosniff"})


@get("/admin/dashboard/static/{name:str}", include_in_schema=False)
async def dashboard_asset(name: str) -> Response:
    if name not in ASSETS:
        raise GatewayError(404, "no such file", code="not_found")
    path, media = ASSETS[name]
    return Response(content=(STATIC / path).read_bytes(), media_type=media,
                    headers={"Cache-Control": "max-age=300", "X-Content-Type-Options": "nosniff"})


@get("/admin/timeline", guards=[admin_guard],
     summary="Decisions over time in 5-minute buckets, with saved tokens, pollution, reasons, latency and "
             "per-domain numbers (admin; window=hour|day|week)")
async def admin_timeline(request: Request, cache: SemanticCache) -> dict:
    window = request.query_params.get("window", "hour")
    if window not in WINDOWS:
        raise invalid(f"'window' must be one of {list(WINDOWS)}", "window")
    series = await asyncio.to_thread(load, cache.store, window)
    series["domains"] = await asyncio.to_thread(domain_table, cache.store, series)
    return series


DASHBOARD_HANDLERS = [dashboard_page, dashboard_asset, admin_timeline]
