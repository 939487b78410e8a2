"""The worker's export jobs, ``export_month`` (a month's build: its coordinator) and
``export_range`` (one range of a build, on any worker). Thin: parse the arguments, call the export
(``gomoku_archive.export``), map errors to arq's outcomes, and log one ``export_job`` or
``export_range`` line per run. docs/operators/running.md ("Outcomes, retries, timeouts") says
what each outcome means; the export itself records every failure of its run on the month, and
this module only a forced rebuild that never got the month's lock."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from arq import Retry
from arq.connections import ArqRedis

from gomoku_archive.db import archive_store, locks, range_store
from gomoku_archive.db.pool import Connection
from gomoku_archive.errors import ExportFailed, ExportLocked, ExportTimeout, InvalidMonth
from gomoku_archive.export import month as month_export
from gomoku_archive.export import range_run
from gomoku_archive.export.coordinator import RangeOptions
from gomoku_archive.export.local_ranges import LocalProcesses
from gomoku_archive.export.ranges import RANGE_CANDIDATES
from gomoku_archive.jobs.planning import export_refusal
from gomoku_archive.logs import get_logger
from gomoku_archive.profile.months import Month
from gomoku_archive.queue.connection import REDIS_ERRORS
from gomoku_archive.queue.enqueue import dequeue_ranges, enqueue_ranges
from gomoku_archive.queue.worker_keys import live_workers
from gomoku_archive.worker import running_record
from gomoku_archive.worker.companion_jobs import after_publish
from gomoku_archive.worker.context import (
    clock_of,
    pool_of,
    range_gate_of,
    redis_of,
    settings_of,
    source_pool_of,
    worker_of,
)
from gomoku_archive.worker.mirror_backfill import queue_mirror
from gomoku_archive.worker.retry_policy import classify_failure, may_retry, retry_delay
from gomoku_archive.worker.timeouts import export_timeout

log = get_logger(__name__)


class _JobLog:
    """The ``export_job`` log line of one run; its fields are also the job's arq result."""

    def __init__(self, **fields: Any) -> None:
        self.fields = fields
        self.started = time.monotonic()

    def finish(self, outcome: str, level: str = "info", **extra: Any) -> dict[str, Any]:
        duration = round(time.monotonic() - self.started, 3)
        summary = self.fields | {"outcome": outcome, "duration_s": duration} | extra
        getattr(log, level)("export_job", **summary)
        return summary


async def export_month(
    ctx: dict[str, Any], month: str, force: bool = False, range_candidates: int | None = None
) -> dict[str, Any]:
    """Build and publish ``month`` (``YYYY-MM``) under its export lock, within a time limit set
    from the month's size: plan its ranges, queue a range job for each (any worker runs them),
    export ranges here too, assemble and publish. Returns the job's summary (kept by arq as its
    result). ``range_candidates`` overrides K (tests; it changes the bytes of big months)."""
    job_id = str(ctx.get("job_id", ""))
    attempt = int(ctx.get("job_try", 1))
    job = _JobLog(job_id=job_id, month=month, force=force, attempt=attempt)
    with structlog.contextvars.bound_contextvars(job_id=job_id, month=month):
        target = _exportable(ctx, month, job)
        try:
            result = await _export_within_limit(ctx, target, force, job, range_candidates)
        except asyncio.CancelledError:
            job.finish(
                "cancelled", "warning", reason="worker shutting down; the job runs again later"
            )
            raise
        except running_record.RunReleased:
            return job.finish(
                "released",
                "warning",
                reason="released by the watchdog while it ran; the job's next run builds it",
            )
        except ExportLocked as exc:
            return await _locked(ctx, target, force, job, exc)
        except ExportTimeout as exc:
            # The export recorded it on the month as "ExportTimeout: ..." already.
            job.finish("failed", "error", error=f"ExportTimeout: {exc}", failure="timeout")
            raise
        except Exception as exc:
            # The export (or the count before it) recorded the failure on the month already.
            _retry_or_fail(job, exc)
            raise
        if result.outcome != "skipped":
            await queue_mirror(ctx, result.archive)
            await after_publish(ctx, result.archive)
        summary = result.summary()
        extra: dict[str, Any] = {
            k: summary[k] for k in ("file", "games", "excluded", "bytes", "sha256")
        }
        if result.outcome == "skipped":
            extra["reason"] = "already published; a forced rebuild redoes it"
        return job.finish(result.outcome, **extra)


