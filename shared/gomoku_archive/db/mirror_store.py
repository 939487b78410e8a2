"""Every statement on the S3 mirror's columns of ``archives`` (see migration 0002): which files
still need a verified copy, and what the mirror found.

A row's copy is a redirect target only while ``mirrored_at`` is set for the store, bucket and
key the API would redirect to (the store since migration 0008; behind a CDN, also
``cdn_verified_at`` for the CDN address, migration 0005); ``record_mismatch`` clears both in
the same statement that records why."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from gomoku_archive.db.archive_store import ROW_COLUMNS, ArchiveRow, archive_row
from gomoku_archive.db.pool import Connection

_SERVED = "state IN ('published', 'superseded') AND file_name IS NOT NULL"
_MIRROR_LOCK_BASE = 0x4D49 << 48
"""Single-key advisory locks ``"MI" << 48 | archive id``: one mirror of an archive at a time."""


@dataclass(frozen=True, slots=True)
class MirrorStats:
    """The bucket's state for ``/metrics``, over every served file."""

    served_files: int
    mirrored: int
    failing: int
    """Files whose latest mirror attempt failed and that have no verified copy."""
    uploaded_bytes: int
    cdn_unverified: int = 0
    """Files verified in the bucket that are not redirect targets yet because their CDN
    address has not passed an anonymous read (0 without a CDN)."""


async def servable_archive(conn: Connection, archive_id: int) -> ArchiveRow | None:
    """The archive if it is a served file (published or superseded, not a zero-game month)."""
    row = await conn.fetchrow(
        f"SELECT {ROW_COLUMNS} FROM archives WHERE id = $1 AND {_SERVED}", archive_id
    )
    return None if row is None else archive_row(row)


async def archives_to_mirror(conn: Connection, store: str, bucket: str, prefix: str) -> list[int]:
    """Served files without a verified copy at ``prefix + file_name`` in ``bucket`` of
    ``store``: never mirrored, found wrong, or mirrored to another store, bucket or prefix
    before a settings change (or before migration 0008 recorded the store)."""
    rows = await conn.fetch(
        f"SELECT id FROM archives WHERE {_SERVED} AND (mirrored_at IS NULL "
        "OR s3_store IS DISTINCT FROM $1 OR s3_bucket IS DISTINCT FROM $2 "
        "OR s3_key IS DISTINCT FROM $3 || file_name) ORDER BY id",
        store,
        bucket,
        prefix,
    )
    return [r["id"] for r in rows]


async def mirrored_archives(conn: Connection, bucket: str) -> list[int]:
    """Served files with a verified copy in ``bucket``: what a scrub re-reads. In any store: a
    copy verified in another one (or before migration 0008) is read in this one, and recorded
    for it when it matches."""
    rows = await conn.fetch(
        f"SELECT id FROM archives WHERE {_SERVED} AND mirrored_at IS NOT NULL "
        "AND s3_bucket = $1 ORDER BY id",
        bucket,
    )
    return [r["id"] for r in rows]


async def redirect_candidates(conn: Connection, store: str, bucket: str) -> list[ArchiveRow]:
    """Served files with a verified copy in ``bucket`` of ``store``: what the periodic checks
    look at (a copy verified in another store is the backfill's until read back here)."""
    rows = await conn.fetch(
        f"SELECT {ROW_COLUMNS} FROM archives WHERE {_SERVED} AND mirrored_at IS NOT NULL "
        "AND s3_store = $1 AND s3_bucket = $2 ORDER BY id",
        store,
        bucket,
    )
    return [archive_row(r) for r in rows]


async def record_verified(
    conn: Connection,
    archive_id: int,
    *,
    store: str,
    bucket: str,
    key: str,
    etag: str,
    uploaded_bytes: int,
) -> None:
    """The copy at ``key`` in ``bucket`` of ``store`` was read back and matched: from now on
    it is a redirect target."""
    same_copy = "s3_store = $6 AND s3_bucket = $2 AND s3_key = $3 AND s3_etag = $4"
    await conn.execute(
        "UPDATE archives SET s3_store = $6, s3_bucket = $2, s3_key = $3, s3_etag = $4, "
        f"mirrored_at = coalesce(CASE WHEN {same_copy} THEN mirrored_at END, now()), "
        "mirror_checked_at = now(), mirror_error = NULL, mirror_head_checked_at = now(), "
        # Another object than the CDN read: it must be read through the CDN again.
        f"cdn_verified_at = CASE WHEN {same_copy} THEN cdn_verified_at END, "
        "mirror_failed_at = NULL, mirror_uploaded_bytes = mirror_uploaded_bytes + $5 "
        "WHERE id = $1",
        archive_id,
        bucket,
        key,
        etag,
        uploaded_bytes,
        store,
    )


