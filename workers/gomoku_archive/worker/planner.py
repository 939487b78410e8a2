"""The planner, ``plan_months``: the worker's cron job (at start-up and every six hours) that
queues an export for every closed month without a published archive, sweeps the leftovers of
dead builds, queues the Parquet companion of every published archive without one, backfills
the S3 mirror and records its run for operators (``/ops/``, ``gomoku-archive jobs``)."""

from __future__ import annotations

import time
from typing import Any

from gomoku_archive.db import archive_store, locks
from gomoku_archive.export import month as month_export
from gomoku_archive.jobs.ids import export_job_id
from gomoku_archive.jobs.planning import missing_months, plan_action
from gomoku_archive.logs import get_logger
from gomoku_archive.queue.connection import REDIS_ERRORS
from gomoku_archive.queue.enqueue import enqueue_export, job_status
from gomoku_archive.queue.worker_keys import record_planner_run
from gomoku_archive.worker.companion_jobs import plan_companions
from gomoku_archive.worker.context import clock_of, pool_of, redis_of, settings_of
from gomoku_archive.worker.mirror_backfill import backfill_mirrors

log = get_logger(__name__)


async def plan_months(ctx: dict[str, Any]) -> dict[str, Any]:
    """Queue ``export:YYYY-MM`` for every closed month from the first export month on that has
    no published archive, at the worker clock's "now"; record the run for operators."""
    settings, pool, client = settings_of(ctx), pool_of(ctx), redis_of(ctx)
    started = time.monotonic()
    now = clock_of(ctx)()
    run: dict[str, Any] = {"at": now.isoformat(), "job_id": ctx.get("job_id")}
    try:
        async with pool.acquire() as conn:
            published = await archive_store.published_months(conn)
            missing = missing_months(settings.export_first_month, now, published)
            locked = {str(m) for m in missing if await locks.month_lock_held(conn, m)}
        decided: dict[str, list[str]] = {
            "enqueued": [],
            "requeued": [],
            "alreadyQueued": [],
            "building": [],
        }
        for month in missing:
            status = await job_status(client, export_job_id(month))
            action = plan_action(status, lock_held=str(month) in locked)
            if action in ("enqueue", "requeue"):
                added = await enqueue_export(client, month, replace_result=action == "requeue")
                key = "alreadyQueued"
                if added:
                    key = "enqueued" if action == "enqueue" else "requeued"
            else:
                key = "alreadyQueued" if action == "already_queued" else "building"
            decided[key].append(str(month))
        run |= {"missing": [str(m) for m in missing], **decided}
        run["leftoversRemoved"] = await month_export.sweep_leftovers(pool)
        run["companionsEnqueued"] = await plan_companions(ctx)
        run["mirrorsEnqueued"] = await backfill_mirrors(ctx)
        run["error"] = None
    except Exception as exc:
        run |= {"error": f"{type(exc).__name__}: {exc}"}
        raise
    finally:
        run["seconds"] = round(time.monotonic() - started, 3)
        if run.get("error"):
            log.error("plan_months_finished", outcome="failed", **run)
        else:
            log.info("plan_months_finished", outcome="planned", **run)
        try:
            await record_planner_run(client, run)
        except REDIS_ERRORS as exc:
            log.warning("planner_run_not_recorded", error=str(exc))
    return run