@dataclass(frozen=True, slots=True)
class _RangeJobs:
    """A build's ranges as arq jobs, for the other workers of the pool to take: queued only when
    another worker is alive (its heartbeat in Redis), since this worker's own job slots could
    only hand them back (it exports one range at a time, and its coordinator takes every range
    nobody took), and a queue of such jobs would keep its free slot busy handing them back one
    poll at a time while a mirror job or another month waits behind. One job per range of a
    round (the whole plan, then the ranges a consistency check had exported again: numbers the
    build never used before, so never an id with a kept result); the round's jobs that still
    wait when its ranges are all done are taken off the queue."""

    ctx: dict[str, Any]

    @contextlib.asynccontextmanager
    async def running(
        self, month: Month, archive_id: int, seqs: Sequence[int]
    ) -> AsyncIterator[None]:
        redis = redis_of(self.ctx)
        queued = False
        try:
            others = await live_workers(redis) - {worker_of(self.ctx)}
            if not others:
                log.info(
                    "export_ranges_not_enqueued",
                    archive_id=archive_id,
                    reason="no other worker is alive; this one's coordinator exports them",
                )
            else:
                added = await enqueue_ranges(redis, month, archive_id, seqs)
                queued = True
                log.info(
                    "export_ranges_enqueued",
                    archive_id=archive_id,
                    ranges=added,
                    first_range=seqs[0],
                    other_workers=len(others),
                )
        except REDIS_ERRORS as exc:  # the coordinator exports every range itself then
            log.warning("export_ranges_not_enqueued", archive_id=archive_id, error=str(exc))
        yield
        if queued:
            await _dequeue_waiting(redis, month, archive_id, seqs)


async def _dequeue_waiting(
    redis: ArqRedis, month: Month, archive_id: int, seqs: Sequence[int]
) -> None:
    """Best effort: a job left in the queue only answers ``skipped`` when it runs."""
    try:
        removed = await dequeue_ranges(redis, month, archive_id, seqs)
    except REDIS_ERRORS as exc:
        log.warning("export_ranges_not_dequeued", archive_id=archive_id, error=str(exc))
        return
    if removed:
        log.info(
            "export_ranges_dequeued",
            archive_id=archive_id,
            ranges=removed,
            reason="their ranges are done or replaced",
        )


async def export_range(
    ctx: dict[str, Any], month: str, archive_id: int, seq: int
) -> dict[str, Any]:
    """Export range ``seq`` of the build ``archive_id`` of ``month`` when it is still to do
    (queued, failed with tries left, or held by a worker whose heartbeat stopped); ``skipped``
    at once otherwise. While this process exports a range already (its range gate is held: by
    its own coordinator, or by its other range job) the job goes back to the queue at once
    (``Retry``, ``BUSY_REQUEUE_SECONDS`` later) for another worker, at most ``BUSY_REQUEUES``
    times (logged at info the first time only), then skips: a job slot never waits, and a
    busy worker's free slot never swallows the jobs other workers could run (the build's
    coordinator claims every range nobody took). A range job of a build no longer under way
    (ended, or its coordinator gone with the month's lock) skips first of all. A failure is
    recorded on the range, where the build's coordinator sees it and tries again (here or
    elsewhere); the job itself never retries."""
    job_id = str(ctx.get("job_id", ""))
    started = time.monotonic()
    with structlog.contextvars.bound_contextvars(job_id=job_id, month=month):
        pool = pool_of(ctx)
        async with pool.acquire() as conn:
            under_way = await _build_under_way(conn, Month.parse(month), archive_id)
        if not under_way:  # before the gate: such a job never waits for a busy worker
            return _range_skipped(month, archive_id, seq, started, _BUILD_GONE)
        gate = range_gate_of(ctx)
        if gate.locked():
            attempt = int(ctx.get("job_try", 1))
            if attempt <= BUSY_REQUEUES:
                getattr(log, requeue_log_level(attempt))(
                    "export_range_requeued",
                    archive_id=archive_id,
                    range=seq,
                    reason=_BUSY,
                    retry_in_s=BUSY_REQUEUE_SECONDS,
                    requeues_left=BUSY_REQUEUES - attempt,
                )
                raise Retry(defer=BUSY_REQUEUE_SECONDS)
            return _range_skipped(month, archive_id, seq, started, _BUSY)
        async with gate:  # free (checked just above, with no await since): taken at once
            async with pool.acquire() as conn:
                claim = await range_store.claim_range(
                    conn,
                    archive_id,
                    seq,
                    worker=worker_of(ctx),
                    max_attempts=range_run.MAX_ATTEMPTS,
                    stale_seconds=range_run.STALE_SECONDS,
                )
            if claim is not None:
                table = settings_of(ctx).games_table
                outcome = await range_run.run_range(pool, source_pool_of(ctx), claim, table=table)
                return outcome.summary()
        return _range_skipped(month, archive_id, seq, started, _NOT_CLAIMABLE)


BUSY_REQUEUES = 30
"""How often a range job goes back to the queue from busy workers before it skips."""
BUSY_REQUEUE_SECONDS = 1.0
"""When it is due again: after the next poll of every other worker (arq polls twice a second)."""
_BUSY = "this worker exports a range already; the build's coordinator takes the ones left"


