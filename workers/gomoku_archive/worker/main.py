"""The worker process: arq's ``Worker`` built from our ``Settings``.

- functions: ``export_month`` (a month's build and its coordinator; arq timeout = the export
  ceiling; each job sets its month's own limit inside; ``MAX_TRIES`` runs; results kept a day for
  operators), ``export_range`` (one range of a build, for any worker), ``mirror_archive`` and
  ``build_companion`` (the Parquet companion of an archive published without one);
- cron: ``plan_months`` at start-up and at 00:00, 06:00, 12:00 and 18:00 UTC; with S3_BUCKET
  set, ``scrub_mirror`` every Sunday at 03:30 UTC, ``check_mirror`` every
  ``MIRROR_CHECK_SECONDS`` and ``check_mirror_content`` every ``MIRROR_CONTENT_CHECK_SECONDS``;
- JSON job serialisation (``gomoku_archive.queue.connection``), a health-check record every 30 s;
- SIGTERM/SIGINT: no new jobs; running ones get ``grace_seconds`` to finish, then are cancelled
  (the export drops its unfinished row) and stay queued for the next worker.
"""

from __future__ import annotations

import asyncio
import warnings
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from arq.cron import cron
from arq.worker import func

from gomoku_archive.db.pool import create_pool
from gomoku_archive.export import month_reads
from gomoku_archive.export.range_run import claimer_name
from gomoku_archive.jobs.codec import deserialize, serialize
from gomoku_archive.jobs.ids import (
    CHECK_CRON_NAME,
    COMPANION_FUNCTION,
    CONTENT_CHECK_CRON_NAME,
    EXPORT_FUNCTION,
    MIRROR_FUNCTION,
    PLANNER_CRON_NAME,
    RANGE_FUNCTION,
    SCRUB_CRON_NAME,
)
from gomoku_archive.logs import get_logger
from gomoku_archive.queue.connection import QUEUE_NAME
from gomoku_archive.queue.worker_keys import retire_worker
from gomoku_archive.settings import Settings
from gomoku_archive.storage.mirror import ArchiveMirror
from gomoku_archive.storage.s3 import S3Store, require_bucket
from gomoku_archive.worker import context
from gomoku_archive.worker.arq_lines import trim_arq_lines
from gomoku_archive.worker.companion_jobs import COMPANION_TIMEOUT_SECONDS, build_companion
from gomoku_archive.worker.context import Clock, utc_now
from gomoku_archive.worker.export_jobs import BUSY_REQUEUES, export_month, export_range
from gomoku_archive.worker.job_loop import ArchiveWorker, LoopHeartbeat
from gomoku_archive.worker.mirror_jobs import (
    MIRROR_TIMEOUT_SECONDS,
    SCRUB_TIMEOUT_SECONDS,
    check_mirror,
    check_mirror_content,
    mirror_archive,
    scrub_mirror,
)
from gomoku_archive.worker.planner import plan_months
from gomoku_archive.worker.redis_wait import wait_for_redis
from gomoku_archive.worker.retry_policy import MAX_TRIES, MIRROR_MAX_TRIES
from gomoku_archive.worker.timeouts import EXPORT_CEILING_SECONDS
from gomoku_archive.worker.watchdog import Watchdog

log = get_logger(__name__)

PLANNER_HOURS_UTC = {0, 6, 12, 18}
SCRUB_WEEKDAY: Literal["sun"] = "sun"
SCRUB_HOUR_UTC, SCRUB_MINUTE = 3, 30
PLANNER_TIMEOUT_SECONDS = 300
RESULT_KEEP_SECONDS = 24 * 3600
"""Finished export results stay visible in ``/ops/`` for a day (the planner replaces the result
of a month that is still unpublished, so a kept failure never blocks a new try)."""
HEALTH_CHECK_SECONDS = 30
RANGE_TIMEOUT_SECONDS = 900
"""arq's timeout for one range job. A range of K candidates takes seconds (under a minute even
at the export timeout's deliberately low 2,000 games/s); one that runs 15 minutes is stuck. The
range of a worker that died is taken over within ``range_run.STALE_SECONDS`` whatever arq does:
the job itself only shows as running until arq gives up on it."""
MAX_JOBS = 2
"""Per process: an export and the planner, or two exports. Exports are CPU-bound Python, so more
throughput comes from more worker processes, which also spreads months over machines."""
DEFAULT_GRACE_SECONDS = 25
"""Below Kubernetes' default 30 s termination grace period, so arq cancels cleanly first."""
DEFAULT_STALE_AFTER_SECONDS = 30.0

