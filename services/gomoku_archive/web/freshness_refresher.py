"""Keeps the freshness gauges of ``/metrics`` current: a background task reads the archive
tables' summary every ``REFRESH_SECONDS`` (one small query), computes the freshness
(``gomoku_archive.catalog.freshness``), the S3 mirror's counts and each copy's last full
content comparison when a bucket is set, and the job queue's depth, and hands them to
``Metrics``. A scrape only renders what was computed last, so no request ever waits on
PostgreSQL or Redis for them.

When the database fails, the last values stay and ``gomoku_freshness_age_seconds`` grows; when
Redis does not answer within ``REDIS_SECONDS``, the queue depth is NaN until it does.

Redis is read with a plain client whose own socket timeouts bound each call, rather than by
cancelling a call midway, which would leave a half-open connection behind; for the same reason
shutdown waits for a round in progress (bounded by those timeouts) instead of cancelling it."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime

import redis.asyncio
import redis.exceptions
from aiohttp import web

from gomoku_archive.catalog.freshness import compute_freshness
from gomoku_archive.db import content_store, mirror_store, range_store
from gomoku_archive.db.archive_freshness import read_archive_freshness
from gomoku_archive.db.pool import Pool
from gomoku_archive.errors import ArchiveError
from gomoku_archive.logs import get_logger
from gomoku_archive.queue.connection import QUEUE_NAME
from gomoku_archive.queue.worker_keys import WORKER_KEY_PREFIX
from gomoku_archive.settings import Settings
from gomoku_archive.storage.s3 import store_identity
from gomoku_archive.web.keys import METRICS, POOL, SETTINGS
from gomoku_archive.web.manifest_cache import RELOAD_ERRORS
from gomoku_archive.web.metrics import Metrics

log = get_logger(__name__)

REFRESH_SECONDS = 15.0
DATABASE_SECONDS = 5.0
REDIS_SECONDS = 1.0
_DATABASE_ERRORS: tuple[type[BaseException], ...] = (*RELOAD_ERRORS, TimeoutError, ArchiveError)
_REDIS_ERRORS: tuple[type[BaseException], ...] = (redis.exceptions.RedisError, OSError)
_STOP_SECONDS = DATABASE_SECONDS + 2 * REDIS_SECONDS + 1


def _utc_now() -> datetime:
    return datetime.now(UTC)


class FreshnessRefresher:
    def __init__(
        self,
        pool: Pool,
        settings: Settings,
        metrics: Metrics,
        *,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        self._pool = pool
        self._first = settings.export_first_month
        self._bucket = settings.s3_bucket
        self._store = store_identity(settings.s3_endpoint_url)
        self._cdn_base = settings.cdn_base_url
        self._content_period = settings.mirror_content_check_seconds
        self._content_sample = settings.mirror_content_sample_bytes
        self._metrics = metrics
        self._clock = clock
        self._redis = redis.asyncio.Redis.from_url(
            settings.redis_url,
            socket_connect_timeout=REDIS_SECONDS,
            socket_timeout=REDIS_SECONDS,
            retry_on_timeout=False,
        )
        self._stopping = asyncio.Event()
        self._computed_at: float | None = None
        metrics.freshness_age.set_function(self.age)

    def age(self) -> float:
        """Seconds since the gauges were last computed from the database."""
        if self._computed_at is None:
            return float("inf")
        return time.monotonic() - self._computed_at

    async def refresh(self) -> None:
        """One round: database gauges, then the queue depth; failures are logged, not raised."""
        try:
            async with asyncio.timeout(DATABASE_SECONDS), self._pool.acquire() as conn:
                stats = await read_archive_freshness(conn)
                builds = await range_store.building_progress(conn)
                mirror = None
                content: list[content_store.ContentChecked] = []
                if self._bucket is not None:
                    mirror = await mirror_store.mirror_stats(
                        conn, self._store, self._bucket, self._cdn_base
                    )
                    content = await content_store.content_checked(conn, self._store, self._bucket)
        except _DATABASE_ERRORS as exc:
            self._metrics.freshness_refreshes.labels("error").inc()
            log.warning("freshness_refresh_failed", error=f"{type(exc).__name__}: {exc}")
        else:
            freshness = compute_freshness(stats, first=self._first, now=self._clock())
            self._metrics.show_freshness(freshness)
            self._metrics.show_builds(builds)
            if mirror is not None:
                self._metrics.show_mirror(mirror)
                self._metrics.show_content_checked(
                    content,
                    period_seconds=self._content_period,
                    sample_bytes=self._content_sample,
                )
            self._metrics.freshness_refreshes.labels("ok").inc()
            self._computed_at = time.monotonic()
        depth = await self._queue_depth()
        workers = await self._live_workers() if depth is not None else None
        self._metrics.show_queue_depth(depth, workers)

    async def _queue_depth(self) -> int | None:
        try:
            return int(await self._redis.zcard(QUEUE_NAME))
        except _REDIS_ERRORS:
            return None

    async def _live_workers(self) -> int | None:
        """Heartbeat keys (``gomoku:worker:*``, expiring a few beats after a worker stops)."""
        try:
            keys = self._redis.scan_iter(match=WORKER_KEY_PREFIX + "*", count=500)
            return len({key async for key in keys})
        except _REDIS_ERRORS:
            return None

    async def run(self, interval: float = REFRESH_SECONDS) -> None:
        """Refresh every ``interval`` seconds until ``stop()``."""
        while not self._stopping.is_set():
            try:
                await self.refresh()
            except Exception:  # a bug must not stop the gauges for the process's lifetime
                log.exception("freshness_refresh_crashed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), interval)

    def stop(self) -> None:
        self._stopping.set()

    async def close(self) -> None:
        await self._redis.aclose()


async def keep_fresh(app: web.Application) -> AsyncIterator[None]:
    """``cleanup_ctx``: the refresher's task runs for the application's lifetime."""
    refresher = FreshnessRefresher(app[POOL], app[SETTINGS], app[METRICS])
    task = asyncio.create_task(refresher.run(), name="gomoku-freshness")
    try:
        yield
    finally:
        refresher.stop()
        # A round in progress ends within its own timeouts; cancel only one that does not.
        done, _ = await asyncio.wait({task}, timeout=_STOP_SECONDS)
        if not done:
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await refresher.close()
