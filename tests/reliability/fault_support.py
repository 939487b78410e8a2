"""Helpers of the fault suites: finding an export's PostgreSQL backends (the month-lock holder,
which also writes the chunks, and the snapshot reader) and terminating them, and reading what
an export left in the archive tables."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import asyncpg

LOCK_CLASS = 0x4750
"""gomoku_archive.db.locks' first advisory-lock key."""


@dataclass(frozen=True)
class ExportBackends:
    writer: int
    """The session holding the month's advisory lock (it writes the chunks and publishes)."""
    reader: int
    """The session streaming the month's candidates in its snapshot."""


async def export_backends(dsn: str, month_key: int) -> ExportBackends | None:
    """The export's two backends once it is streaming, else None."""
    conn = await asyncpg.connect(dsn)
    try:
        writer = await conn.fetchval(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND classid = $1 AND objid = $2 "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            LOCK_CLASS,
            month_key,
        )
        reader = await conn.fetchval(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND xact_start IS NOT NULL "
            "AND query LIKE '%FROM \"games\"%ORDER BY%'"
        )
    finally:
        await conn.close()
    if writer is None or reader is None:
        return None
    return ExportBackends(writer=writer, reader=reader)


async def terminate(dsn: str, pids: list[int]) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        for pid in pids:
            assert await conn.fetchval("SELECT pg_terminate_backend($1)", pid)
    finally:
        await conn.close()


async def fetchval(dsn: str, sql: str, *args: object) -> object:
    conn = await asyncpg.connect(dsn)
    try:
        return await conn.fetchval(sql, *args)
    finally:
        await conn.close()


async def parts_written(dsn: str) -> int:
    """The 256 KiB segments of range parts written so far (while the ranges stream)."""
    return int(await fetchval(dsn, "SELECT count(*) FROM archive_parts"))  # type: ignore[call-overload]


async def streaming_backends(
    dsn: str, month_key: int, *, seconds: float, parts: int = 1
) -> ExportBackends:
    """Wait until the export holds its lock, streams its snapshot and has written ``parts``
    segments of its part: by then it is in the middle of its stream, whatever the machine's
    speed (a sleep was not: a faster export had ended before it)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = await export_backends(dsn, month_key)
        if found is not None and await parts_written(dsn) >= parts:
            return found
        await asyncio.sleep(0.01)
    raise AssertionError("the export never reached its streaming phase: seed more games")


async def leftovers(dsn: str) -> dict[str, int]:
    """What no normal state should keep: building rows, and chunks of unserved rows."""
    conn = await asyncpg.connect(dsn)
    try:
        building = await conn.fetchval("SELECT count(*) FROM archives WHERE state = 'building'")
        orphan_chunks = await conn.fetchval(
            "SELECT count(*) FROM archive_chunks c JOIN archives a ON a.id = c.archive_id "
            "WHERE a.state NOT IN ('published', 'superseded')"
        )
    finally:
        await conn.close()
    return {"building": building, "orphan_chunks": orphan_chunks}


async def archive_rows(dsn: str) -> list[tuple[str, str, str | None]]:
    """(month, state, error) of every archive row (not the Parquet companions), in id order."""
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            "SELECT month, state, error FROM archives WHERE companion_of IS NULL ORDER BY id"
        )
    finally:
        await conn.close()
    return [(r["month"], r["state"], r["error"]) for r in rows]