def requeue_log_level(attempt: int) -> str:
    """``info`` for a range job's first requeue, which says what it waits for; ``debug`` for
    the others: a table locked for a minute once gave 180 info lines, 3 a second, that said
    nothing new. The job's end (a run, or ``skipped`` once its requeues are used up) is one
    ``export_range`` line at info."""
    return "info" if attempt <= 1 else "debug"


_NOT_CLAIMABLE = "done, taken by another worker, replaced by a new plan, or its build ended"
_BUILD_GONE = "its build is no longer under way (ended, or its coordinator is gone)"


async def _build_under_way(conn: Connection, month: Month, archive_id: int) -> bool:
    """The build's row is still ``building`` and its coordinator holds the month's lock, as it
    does from before it queues its ranges until it ends; otherwise the build ended or died
    (a worker pool that crashed) and its ranges are no use to anyone (``worker.stale_jobs``)."""
    if not await locks.month_lock_held(conn, month):
        return False
    return bool(await archive_store.still_building(conn, [archive_id]))


def _range_skipped(
    month: str, archive_id: int, seq: int, started: float, reason: str
) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "month": month,
        "archive_id": archive_id,
        "range": seq,
        "outcome": "skipped",
        "reason": reason,
        "seconds": round(time.monotonic() - started, 3),
    }
    log.info("export_range", **summary)
    return summary


def _exportable(ctx: dict[str, Any], month: str, job: _JobLog) -> Month:
    """The month, when it may be exported now; otherwise a permanent failure."""
    try:
        target = Month.parse(month)
        first = settings_of(ctx).export_first_month
        refusal = export_refusal(target, first=first, now=clock_of(ctx)())
        if refusal is not None:
            raise InvalidMonth(refusal)
    except InvalidMonth as exc:
        job.finish("failed", "error", error=str(exc), failure="permanent")
        raise
    return target


async def _export_within_limit(
    ctx: dict[str, Any], target: Month, force: bool, job: _JobLog, range_candidates: int | None
) -> month_export.ExportResult:
    """Run the export under its running record (written before its first database statement,
    so operators and the watchdog see it alive from the start), within a time limit set from
    the month's size once the export has counted it under the month's lock."""
    settings, pool = settings_of(ctx), pool_of(ctx)
    limit = month_export.TimeLimit(export_timeout)
    job_id, attempt = job.fields["job_id"], job.fields["attempt"]
    try:
        async with running_record.running(ctx, job_id, attempt, limit.seconds) as record:
            return await month_export.export_month(
                pool,
                table=settings.games_table,
                month=target,
                force=force,
                time_limit=limit,
                on_planned=record.planned,
                ranges=RangeOptions(
                    source_pool=source_pool_of(ctx),
                    spreads=(
                        _RangeJobs(ctx),
                        LocalProcesses(
                            dsn=settings.database_url,
                            source_dsn=settings.source_url,
                            table=settings.games_table,
                            processes=settings.export_processes,
                        ),
                    ),
                    range_candidates=range_candidates or RANGE_CANDIDATES,
                    worker=worker_of(ctx),
                    gate=range_gate_of(ctx),
                ),
            )
    finally:  # the job's log line says what the month was found to hold, whatever the end
        job.fields |= {"candidates": limit.candidates, "timeout_s": limit.seconds}


async def _locked(
    ctx: dict[str, Any], target: Month, force: bool, job: _JobLog, exc: ExportLocked
) -> dict[str, Any]:
    """Another process holds the month's lock: a normal job leaves the month to it; a forced
    rebuild must not be dropped, so it waits for the other build to end."""
    if not force:
        return job.finish("skipped", reason="another process holds the month's export lock")
    attempt = job.fields["attempt"]
    if may_retry(attempt):
        delay = retry_delay(attempt)
        job.finish("retry", "warning", reason="month locked by another export", retry_in_s=delay)
        raise Retry(defer=delay) from exc
    error = f"ExportLocked: the month stayed locked by another export for {attempt} tries"
    await month_export.record_month_failure(pool_of(ctx), target, error)
    job.finish("failed", "error", error=error, failure="permanent")
    raise ExportFailed(f"{target}: rebuild not done: {error}") from exc


def _retry_or_fail(job: _JobLog, exc: Exception) -> None:
    """Raise ``Retry`` for a transient failure with tries left; otherwise log the failure and
    return, so that the caller re-raises it for arq to keep as the job's result."""
    error = f"{type(exc).__name__}: {exc}"
    kind = classify_failure(exc)
    attempt = job.fields["attempt"]
    if kind == "transient" and may_retry(attempt):
        delay = retry_delay(attempt)
        job.finish("retry", "warning", error=error, failure=kind, retry_in_s=delay)
        raise Retry(defer=delay) from exc
    job.finish("failed", "error", error=error, failure=kind)
