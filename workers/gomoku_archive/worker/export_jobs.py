"""The worker's export job, ``export_month`` (a month's build: its coordinator; the ranges are
claimed by every worker's range slot, ``export.range_slot``, not by arq jobs). Thin: parse the
arguments, call the export (``gomoku_archive.export``), map errors to arq's outcomes, and log one
``export_job`` line per run. docs/operators/running.md ("Outcomes, retries, timeouts") says
what each outcome means; the export itself records every failure of its run on the month, and
this module only a forced rebuild that never got the month's lock."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import structlog
from arq import Retry

from gomoku_archive.errors import (
    ExportFailed,
    ExportLocked,
    ExportTimeout,
    InvalidMonth,
    InvalidRebuildReason,
)
from gomoku_archive.export import month as month_export
from gomoku_archive.export.coordinator import RangeOptions
from gomoku_archive.export.local_ranges import LocalProcesses
from gomoku_archive.export.ranges import RANGE_CANDIDATES
from gomoku_archive.jobs.planning import export_refusal
from gomoku_archive.jobs.rebuild_reason import rebuild_reason
from gomoku_archive.logs import get_logger
from gomoku_archive.profile.months import Month
from gomoku_archive.worker import running_record
from gomoku_archive.worker.companion_jobs import after_publish
from gomoku_archive.worker.context import (
    clock_of,
    pool_of,
    range_slot_of,
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
    ctx: dict[str, Any],
    month: str,
    force: bool = False,
    range_candidates: int | None = None,
    reason: str | None = None,
) -> dict[str, Any]:
    """Build and publish ``month`` (``YYYY-MM``) under its export lock, within a time limit set
    from the month's size: plan its ranges (every worker's range slot claims them, this one's
    included), wait for them, assemble and publish. Returns the job's summary (kept by arq as its
    result). ``range_candidates`` overrides K (tests; it changes the bytes of big months).
    ``reason``: why a forced rebuild was asked, kept with its build (``rebuild_reason`` in the
    job's line)."""
    job_id = str(ctx.get("job_id", ""))
    attempt = int(ctx.get("job_try", 1))
    job = _JobLog(job_id=job_id, month=month, force=force, attempt=attempt)
    if reason is not None:
        job.fields["rebuild_reason"] = reason
    with structlog.contextvars.bound_contextvars(job_id=job_id, month=month):
        target, kept_reason = _exportable(ctx, month, reason, job)
        try:
            result = await _export_within_limit(
                ctx, target, force, job, range_candidates, kept_reason
            )
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


def _exportable(
    ctx: dict[str, Any], month: str, reason: str | None, job: _JobLog
) -> tuple[Month, str | None]:
    """The month, when it may be exported now, and the rebuild's reason as it is kept (checked
    again: the job's arguments come from Redis); otherwise a permanent failure."""
    try:
        target = Month.parse(month)
        first = settings_of(ctx).export_first_month
        refusal = export_refusal(target, first=first, now=clock_of(ctx)())
        if refusal is not None:
            raise InvalidMonth(refusal)
        if reason is not None and not isinstance(reason, str):
            raise InvalidRebuildReason(f"a rebuild's reason is text, got {type(reason).__name__}")
        return target, rebuild_reason(reason)
    except (InvalidMonth, InvalidRebuildReason) as exc:
        job.finish("failed", "error", error=str(exc), failure="permanent")
        raise


async def _export_within_limit(
    ctx: dict[str, Any],
    target: Month,
    force: bool,
    job: _JobLog,
    range_candidates: int | None,
    reason: str | None,
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
                reason=reason,
                ranges=RangeOptions(
                    source_pool=source_pool_of(ctx),
                    spreads=(
                        LocalProcesses(
                            dsn=settings.database_url,
                            source_dsn=settings.source_url,
                            table=settings.games_table,
                            processes=settings.export_processes,
                        ),
                    ),
                    range_candidates=range_candidates or RANGE_CANDIDATES,
                    worker=worker_of(ctx),
                    # With a range slot in this process the coordinator only waits and checks;
                    # a job run outside a worker (no slot) exports its ranges itself.
                    range_slot=range_slot_of(ctx),
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
