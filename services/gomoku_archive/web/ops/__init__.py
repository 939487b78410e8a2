"""The operators' area, ``/ops/``: job queue and month states, and a "rebuild month" action.

Mounted by ``setup_ops`` only when ``OPS_TOKEN`` is set; otherwise nothing is routed and the
whole tree answers 404. Nothing here is linked from the public pages. Routes:

- ``GET /ops/``: the dashboard (401 with a sign-in form without a valid token or session);
- ``GET /ops/api/status``: the same as JSON (``gomoku-archive jobs --json`` prints the same);
- ``POST /ops/login`` / ``POST /ops/logout``: the browser session;
- ``POST /ops/rebuild`` (``month=YYYY-MM``): queue a forced export of a closed month.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiohttp import web

from gomoku_archive.settings import Settings
from gomoku_archive.web.ops import handlers
from gomoku_archive.web.ops.state import OPS, LazyQueueClient, OpsState

__all__ = ["setup_ops"]


def setup_ops(app: web.Application, settings: Settings) -> None:
    """Add the ``/ops/`` routes and their Redis client to ``app``; does nothing when
    ``settings.ops_token`` is unset. The app must hold its database pool under
    ``gomoku_archive.web.keys.POOL`` by the time requests arrive."""
    if not settings.ops_token:
        return
    app[OPS] = OpsState(
        settings=settings, token=settings.ops_token, queue=LazyQueueClient(settings.redis_url)
    )
    app.cleanup_ctx.append(_close_queue_client)
    app.router.add_get("/ops", handlers.slash, allow_head=False)
    app.router.add_get("/ops/", handlers.dashboard)
    app.router.add_get("/ops/api/status", handlers.status)
    app.router.add_post("/ops/login", handlers.login)
    app.router.add_post("/ops/logout", handlers.logout)
    app.router.add_post("/ops/rebuild", handlers.rebuild)


async def _close_queue_client(app: web.Application) -> AsyncIterator[None]:
    yield
    await app[OPS].queue.close()
