"""The database half of the operators' view: every month's state from the archive rows, the
held export locks and the builds' ranges (who holds which, how long each waited), combined with
a queue snapshot, so the dashboard and ``gomoku-archive jobs``
read exactly the same things."""

from __future__ import annotations

import asyncio
from datetime import datetime

from gomoku_archive.db import archive_store, locks, range_store
from gomoku_archive.db.pool import DATABASE_ERRORS, Pool
from gomoku_archive.errors import DatabaseUnavailable
from gomoku_archive.jobs.month_view import MonthStatus, month_statuses
from gomoku_archive.jobs.queue_view import QueueSnapshot
from gomoku_archive.profile.months import Month, closed_months


async def read_month_statuses(
    pool: Pool,
    *,
    first: Month,
    now: datetime,
    queue: QueueSnapshot | None,
    within_seconds: float = 5.0,
) -> list[MonthStatus]:
    """Every month's state for operators: archive rows and held export locks from PostgreSQL,
    combined with ``queue`` (None when Redis could not be read). Raises
    ``DatabaseUnavailable``."""
    try:
        async with asyncio.timeout(within_seconds), pool.acquire() as conn:
            rows = await archive_store.all_archives(conn)
            months = {str(m) for m in closed_months(first, now)} | {r.month for r in rows}
            locked = {m for m in months if await locks.month_lock_held(conn, Month.parse(m))}
            builds = {b.month: b for b in await range_store.building_progress(conn)}
            running = await range_store.running_ranges(conn)
    except DATABASE_ERRORS as exc:
        reason = f"{type(exc).__name__}: {exc}".rstrip(": ")
        raise DatabaseUnavailable(f"cannot read the archive tables: {reason}") from exc
    return month_statuses(
        first=first,
        now=now,
        archives=rows,
        queue=queue,
        locked_months=locked,
        builds=builds,
        running=running,
    )
