"""Probes and metrics: ``/healthz`` (the process answers; no dependency is checked, so a
database outage never gets the pod restarted), ``/readyz`` (PostgreSQL answers, and the process
is not draining after a stop signal; Redis is not needed by the public API) and ``/metrics``
(Prometheus text)."""

from __future__ import annotations

import asyncio

from aiohttp import hdrs, web

from gomoku_archive.logs import get_logger
from gomoku_archive.web.keys import DRAINING, MANIFEST, METRICS, POOL
from gomoku_archive.web.manifest_cache import RELOAD_ERRORS
from gomoku_archive.web.metrics import CONTENT_TYPE

log = get_logger(__name__)

READY_TIMEOUT = 2.0
_READY_ERRORS: tuple[type[BaseException], ...] = (*RELOAD_ERRORS, TimeoutError)
_NO_STORE = {hdrs.CACHE_CONTROL: "no-store"}


async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"}, headers=_NO_STORE)


async def readyz(request: web.Request) -> web.Response:
    cache = request.app[MANIFEST]
    if request.app[DRAINING].is_set():
        body = {"status": "draining", "manifestAgeSeconds": round(cache.age(), 1)}
        return web.json_response(body, status=503, headers=_NO_STORE)
    try:
        async with asyncio.timeout(READY_TIMEOUT), request.app[POOL].acquire() as conn:
            await conn.fetchval("SELECT 1")
        database = "ok"
    except _READY_ERRORS as exc:
        log.warning("readiness_database_failed", error=f"{type(exc).__name__}: {exc}")
        database = "unreachable"
    ready = database == "ok"
    body = {
        "status": "ready" if ready else "unavailable",
        "database": database,
        "manifestAgeSeconds": round(cache.age(), 1),
        "manifestListening": cache.listening,
    }
    return web.json_response(body, status=200 if ready else 503, headers=_NO_STORE)


async def metrics(request: web.Request) -> web.Response:
    body = request.app[METRICS].render()
    return web.Response(body=body, headers={hdrs.CONTENT_TYPE: CONTENT_TYPE, **_NO_STORE})


def metrics_app(api: web.Application) -> web.Application:
    """``/metrics`` of ``api`` alone, for a port of its own (``METRICS_PORT``): the public
    port, and so an Ingress in front of it, then never routes it."""
    app = web.Application()

    async def handler(request: web.Request) -> web.Response:
        body = api[METRICS].render()
        return web.Response(body=body, headers={hdrs.CONTENT_TYPE: CONTENT_TYPE, **_NO_STORE})

    app.router.add_get("/metrics", handler)
    return app
