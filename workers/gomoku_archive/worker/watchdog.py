"""A small loop beside the jobs in every worker process: it announces the worker to operators
(``gomoku:worker:<host:pid>``) and releases export jobs whose worker died, and range jobs whose
build is no longer under way (see ``worker.stale_jobs``), so a killed worker's month is built
again within a minute, and a crashed pool's range jobs leave the queue, rather than after
arq's in-progress timeout (hours)."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime

from arq.connections import ArqRedis

from gomoku_archive.db import archive_store, locks
from gomoku_archive.db.pool import Pool
from gomoku_archive.jobs.ids import parse_job_id
from gomoku_archive.logs import get_logger
from gomoku_archive.queue.worker_keys import (
    RUN_TOKEN_TOLERANCE_MS,
    announce_worker,
    release_stale_job,
    running_exports,
)
from gomoku_archive.worker.stale_jobs import StaleJobTracker

log = get_logger(__name__)


class Watchdog:
    def __init__(
        self,
        *,
        client: ArqRedis,
        pool: Pool,
        worker: str,
        started_at: datetime,
        stale_after_seconds: float,
        interval_seconds: float,
    ) -> None:
        self._client = client
        self._pool = pool
        self._worker = worker
        self._started_at = started_at
        self._interval = interval_seconds
        self._tracker = StaleJobTracker(
            after_seconds=stale_after_seconds, token_tolerance=RUN_TOKEN_TOLERANCE_MS
        )

    async def run(self) -> None:
        """Beat every interval until cancelled; a failed beat is logged and the next one tried."""
        while True:
            try:
                await self.beat()
            except Exception as exc:  # Redis or PostgreSQL away for a moment: keep going
                log.warning("watchdog_beat_failed", error=f"{type(exc).__name__}: {exc}")
            await asyncio.sleep(self._interval)

    async def beat(self) -> list[str]:
        """One round: announce this worker, release stale exports and range jobs of builds no
        longer under way; returns the released ids."""
        await announce_worker(
            self._client, self._worker, started_at=self._started_at, ttl=3 * self._interval + 5
        )
        running = await running_exports(self._client)
        refs = {job_id: parse_job_id(job_id) for job_id in running}
        months = {r.month for r in refs.values() if r.month is not None}
        builds = {r.archive_id for r in refs.values() if r.kind == "range" and r.archive_id}
        locked: set[str] = set()
        live_builds: set[int] = set()
        if months:
            async with self._pool.acquire() as conn:
                for month in months:
                    if await locks.month_lock_held(conn, month):
                        locked.add(str(month))
                live_builds = await archive_store.still_building(conn, builds)
        released = []
        now = time.monotonic()
        for job_id, token in self._tracker.observe(running, locked, now, live_builds=live_builds):
            # Several watchdogs see the same dead run: the release is claimed atomically in
            # Redis, so exactly one of them frees it (and none frees a later run of the job).
            if await release_stale_job(self._client, job_id, token):
                released.append(job_id)
                log.warning("stale_job_released", job_id=job_id, reason=_REASONS[refs[job_id].kind])
        return released


_REASONS = {
    "export": "in progress without its month's lock: its worker is gone",
    "range": "its build is no longer under way (no building row, or no coordinator holding the "
    "month's lock): it ends as skipped",
}
