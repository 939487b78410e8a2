"""A range slot's claim (``range_store.claim_next_range``) against the real PostgreSQL: archive
order across builds, concurrent claimers each getting a range of their own, nothing of a build
whose coordinator is gone, a stale claim taken over with its wait counted from the instant it
went stale, and when nothing is claimable, how soon something could be. The notifications a
plan and a failure send, heard by a ``RangeNotices``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta

import pytest

from gomoku_archive.db import archive_store, locks, range_store
from gomoku_archive.db.pool import Pool
from gomoku_archive.db.range_notices import RangeNotices
from gomoku_archive.profile.months import Month

pytestmark = pytest.mark.slow

AUG, SEP = Month(2026, 8), Month(2026, 9)
RANGES = 4


def plan(month: Month) -> list[tuple[datetime, datetime, int]]:
    start = month.start.replace(tzinfo=None)
    return [(start + timedelta(days=n), start + timedelta(days=n + 1), 100) for n in range(RANGES)]


@asynccontextmanager
async def under_way(pool: Pool, month: Month) -> AsyncIterator[int]:
    """A build as its coordinator holds it: the month's lock, a building row and its plan."""
    async with pool.acquire() as conn:
        assert await locks.try_lock_month(conn, month)
        try:
            archive_id = await archive_store.start_building(conn, str(month))
            await range_store.add_ranges(conn, archive_id, plan(month))
            yield archive_id
        finally:
            await locks.unlock_month(conn, month)


async def claim(pool: Pool, worker: str = "w:1") -> range_store.NextRange:
    async with pool.acquire() as conn:
        return await range_store.claim_next_range(
            conn, worker=worker, max_attempts=3, stale_seconds=range_store.STALE_SECONDS
        )


async def test_ranges_are_claimed_in_archive_order_and_never_twice(pool: Pool) -> None:
    async with under_way(pool, AUG) as aug, under_way(pool, SEP) as sep:
        claims = await asyncio.gather(*(claim(pool, f"w:{n}") for n in range(2 * RANGES)))
        got = sorted((c.claim.archive_id, c.claim.seq) for c in claims if c.claim)
        assert got == [(b, s) for b in (aug, sep) for s in range(RANGES)]
        nothing = await claim(pool)
        assert nothing.claim is None
        # Every range is held, with a fresh heartbeat: claimable again in STALE_SECONDS.
        assert nothing.stale_in is not None
        assert range_store.STALE_SECONDS - 5 < nothing.stale_in <= range_store.STALE_SECONDS
        first = min((c.claim for c in claims if c.claim), key=lambda c: c.archive_id * 100 + c.seq)
        assert (first.planned, first.attempt) == (100, 1)
        assert 0 <= first.waited_seconds < 5


async def test_a_build_whose_coordinator_is_gone_is_not_claimed(pool: Pool) -> None:
    async with under_way(pool, AUG):
        pass  # its coordinator let go of the month's lock; the row is still building
    found = await claim(pool)
    assert found == range_store.NextRange(None, None)


async def test_a_stale_claim_is_taken_over_and_its_wait_starts_when_it_went_stale(
    pool: Pool,
) -> None:
    async with under_way(pool, AUG) as aug:
        for _ in range(RANGES):
            assert (await claim(pool, "dead:1")).claim is not None
        async with pool.acquire() as conn:
            await conn.execute(
                "UPDATE archive_ranges SET heartbeat_at = now() - interval '20 seconds' "
                "WHERE archive_id = $1 AND seq = 2",
                aug,
            )
        taken = (await claim(pool, "alive:2")).claim
        assert taken is not None
        assert (taken.seq, taken.attempt) == (2, 2)
        # Stale 5 s ago (20 s old against the 15 s stale period).
        assert 4 < taken.waited_seconds < 10
        async with pool.acquire() as conn:
            (held,) = [r for r in await range_store.running_ranges(conn) if r.seq == 2]
        assert (held.worker, held.stale) == ("alive:2", False)


async def test_a_plan_and_a_retryable_failure_wake_the_listeners(pool: Pool, db_dsn: str) -> None:
    notices = RangeNotices(db_dsn)
    await notices.start()
    try:
        assert notices.listening
        async with under_way(pool, AUG):
            assert await notices.wait_queued(10)  # the plan
            taken = (await claim(pool)).claim
            assert taken is not None
            async with pool.acquire() as conn:
                await range_store.fail_range(conn, taken, "lost", retryable=False)
            assert not await notices.wait_queued(0.5)  # a failure for good queues nothing
            taken = (await claim(pool)).claim
            assert taken is not None
            async with pool.acquire() as conn:
                await range_store.fail_range(conn, taken, "lost", retryable=True)
            assert await notices.wait_queued(10)  # claimable again
            assert not await notices.wait_queued(0.2)  # nothing more
    finally:
        await notices.close()
