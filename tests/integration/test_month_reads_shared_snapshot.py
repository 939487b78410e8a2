"""The month's count and consistency check read in slices on several connections: the same
figures as one statement (the check's count too), every slice in the one snapshot the first
connection exported, no wait on a pool that has no connection to spare, and a failing slice
fails the read."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast

import asyncpg
import pytest

from gomoku_archive.db import source
from gomoku_archive.db.pool import Connection, Pool, create_pool
from gomoku_archive.export import month_reads
from gomoku_archive.export.ranges import Range
from gomoku_archive.profile.months import Month
from tests.benchmarks.data import seed_month as seed_bulk_month
from tests.integration.rows import game_row, utc
from tests.integration.test_export import insert

AUG = Month(2026, 8)
Read = Callable[[Connection], Awaitable[tuple[int, int]]]


@dataclass(frozen=True, slots=True)
class Planned:
    """A range as the check sees it (``month_reads.CheckedRange``)."""

    seq: int
    planned: int
    first_second: datetime


def as_checked(plan: list[Range]) -> list[Planned]:
    """The plan's ranges as the check sees them."""
    return [Planned(seq, r.candidates, r.start) for seq, r in enumerate(plan)]


async def test_the_same_count_and_fingerprints_as_one_statement(pool: Pool, db_dsn: str) -> None:
    """The slices give the figures of one statement, and the check's count (its runs of ranges
    may cut a minute in two) is the plan's count of the same rows."""
    await seed_bulk_month(db_dsn, AUG, 6_000)
    async with pool.acquire() as conn:
        async with source.counting(conn):
            whole = await source.count_between(conn, "games", *source.month_bounds(AUG))
        counted = {
            n: await month_reads.count_month(conn, pool, "games", AUG, connections=n)
            for n in (1, 2, 4)
        }
        plan = month_reads.plan_month(whole, AUG, target=400)
        # Every edge inside a minute, so that consecutive runs share a minute.
        ranges = [
            Planned(r.seq, r.planned, r.first_second + timedelta(seconds=30 if r.seq else 0))
            for r in as_checked(plan)
        ]
        async with source.counting(conn):
            one = await source.check_ranges(
                conn, "games", *source.month_bounds(AUG), [r.first_second for r in ranges]
            )
        checked = {
            n: await month_reads.check_ranges(conn, pool, "games", AUG, ranges, connections=n)
            for n in (1, 2, 4)
        }
    assert whole.candidates > 6_000 and len(ranges) > 8
    assert all(c == whole for c in counted.values())
    assert one.count == whole
    assert all(c == one for c in checked.values())
    assert sum(f.rows for f in one.fingerprints) == whole.candidates


class LatePool:
    """A pool whose connections are handed out only once ``ready`` is set."""

    def __init__(self, pool: Pool, ready: asyncio.Event) -> None:
        self._pool, self._ready = pool, ready

    @contextlib.asynccontextmanager
    async def acquire(self) -> AsyncIterator[Connection]:
        await self._ready.wait()
        async with self._pool.acquire() as conn:
            yield conn


async def test_every_slice_reads_the_first_connections_snapshot(pool: Pool) -> None:
    """A game is committed after the first connection exported its snapshot and before any
    other connection began: no slice sees it, and the slices ran on several backends."""
    await insert(pool, [game_row(id=uuid.UUID(int=1), finished_at=utc(2026, 8, 3, 9, 0))])
    committed = asyncio.Event()

    async def count(conn: Connection) -> tuple[int, int]:
        row = await conn.fetchrow(
            "SELECT pg_backend_pid() AS pid, count(*) AS n FROM games, pg_sleep(0.2)"
        )
        assert row is not None
        return row["pid"], row["n"]

    async def commit_then_count(conn: Connection) -> tuple[int, int]:
        await insert(pool, [game_row(id=uuid.UUID(int=2), finished_at=utc(2026, 8, 3, 9, 1))])
        committed.set()
        return await count(conn)

    reads: list[Read] = [commit_then_count, *[count] * 7]
    async with pool.acquire() as first:
        seen = await month_reads.read_in_one_snapshot(
            first, cast(Pool, LatePool(pool, committed)), reads, connections=3
        )
        assert await first.fetchval("SELECT count(*) FROM games") == 2
    assert [n for _, n in seen] == [1] * 8
    assert len({pid for pid, _ in seen}) >= 2


async def test_a_pool_with_no_connection_to_spare_is_not_waited_for(db_dsn: str) -> None:
    """The only connection is the first one: it reads every slice itself."""
    small = await create_pool(db_dsn, min_size=1, max_size=1)
    try:
        async with small.acquire() as first:
            pid = await first.fetchval("SELECT pg_backend_pid()")

            async def read(conn: Connection) -> int:
                backend: int = await conn.fetchval("SELECT pg_backend_pid()")
                return backend

            seen = await asyncio.wait_for(
                month_reads.read_in_one_snapshot(first, small, [read] * 6, connections=4), 10
            )
        assert seen == [pid] * 6
    finally:
        await small.close()


async def test_a_failing_slice_fails_the_read_and_frees_the_connections(pool: Pool) -> None:
    async def slow(conn: Connection) -> int:
        value: int = await conn.fetchval("SELECT 1 FROM pg_sleep(0.3)")
        return value

    async def broken(conn: Connection) -> int:
        value: int = await conn.fetchval("SELECT 1 / 0")
        return value

    async with pool.acquire() as first:
        with pytest.raises(asyncpg.DivisionByZeroError):
            await month_reads.read_in_one_snapshot(
                first, pool, [slow, slow, broken, slow, slow], connections=3
            )
        assert await first.fetchval("SELECT 1") == 1  # its transaction was rolled back
        assert not first.is_in_transaction()
    await asyncio.sleep(0.1)
    assert pool.get_idle_size() == pool.get_size()
