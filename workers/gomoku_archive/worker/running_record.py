"""An export job's proof of life in Redis (``gomoku:running:<job id>``): written before the
job's first database statement, refreshed while the job runs, so the watchdog never takes a
slow step (a count behind ``LOCK TABLE games``) for a dead worker; and the way a run learns
that it was released after all (its record lost, say in a Redis outage, and the job started
again): its refresh finds another run's record, and it stops, ``released``, rather than run
beside its retry."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

from gomoku_archive.jobs.queue_view import RunningInfo
from gomoku_archive.logs import get_logger
from gomoku_archive.queue.connection import REDIS_ERRORS
from gomoku_archive.queue.worker_keys import (
    RUNNING_REFRESH_SECONDS,
    clear_running,
    mark_running,
    refresh_running,
)
from gomoku_archive.worker.context import redis_of, utc_now, worker_of

log = get_logger(__name__)


class RunReleased(Exception):
    """Another run of the same job took its record: this one was released and has stopped."""


class RunningRecord:
    """The record of one run; ``planned`` tells it the month's size once counted."""

    def __init__(self, ctx: dict[str, Any], info: RunningInfo) -> None:
        self._ctx = ctx
        self.info = info
        self.released = False

    async def planned(self, candidates: int, seconds: float | None) -> None:
        deadline = self.info.deadline
        if seconds is not None:
            deadline = self.info.started_at + timedelta(seconds=seconds)
        self.info = dataclasses.replace(
            self.info, phase="exporting", candidates=candidates, deadline=deadline
        )
        await self._refresh()

    async def _refresh(self) -> bool:
        try:
            if await refresh_running(redis_of(self._ctx), self.info):
                return True
        except REDIS_ERRORS as exc:  # the watchdog cannot read Redis either; try again
            log.warning("running_record_not_refreshed", error=str(exc))
            return True
        self.released = True
        return False

    async def keep(self, task: asyncio.Task[Any]) -> None:
        """Refresh until cancelled; cancel ``task`` when the record is another run's."""
        while True:
            await asyncio.sleep(RUNNING_REFRESH_SECONDS)
            if not await self._refresh():
                log.warning(
                    "export_run_released",
                    job_id=self.info.job_id,
                    reason="another run of the job took its running record",
                )
                task.cancel("released: the job runs again elsewhere")
                return


@contextlib.asynccontextmanager
async def running(
    ctx: dict[str, Any], job_id: str, attempt: int, first_limit: float
) -> AsyncIterator[RunningRecord]:
    """Hold the job's running record while the body runs (``counting`` until ``planned``);
    raises ``RunReleased`` when the body was stopped because the job runs elsewhere now."""
    now = utc_now()
    info = RunningInfo(
        job_id=job_id,
        worker=worker_of(ctx),
        started_at=now,
        deadline=now + timedelta(seconds=first_limit),
        candidates=0,
        attempt=attempt,
        phase="counting",
        run=uuid.uuid4().hex,
    )
    await mark_running(redis_of(ctx), info)
    record = RunningRecord(ctx, info)
    task = asyncio.current_task()
    assert task is not None
    keeper = asyncio.create_task(record.keep(task), name=f"gomoku-running-{job_id}")
    try:
        yield record
    except asyncio.CancelledError:
        if record.released and task.uncancel() == 0:
            raise RunReleased(job_id) from None
        raise
    finally:
        keeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await keeper
        if not record.released:
            try:
                await clear_running(redis_of(ctx), job_id)
            except REDIS_ERRORS as exc:  # it expires by itself
                log.warning("running_record_not_cleared", error=str(exc))