async def record_failure(conn: Connection, archive_id: int, error: str) -> None:
    """A mirror attempt failed; a copy verified earlier (if any) stays trusted."""
    await conn.execute(
        "UPDATE archives SET mirror_failed_at = now(), mirror_error = $2 WHERE id = $1",
        archive_id,
        error[:2000],
    )


async def record_mismatch(conn: Connection, archive_id: int, error: str) -> None:
    """The bucket's copy no longer matches: stop redirecting to it at once."""
    await conn.execute(
        "UPDATE archives SET mirrored_at = NULL, cdn_verified_at = NULL, "
        "mirror_checked_at = now(), mirror_failed_at = now(), mirror_error = $2 WHERE id = $1",
        archive_id,
        error[:2000],
    )


async def record_cdn(conn: Connection, archive_id: int, url: str, error: str | None) -> None:
    """The outcome of an anonymous read of the copy's CDN address ``url``: with ``error``
    None the copy becomes a redirect target, else it stops being one and ``error`` says why."""
    await conn.execute(
        "UPDATE archives SET cdn_url = $2, "
        "cdn_verified_at = CASE WHEN $3::text IS NULL AND mirrored_at IS NOT NULL "
        "THEN now() END, cdn_error = $3 WHERE id = $1",
        archive_id,
        url,
        None if error is None else error[:2000],
    )


async def record_head_checked(conn: Connection, archive_ids: list[int]) -> None:
    """The periodic HEAD found these copies unchanged."""
    if archive_ids:
        await conn.execute(
            "UPDATE archives SET mirror_head_checked_at = now() WHERE id = ANY($1::bigint[])",
            archive_ids,
        )


async def add_uploaded_bytes(conn: Connection, archive_id: int, uploaded_bytes: int) -> None:
    """Count bytes sent for an attempt that then failed (the traffic happened all the same)."""
    if uploaded_bytes:
        await conn.execute(
            "UPDATE archives SET mirror_uploaded_bytes = mirror_uploaded_bytes + $2 WHERE id = $1",
            archive_id,
            uploaded_bytes,
        )


async def mirror_stats(
    conn: Connection, store: str, bucket: str, cdn_base: str | None = None
) -> MirrorStats:
    """Counts over every served file; ``cdn_base`` (``CDN_BASE_URL``) counts the copies whose
    address under it has not passed an anonymous read."""
    here = "mirrored_at IS NOT NULL AND s3_store = $1 AND s3_bucket = $2"
    row = await conn.fetchrow(
        "SELECT count(*) AS served, "
        f"count(*) FILTER (WHERE {here}) AS mirrored, "
        f"count(*) FILTER (WHERE mirror_failed_at IS NOT NULL AND NOT coalesce({here}, false)) "
        "AS failing, "
        f"count(*) FILTER (WHERE $3::text IS NOT NULL AND {here} AND (cdn_verified_at IS NULL "
        "OR NOT starts_with(cdn_url, $3::text || '/'))) AS cdn_unverified, "
        "coalesce(sum(mirror_uploaded_bytes), 0)::bigint AS uploaded "
        f"FROM archives WHERE {_SERVED}",
        store,
        bucket,
        cdn_base.rstrip("/") if cdn_base else None,
    )
    assert row is not None
    return MirrorStats(
        row["served"], row["mirrored"], row["failing"], row["uploaded"], row["cdn_unverified"]
    )


async def try_lock_archive(conn: Connection, archive_id: int) -> bool:
    """Take the archive's mirror lock on this session, without waiting."""
    locked: bool = await conn.fetchval(
        "SELECT pg_try_advisory_lock($1::bigint)", _MIRROR_LOCK_BASE | archive_id
    )
    return locked


async def unlock_archive(conn: Connection, archive_id: int) -> None:
    await conn.execute("SELECT pg_advisory_unlock($1::bigint)", _MIRROR_LOCK_BASE | archive_id)


async def lock_archive_within(conn: Connection, archive_id: int, seconds: float) -> bool:
    """Take the archive's mirror lock on this session, waiting at most ``seconds`` for whoever
    holds it (PostgreSQL's ``lock_timeout``: woken when it is released, no polling). The lock
    is the session's and outlives the transaction that waited for it."""
    timeout = f"{max(int(seconds * 1000), 1)}ms"
    try:
        async with conn.transaction():
            await conn.execute("SELECT set_config('lock_timeout', $1, true)", timeout)
            await conn.execute(
                "SELECT pg_advisory_lock($1::bigint)", _MIRROR_LOCK_BASE | archive_id
            )
    except asyncpg.LockNotAvailableError:
        return False
    return True
