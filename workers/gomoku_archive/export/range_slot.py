"""A worker process's range slot: it exports one range at a time, of any build under way,
claimed straight from ``archive_ranges`` (``range_store.claim_next_range``: in archive order,
ranges that other claimers are taking skipped rather than waited for, a range whose claimer's
heartbeat went stale taken over by the same statement). Between ranges it claims the next at
once; with nothing to claim it waits for a notification that ranges became claimable
(``db.range_notices``: a plan, a new plan, a failure to try again), or until the first running
range would go stale, or ``IDLE_SECONDS``, whichever comes first.

A slot of its own, not an arq job per range: a job is taken by whichever worker polls first,
busy or not, so a busy worker's free job slot held ranges it could not run (and handed them
back, a second at a time) while another worker sat idle. The slot claims only when its worker
is free, so a range waits only while every slot is busy, and arq's job slots stay for months,
mirrors and crons. docs/operators/running.md ("Ranges") says what operators see of it."""

from __future__ import annotations

import asyncio
import contextlib
import time

from gomoku_archive.db import range_store
from gomoku_archive.db.pool import DATABASE_ERRORS, Pool
from gomoku_archive.db.range_notices import RangeNotices
from gomoku_archive.export import range_run
from gomoku_archive.logs import get_logger

log = get_logger(__name__)

IDLE_SECONDS = 30.0
"""The longest an idle slot waits before it looks again without being told (a notification
lost with its connection is found so)."""
STALE_MARGIN_SECONDS = 0.2
"""An idle slot that waits for a running range to go stale looks this long after the instant."""
RETRY_SECONDS = 5.0
"""After a claim that failed (the database away), the next try."""


class RangeSlot:
    """One range at a time for this process, from any build under way; ``start`` it once,
    ``close`` it when the process stops."""

    def __init__(
        self,
        pool: Pool,
        source_pool: Pool,
        notices: RangeNotices,
        *,
        table: str,
        worker: str,
    ) -> None:
        self._pool = pool
        self._source_pool = source_pool
        self._notices = notices
        self._table = table
        self._worker = worker
        self._task: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self._stopping = asyncio.Event()
        self._deadline: float | None = None
        self.ranges_done = 0

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="gomoku-range-slot")
        log.info("range_slot_started", worker=self._worker)

    def stop_claiming(self, grace_seconds: float) -> None:
        """Claim nothing more; a range under way has ``grace_seconds`` to end (``close``)."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._deadline = time.monotonic() + grace_seconds
        if self._idle.is_set() and self._task is not None:
            self._task.cancel()  # idle: nothing to finish

    @property
    def notices(self) -> RangeNotices:
        return self._notices

    @property
    def claiming(self) -> bool:
        """Until it is told to stop (the worker shuts down): a coordinator in this process then
        claims its own build's ranges for the rest of its grace."""
        return not self._stopping.is_set()

    @property
    def busy(self) -> bool:
        """A range is being claimed or exported now."""
        return not self._idle.is_set()

    async def wait_idle(self) -> None:
        """Until no range is being claimed or exported."""
        await self._idle.wait()

    async def close(self, grace_seconds: float) -> None:
        """Stop claiming, let the range under way end within the grace (counted from the first
        ``stop_claiming``), then cancel it: its failure is recorded, retryable, and another
        worker's slot takes it at once."""
        self.stop_claiming(grace_seconds)
        task, self._task = self._task, None
        if task is None:
            return
        assert self._deadline is not None
        await asyncio.wait({task}, timeout=max(self._deadline - time.monotonic(), 0.0))
        task.cancel()  # idle or out of grace (a task that ended ignores it)
        with contextlib.suppress(asyncio.CancelledError):
            await task
        log.info("range_slot_stopped", worker=self._worker, ranges=self.ranges_done)

    async def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                found = await self._claim_and_export()
            except Exception as exc:  # the slot outlives a database outage, and a bug is traced
                if self._stopping.is_set():  # cut off by the stop: recorded, or goes stale
                    break
                log.warning(
                    "range_slot_claim_failed",
                    error=f"{type(exc).__name__}: {exc}",
                    retry_in_s=RETRY_SECONDS,
                    exc_info=not isinstance(exc, DATABASE_ERRORS),
                )
                await asyncio.sleep(RETRY_SECONDS)
                continue
            if found.claim is not None or self._stopping.is_set():
                continue
            wait = IDLE_SECONDS
            if found.stale_in is not None:
                wait = min(wait, found.stale_in + STALE_MARGIN_SECONDS)
            await self._notices.wait_queued(wait)

    async def _claim_and_export(self) -> range_store.NextRange:
        # Busy from the claim on: a stop waits for it (a claim cut off after its commit would
        # hold a range nobody runs until its heartbeat goes stale).
        self._idle.clear()
        try:
            async with self._pool.acquire() as conn:
                found = await range_store.claim_next_range(
                    conn,
                    worker=self._worker,
                    max_attempts=range_store.MAX_ATTEMPTS,
                    stale_seconds=range_store.STALE_SECONDS,
                )
                if found.claim is not None:
                    # The claim's connection carries the part, the heartbeats and the end.
                    await range_run.run_range(
                        self._pool, self._source_pool, found.claim, table=self._table, conn=conn
                    )
                    self.ranges_done += 1
        finally:
            self._idle.set()
        return found