_WATCHDOG = "gomoku_watchdog"
_STARTED = "gomoku_started_at"
_STALE_AFTER = "gomoku_stale_after"
_S3_STORE = "gomoku_s3_store"


@dataclass(frozen=True, slots=True)
class Schedule:
    """arq cron's ``second``, ``minute`` and ``hour`` (None: every one)."""

    second: set[int]
    minute: set[int] | None = None
    hour: set[int] | None = None


def check_schedule(period_seconds: int) -> Schedule:
    """When to run a job at least every ``period_seconds`` (5 to 59, whole minutes below an
    hour, whole hours from an hour on: ``Settings`` checks it). A period that does not divide
    the minute, hour or day gives a shorter gap at its turn, never a longer one."""
    if period_seconds < 60:
        return Schedule(set(range(0, 60, period_seconds)))
    if period_seconds < 3600:
        return Schedule({0}, set(range(0, 60, period_seconds // 60)))
    return Schedule({0}, {0}, set(range(0, 24, period_seconds // 3600)))


def worker_name() -> str:
    """``host:pid``: the worker's name in Redis, in its logs and on the ranges it claims."""
    return claimer_name()


def worker_options(
    settings: Settings,
    *,
    clock: Clock = utc_now,
    grace_seconds: int = DEFAULT_GRACE_SECONDS,
    stale_after_seconds: float = DEFAULT_STALE_AFTER_SECONDS,
    burst: bool = False,
    handle_signals: bool = True,
) -> dict[str, Any]:
    """Keyword arguments for ``arq.worker.Worker``."""
    ctx = context.new_context(settings, clock=clock, worker=worker_name())
    ctx[_STARTED] = datetime.now(UTC)
    ctx[_STALE_AFTER] = stale_after_seconds
    cron_jobs = [
        cron(
            plan_months,
            name=PLANNER_CRON_NAME,
            hour=PLANNER_HOURS_UTC,
            minute=0,
            second=0,
            run_at_startup=True,
            timeout=PLANNER_TIMEOUT_SECONDS,
            max_tries=1,
        )
    ]
    if settings.mirror_enabled:
        cron_jobs.append(
            cron(
                scrub_mirror,
                name=SCRUB_CRON_NAME,
                weekday=SCRUB_WEEKDAY,
                hour=SCRUB_HOUR_UTC,
                minute=SCRUB_MINUTE,
                second=0,
                timeout=SCRUB_TIMEOUT_SECONDS,
                max_tries=1,
            )
        )
        head = check_schedule(settings.mirror_check_seconds)
        content = check_schedule(settings.mirror_content_check_seconds)
        cron_jobs += [
            cron(
                check_mirror,
                name=CHECK_CRON_NAME,
                second=head.second,
                minute=head.minute,
                timeout=max(settings.mirror_check_seconds, 60),
                max_tries=1,
            ),
            cron(
                check_mirror_content,
                name=CONTENT_CHECK_CRON_NAME,
                second=content.second,
                minute=content.minute,
                hour=content.hour,
                # A pass that outlasts its period overlaps the next, which then skips the
                # files it holds (their locks): whole files of a big archive take a while.
                timeout=min(max(settings.mirror_content_check_seconds, 600), SCRUB_TIMEOUT_SECONDS),
                max_tries=1,
            ),
        ]
    return {
        "functions": [
            func(
                export_month,
                name=EXPORT_FUNCTION,
                timeout=EXPORT_CEILING_SECONDS,
                max_tries=MAX_TRIES,
                keep_result=RESULT_KEEP_SECONDS,
            ),
            func(
                export_range,
                name=RANGE_FUNCTION,
                timeout=RANGE_TIMEOUT_SECONDS,
                max_tries=BUSY_REQUEUES + 1,  # requeued from busy workers, never retried
                keep_result=RESULT_KEEP_SECONDS,
            ),
            # Registered with or without S3: a job queued by a process that has a bucket must
            # not fail as "function not found" here (it answers "skipped" instead).
            func(
                mirror_archive,
                name=MIRROR_FUNCTION,
                timeout=MIRROR_TIMEOUT_SECONDS,
                max_tries=MIRROR_MAX_TRIES,
                keep_result=RESULT_KEEP_SECONDS,
            ),
            # A failure is kept as the job's result; the planner queues the archive again.
            func(
                build_companion,
                name=COMPANION_FUNCTION,
                timeout=COMPANION_TIMEOUT_SECONDS,
                max_tries=1,
                keep_result=RESULT_KEEP_SECONDS,
            ),
        ],
        "cron_jobs": cron_jobs,
        "queue_name": QUEUE_NAME,
        "job_serializer": serialize,
        "job_deserializer": deserialize,
        "on_startup": _startup,
        "on_shutdown": _shutdown,
        "ctx": ctx,
        "timezone": UTC,
        "max_jobs": MAX_JOBS,
        "keep_result": RESULT_KEEP_SECONDS,
        "health_check_interval": HEALTH_CHECK_SECONDS,
        "handle_signals": handle_signals,
        "job_completion_wait": grace_seconds,
        "burst": burst,
    }


async def _startup(ctx: dict[str, Any]) -> None:
    settings = context.settings_of(ctx)
    # Two connections per running export (the lock holder, which also writes, and the snapshot
    # reader), plus the planner's and the watchdog's; the month's count and check read on up to
    # READ_CONNECTIONS at once (and on fewer when the pool has no more to give).
    readers = month_reads.READ_CONNECTIONS - 1
    ctx[context.POOL] = await create_pool(
        settings.database_url, min_size=1, max_size=2 * MAX_JOBS + 2 + readers
    )
    if settings.source_url != settings.database_url:
        # One reader per running range; the archive's pool keeps the writes and claims.
        ctx[context.SOURCE_POOL] = await create_pool(
            settings.source_url, min_size=1, max_size=MAX_JOBS + 1 + readers
        )
    if settings.mirror_enabled:
        store = S3Store(settings)
        ctx[_S3_STORE] = store
        ctx[context.MIRROR] = ArchiveMirror(ctx[context.POOL], store)
    stale_after = float(ctx.get(_STALE_AFTER, DEFAULT_STALE_AFTER_SECONDS))
    watchdog = Watchdog(
        client=context.redis_of(ctx),
        pool=context.pool_of(ctx),
        worker=context.worker_of(ctx),
        started_at=ctx[_STARTED],
        stale_after_seconds=stale_after,
        interval_seconds=min(10.0, max(stale_after / 3, 0.5)),
    )
    ctx[_WATCHDOG] = asyncio.create_task(watchdog.run(), name="gomoku-watchdog")
    log.info("worker_started", worker=context.worker_of(ctx), stale_after_s=stale_after)


async def _shutdown(ctx: dict[str, Any]) -> None:
    task: asyncio.Task[None] | None = ctx.pop(_WATCHDOG, None)
    if task is not None:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    try:
        await retire_worker(context.redis_of(ctx), context.worker_of(ctx))
    except Exception as exc:  # Redis gone: the key expires on its own
        log.warning("worker_not_retired", error=str(exc))
    ctx.pop(context.MIRROR, None)
    store: S3Store | None = ctx.pop(_S3_STORE, None)
    if store is not None:
        await asyncio.to_thread(store.close)
    for key in (context.SOURCE_POOL, context.POOL):
        pool = ctx.pop(key, None)
        if pool is not None:
            await pool.close()
    log.info("worker_stopped", worker=context.worker_of(ctx))


async def run_worker(settings: Settings, **options: Any) -> None:
    """Run a worker in the current event loop until SIGTERM/SIGINT (or, with ``burst=True``,
    until the queue is empty); everything it opened is closed on the way out. Started while
    Redis is away, it waits for Redis and starts when it answers (``worker.redis_wait``); its
    job loop then outlives any later outage. Either way it beats its heartbeat file
    (``worker.job_loop``). With S3 set, a bucket it cannot use stops it before anything starts
    (``storage.s3.require_bucket``)."""
    if settings.mirror_enabled:
        await require_bucket(settings)
    trim_arq_lines()
    arguments = worker_options(settings, **options)
    # Real time, whatever clock the jobs are given: the probe compares it with its own.
    heartbeat = LoopHeartbeat(context.worker_of(arguments["ctx"]), clock=utc_now)
    try:
        client = await wait_for_redis(
            settings.redis_url, heartbeat, handle_signals=arguments["handle_signals"]
        )
    except BaseException:  # refused by Redis: no worker ran, so no heartbeat is left behind
        heartbeat.remove()
        raise
    if client is None:
        heartbeat.remove()
        log.info(
            "worker_stopped",
            worker=context.worker_of(arguments["ctx"]),
            reason="asked to stop while it waited for Redis",
        )
        return
    worker = ArchiveWorker(heartbeat=heartbeat, redis_pool=client, **arguments)
    try:
        await worker.async_run()
    except asyncio.CancelledError:
        # arq's signal handler cancels its main task: that is how a worker is asked to stop.
        # A cancellation of our own task is passed on.
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
    finally:
        with warnings.catch_warnings():
            # arq 0.28 closes its pool with redis' deprecated close(); nothing we can change.
            warnings.filterwarnings(
                "ignore", message="Call to deprecated close", category=DeprecationWarning
            )
            await worker.close()
