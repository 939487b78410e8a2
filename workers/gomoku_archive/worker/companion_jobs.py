"""The Parquet companions' job, ``build_companion``: the companion of one published archive
that has none (published before companions existed, or whose companion failed in its build),
made from the stored archive (``export.companion.backfill``). The planner queues one for every
such archive (``plan_companions``), and an export job for its month when the build gave none
(``after_publish``, which otherwise queues the companion's mirror job). Thin: the work is in
the export package; here are arq's outcomes and one ``companion_job`` line per run."""

from __future__ import annotations

import time
from typing import Any

import structlog

from gomoku_archive.db import companion_store, mirror_store
from gomoku_archive.db.archive_store import ArchiveRow
from gomoku_archive.export.companion.backfill import companion_for_archive
from gomoku_archive.logs import get_logger
from gomoku_archive.queue.connection import REDIS_ERRORS
from gomoku_archive.queue.enqueue import enqueue_companions
from gomoku_archive.worker.context import pool_of, redis_of
from gomoku_archive.worker.mirror_backfill import queue_mirror

log = get_logger(__name__)

COMPANION_TIMEOUT_SECONDS = 3 * 3600
"""A month's whole archive read, decompressed and written again: an hour of margin per ~30
million games on one core."""


async def build_companion(ctx: dict[str, Any], archive_id: int) -> dict[str, Any]:
    """Make and publish archive ``archive_id``'s companion, then queue its mirror job."""
    job_id = str(ctx.get("job_id", ""))
    fields: dict[str, Any] = {"job_id": job_id, "attempt": int(ctx.get("job_try", 1))}
    started = time.monotonic()
    with structlog.contextvars.bound_contextvars(job_id=job_id, archive_id=archive_id):
        try:
            result = await companion_for_archive(pool_of(ctx), archive_id)
        except Exception as exc:
            seconds = round(time.monotonic() - started, 3)
            log.error(
                "companion_job",
                **fields,
                archive_id=archive_id,
                outcome="failed",
                error=f"{type(exc).__name__}: {exc}",
                duration_s=seconds,
            )
            raise
        if result.companion_id is not None:
            await _queue_mirror_of(ctx, result.companion_id)
        summary = fields | result.summary() | {"duration_s": round(time.monotonic() - started, 3)}
        log.info("companion_job", **summary)
        return summary


async def plan_companions(ctx: dict[str, Any]) -> list[int]:
    """The planner's part: a ``build_companion`` job for every published archive without a
    companion; returns the archive ids queued now."""
    async with pool_of(ctx).acquire() as conn:
        missing = await companion_store.archives_without_companion(conn)
    return await enqueue_companions(redis_of(ctx), missing)


async def after_publish(ctx: dict[str, Any], archive: ArchiveRow | None) -> None:
    """After an export: the mirror job of the month's companion, or, when the build gave the
    archive none, its ``build_companion`` job. Best effort: when Redis is away the planner
    queues them."""
    if archive is None or archive.file_name is None:
        return
    async with pool_of(ctx).acquire() as conn:
        companion_id = await companion_store.served_companion_id(conn, archive.id)
    if companion_id is not None:
        await _queue_mirror_of(ctx, companion_id)
        return
    try:
        await enqueue_companions(redis_of(ctx), [archive.id])
    except REDIS_ERRORS as exc:
        log.warning("companion_not_enqueued", archive_id=archive.id, error=str(exc))


async def _queue_mirror_of(ctx: dict[str, Any], companion_id: int) -> None:
    async with pool_of(ctx).acquire() as conn:
        row = await mirror_store.servable_archive(conn, companion_id)
    await queue_mirror(ctx, row)
