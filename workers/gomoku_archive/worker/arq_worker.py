"""The worker process: arq's ``Worker`` built from our ``Settings``.

- functions: ``export_month`` (a month's build and its coordinator; arq timeout = the export
  ceiling; each job sets its month's own limit inside; ``MAX_TRIES`` runs; results kept a day for
  operators), ``mirror_archive`` and ``build_companion`` (the Parquet companion of an archive
  published without one);
- beside arq's job slots, one range slot (``export.range_slot``): ranges of any build, claimed
  from the table, one at a time, woken by the ranges' notifications (``db.range_notices``);
- cron: ``plan_months`` at start-up and at 00:00, 06:00, 12:00 and 18:00 UTC; with S3_BUCKET
  set, ``scrub_mirror`` every Sunday at 03:30 UTC, ``check_mirror`` every
  ``MIRROR_CHECK_SECONDS`` and ``check_mirror_content`` every ``MIRROR_CONTENT_CHECK_SECONDS``,
  never in the same second (``jobs.schedules``);
- JSON job serialisation (``gomoku_archive.queue.connection``), a health-check record every 30 s;
- SIGTERM/SIGINT: no new jobs and no new range; running ones get ``grace_seconds`` to finish,
  then are cancelled (the export drops its unfinished row and stays queued for the next
  worker; a range is recorded failed, to try again, and another worker's slot takes it).
"""

from __future__ import annotations

import asyncio
import warnings
from datetime import UTC, datetime
from typing import Any, Literal

from arq.cron import cron
from arq.worker import func

from gomoku_archive.db.pool import create_pool
from gomoku_archive.db.range_notices import RangeNotices
from gomoku_archive.export import month_reads
from gomoku_archive.export.range_run import claimer_name
from gomoku_archive.export.range_slot import RangeSlot
from gomoku_archive.jobs.codec import deserialize, serialize
from gomoku_archive.jobs.ids import (
    CHECK_CRON_NAME,
    COMPANION_FUNCTION,
    CONTENT_CHECK_CRON_NAME,
    EXPORT_FUNCTION,
    MIRROR_FUNCTION,
    PLANNER_CRON_NAME,
    SCRUB_CRON_NAME,
)
from gomoku_archive.jobs.schedules import check_schedule, content_schedule
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
from gomoku_archive.worker.export_jobs import export_month
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
MAX_JOBS = 2
"""arq's job slots per process: an export's coordinator and the planner, a mirror job, or two
coordinators. The ranges, the CPU-bound part, run in the process's one range slot beside them,
so more throughput comes from more worker processes, which also spreads months over
machines."""
DEFAULT_GRACE_SECONDS = 25
"""Below Kubernetes' default 30 s termination grace period, so arq cancels cleanly first."""
DEFAULT_STALE_AFTER_SECONDS = 30.0

_WATCHDOG = "gomoku_watchdog"
_STARTED = "gomoku_started_at"
_STALE_AFTER = "gomoku_stale_after"
_GRACE = "gomoku_grace"
_S3_STORE = "gomoku_s3_store"


def _cron_set(values: frozenset[int] | None) -> set[int] | None:
    """arq's cron takes sets (not frozensets), or None for every value."""
    return None if values is None else set(values)


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
    ctx[_GRACE] = grace_seconds
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
        # The two checks never start in the same second (each waits for a copy the other
        # holds, but a pass should not spend its period waiting): jobs.schedules.
        head = check_schedule(settings.mirror_check_seconds)
        content = content_schedule(
            settings.mirror_check_seconds, settings.mirror_content_check_seconds
        )
        cron_jobs += [
            cron(
                check_mirror,
                name=CHECK_CRON_NAME,
                second=_cron_set(head.second),
                minute=_cron_set(head.minute),
                hour=_cron_set(head.hour),
                timeout=max(settings.mirror_check_seconds, 60),
                max_tries=1,
            ),
            cron(
                check_mirror_content,
                name=CONTENT_CHECK_CRON_NAME,
                second=_cron_set(content.second),
                minute=_cron_set(content.minute),
                hour=_cron_set(content.hour),
                # Whole files of a big archive take a while; a pass that outlasts its period
                # overlaps the next, which waits for the copies it holds (mirror_checks).
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
    # One connection per running coordinator (the month's lock holder), two for the range slot
    # (its claims, heartbeats and part; its source reads), the planner's and the watchdog's; the
    # month's count and check read on up to READ_CONNECTIONS at once (and on fewer when the pool
    # has no more to give). The pool opens them only as they are used.
    readers = month_reads.READ_CONNECTIONS - 1
    ctx[context.POOL] = await create_pool(
        settings.database_url, min_size=1, max_size=MAX_JOBS + 2 + 2 + readers
    )
    if settings.source_url != settings.database_url:
        # The range slot's reader; the archive's pool keeps the writes and claims.
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
    notices = RangeNotices(settings.database_url)
    await notices.start()
    slot = RangeSlot(
        context.pool_of(ctx),
        context.source_pool_of(ctx),
        notices,
        table=settings.games_table,
        worker=context.worker_of(ctx),
    )
    slot.start()
    ctx[context.RANGE_SLOT] = slot
    log.info("worker_started", worker=context.worker_of(ctx), stale_after_s=stale_after)


async def _shutdown(ctx: dict[str, Any]) -> None:
    slot: RangeSlot | None = ctx.pop(context.RANGE_SLOT, None)
    if slot is not None:  # its grace runs from the signal (``job_loop.ArchiveWorker``)
        await slot.close(float(ctx.get(_GRACE, DEFAULT_GRACE_SECONDS)))
        await slot.notices.close()
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
