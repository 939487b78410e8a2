"""Keeping the S3 mirror complete from the export's side: after a publish the new file's mirror
job is queued (``queue_mirror``), and every planner run queues one for each served file that has
no verified copy in the bucket (``backfill_mirrors``): files published before S3 was configured,
or whose mirror job failed. The jobs themselves are ``worker.mirror_jobs``."""

from __future__ import annotations

from typing import Any

from gomoku_archive.db import archive_store, mirror_store
from gomoku_archive.logs import get_logger
from gomoku_archive.queue.connection import REDIS_ERRORS
from gomoku_archive.queue.enqueue import enqueue_mirrors
from gomoku_archive.worker.context import mirror_of, pool_of, redis_of

log = get_logger(__name__)


async def backfill_mirrors(ctx: dict[str, Any]) -> list[int]:
    """Backfill: queue a mirror job for every served file without a verified copy in the
    bucket (files published before S3 was configured, or whose mirror job failed)."""
    mirror = mirror_of(ctx)
    if mirror is None:
        return []
    async with pool_of(ctx).acquire() as conn:
        pending = await mirror_store.archives_to_mirror(
            conn, mirror.store.identity, mirror.store.bucket, mirror.store.prefix
        )
    return await enqueue_mirrors(redis_of(ctx), pending)


async def queue_mirror(ctx: dict[str, Any], row: archive_store.ArchiveRow | None) -> None:
    """After a publish: queue the file's mirror job. Best effort: when Redis is away the next
    planner run queues it."""
    mirror = mirror_of(ctx)
    if mirror is None or row is None or row.file_name is None:
        return
    store = mirror.store
    if row.mirror.verified_in(store.identity, store.bucket, store.key_for(row.file_name)):
        return
    try:
        await enqueue_mirrors(redis_of(ctx), [row.id])
    except REDIS_ERRORS as exc:
        log.warning("mirror_not_enqueued", archive_id=row.id, error=str(exc))
