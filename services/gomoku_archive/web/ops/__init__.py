"""The operators' area, ``/ops/``: job queue and month states, and a "rebuild month" action.

Mounted by ``setup_ops`` only when ``OPS_TOKEN`` is set; otherwise nothing is routed and the
whole tree answers 404. Nothing here is linked from the public pages. Routes:

- ``GET /ops/``: the dashboard (401 with a sign-in form without a valid token or session);
- ``GET /ops/api/status``: the same as JSON (``gomoku-archive jobs --json`` prints the same);
- ``POST /ops/login`` / ``POST /ops/logout``: the browser session;
- ``POST /ops/rebuild`` (``month=YYYY-MM``): queue a forced export of a closed month.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from aiohttp import web

from gomoku_archive.errors import RedisUnavailable
from gomoku_archive.logs import get_logger
from gomoku_archive.settings import Settings, mask_url
from gomoku_archive.web.ops import handlers
from gomoku_archive.web.ops.state import OPS, LazyQueueClient, OpsState

log = get_logger(__name__)

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
    app.cleanup_ctx.append(_queue_client)
    app.router.add_get("/ops", handlers.slash, allow_head=False)
    app.router.add_get("/ops/", handlers.dashboard)
    app.router.add_get("/ops/api/status", handlers.status)
    app.router.add_post("/ops/login", handlers.login)
    app.router.add_post("/ops/logout", handlers.logout)
    app.router.add_post("/ops/rebuild", handlers.rebuild)


async def _queue_client(app: web.Application) -> AsyncIterator[None]:
    """Ask Redis once at start-up, beside it (the API starts whatever Redis does), so that a
    wrong or unreachable ``REDIS_URL`` is in the log from the first minute, not found on the
    day someone opens ``/ops/``; close the client on the way out."""
    first_look = asyncio.create_task(_say_if_redis_is_away(app[OPS]), name="ops-redis-first-look")
    yield
    first_look.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await first_look
    await app[OPS].queue.close()


async def _say_if_redis_is_away(state: OpsState) -> None:
    try:
        await state.queue.get()
    except RedisUnavailable as exc:
        log.warning(
            "serve_redis_unreachable",
            redis=mask_url(state.settings.redis_url),
            error=str(exc),
            consequence="/ops/ shows no job queue and cannot queue rebuilds until it answers; "
            "the public API does not need it",
        )
