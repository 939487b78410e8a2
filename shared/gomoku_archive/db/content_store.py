"""The content check's place in every copy and its last full comparison (migration 0009): the
statements ``storage.mirror_checks`` runs under a copy's mirror lock, and the read behind the
``gomoku_mirror_content_checked_timestamp_seconds`` gauge. The windows themselves are
``jobs.content_sample``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gomoku_archive.db.pool import Connection

_TARGETS = (
    "state IN ('published', 'superseded') AND file_name IS NOT NULL "
    "AND mirrored_at IS NOT NULL AND s3_store = $1 AND s3_bucket = $2"
)


@dataclass(frozen=True, slots=True)
class ContentChecked:
    """One redirect target's last full comparison, for ``/metrics``."""

    file_name: str
    bytes: int
    at: datetime
    """The later of the end of the content check's last complete cycle over the copy and the
    time the copy was verified (``mirrored_at``: its upload was read back whole)."""


async def content_offset(conn: Connection, archive_id: int) -> int:
    """The byte the next window of the copy starts at."""
    offset: int | None = await conn.fetchval(
        "SELECT content_offset FROM archives WHERE id = $1", archive_id
    )
    return offset or 0


async def record_window_right(
    conn: Connection, archive_id: int, *, first: bool, last: bool, next_offset: int
) -> None:
    """A window was found right: move on to ``next_offset``; a ``first`` window starts a
    cycle, a ``last`` one completes the cycle it ends (one that started here)."""
    await conn.execute(
        "UPDATE archives SET content_offset = $2, "
        "content_cycle_started_at = CASE WHEN $3 THEN now() ELSE content_cycle_started_at END, "
        "content_checked_at = CASE WHEN $4 AND ($3 OR content_cycle_started_at IS NOT NULL) "
        "THEN now() ELSE content_checked_at END "
        "WHERE id = $1",
        archive_id,
        next_offset,
        first,
        last,
    )


async def restart_content_cycle(conn: Connection, archive_id: int) -> None:
    """A window was found wrong: the copy is withdrawn, and its repaired copy is read from the
    start again."""
    await conn.execute(
        "UPDATE archives SET content_offset = 0, content_cycle_started_at = NULL WHERE id = $1",
        archive_id,
    )


async def content_checked(conn: Connection, store: str, bucket: str) -> list[ContentChecked]:
    """Every served file with a verified copy in ``bucket`` of ``store`` (``mirror_store``'s
    store identity), by file name."""
    rows = await conn.fetch(
        "SELECT file_name, bytes, greatest(content_checked_at, mirrored_at) AS at "
        f"FROM archives WHERE {_TARGETS} ORDER BY file_name",
        store,
        bucket,
    )
    return [ContentChecked(r["file_name"], r["bytes"], r["at"]) for r in rows]
