"""Real worker processes (``gomoku-archive worker``) against the real Redis and PostgreSQL:
racing workers publish each month once; a killed worker leaves nothing visible and the next one
publishes; SIGTERM stops cleanly or lets the export finish within the grace period."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from gomoku_archive.profile.months import Month
from gomoku_archive.queue.connection import connect
from gomoku_archive.queue.snapshot import read_snapshot
from tests.integration.conftest import flushed_redis
from tests.integration.worker_support import (
    WorkerProcess,
    archive_states,
    cli_env,
    last_closed_month,
    seed_month,
    wait_until,
    workers,
)

pytestmark = pytest.mark.slow

LAST = last_closed_month()
PREV = LAST.previous()
DEMO_GAMES = 1000
"""Played once per session; each test multiplies them (``copies``) to make exports take seconds."""


@pytest.fixture
def other_redis_url(redis_url: str) -> Iterator[str]:
    """A second Redis database number: for arq, a separate Redis that shares nothing."""
    base, number = redis_url.rsplit("/", 1)
    with flushed_redis(f"{base}/{int(number) % 15 + 1}") as url:
        yield url


async def published_months(dsn: str) -> list[str]:
    return sorted(m for m, state in await archive_states(dsn) if state == "published")


async def lock_held(dsn: str, month: Month) -> bool:
    conn = await asyncpg.connect(dsn)
    try:
        held: bool = await conn.fetchval(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND classid = $1 AND objid = $2 AND objsubid = 2 "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))",
            0x4750,
            month.year * 100 + month.month,
        )
    finally:
        await conn.close()
    return held


async def building(dsn: str, month: Month) -> bool:
    return (str(month), "building") in await archive_states(dsn) and await lock_held(dsn, month)


async def chunk_count(dsn: str) -> int:
    conn = await asyncpg.connect(dsn)
    try:
        count: int = await conn.fetchval("SELECT count(*) FROM archive_chunks")
    finally:
        await conn.close()
    return count


def outcomes(*processes: WorkerProcess) -> list[tuple[str, str]]:
    return sorted((e["month"], e["outcome"]) for p in processes for e in p.events("export_job"))


@pytest.mark.parametrize("separate_redis", [False, True], ids=["one-redis", "two-redis"])
async def test_racing_workers_publish_each_month_once(
    db_dsn: str, redis_url: str, other_redis_url: str, tmp_path: Path, separate_redis: bool
) -> None:
    for month in (PREV, LAST):
        await seed_month(db_dsn, month, DEMO_GAMES, copies=10)
    env_a = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=PREV)
    env_b = cli_env(
        database_url=db_dsn,
        redis_url=other_redis_url if separate_redis else redis_url,
        first_month=PREV,
    )
    a = WorkerProcess(env_a, tmp_path / "a.log")
    b = WorkerProcess(env_b, tmp_path / "b.log")
    # Each Redis has its own export job per month, so every job of every Redis must end.
    jobs_expected = 4 if separate_redis else 2
    with workers(a, b):

        async def all_jobs_ended() -> bool:
            return len(outcomes(a, b)) >= jobs_expected

        await wait_until(all_jobs_ended, seconds=120, what="every export job to end")
        assert a.process.poll() is None, a.output()
        assert b.process.poll() is None, b.output()

    assert sorted(await archive_states(db_dsn)) == [
        (str(PREV), "published"),
        (str(LAST), "published"),
    ], "one published row per month, no superseded duplicate, no leftovers"
    found = outcomes(a, b)
    assert [o for o in found if o[1] == "published"] == [
        (str(PREV), "published"),
        (str(LAST), "published"),
    ]
    assert all(o == "skipped" for _, o in found if o != "published"), found


async def test_a_worker_killed_mid_export_leaves_nothing_visible(
    db_dsn: str, redis_url: str, tmp_path: Path
) -> None:
    await seed_month(db_dsn, LAST, DEMO_GAMES, copies=40)
    env = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=LAST)
    a = WorkerProcess(env, tmp_path / "a.log", "--stale-after", "2")
    with workers(a):
        await wait_until(lambda: building(db_dsn, LAST), seconds=60, what="the export to start")
        a.process.kill()
        assert a.wait(10) == -signal.SIGKILL

    # Nothing is visible: only an unfinished 'building' row, which is never served.
    assert await published_months(db_dsn) == []
    assert (str(LAST), "published") not in await archive_states(db_dsn)

    # PostgreSQL dropped the dead worker's lock with its session.
    async def lock_released() -> bool:
        return not await lock_held(db_dsn, LAST)

    await wait_until(lock_released, seconds=10, what="the dead worker's lock to go")

    b = WorkerProcess(env, tmp_path / "b.log", "--stale-after", "2")
    with workers(b):
        await wait_until(
            lambda: published_months(db_dsn), seconds=90, what="the next worker to publish"
        )
    assert await archive_states(db_dsn) == [(str(LAST), "published")], "leftovers removed"
    released = b.events("stale_job_released")
    assert [e["job_id"] for e in released] == [f"export:{LAST}"]
    assert [o for _, o in outcomes(b)] == ["published"]


async def test_sigterm_cancels_an_export_that_outlasts_the_grace_period(
    db_dsn: str, redis_url: str, tmp_path: Path
) -> None:
    # 200,000 games: four ranges, several seconds of export for one worker, whatever the
    # machine (40,000 were once enough; a faster export then ended within the grace).
    await seed_month(db_dsn, LAST, DEMO_GAMES, copies=200)
    env = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=LAST)
    a = WorkerProcess(env, tmp_path / "a.log", "--grace", "1")
    with workers(a):
        await wait_until(lambda: building(db_dsn, LAST), seconds=60, what="the export to start")
        a.signal(signal.SIGTERM)
        assert a.wait(30) == 0, a.output()

    # Stopped cleanly: no published or building row, no chunk left; the attempt is on record.
    assert await archive_states(db_dsn) == [(str(LAST), "failed")]
    assert await chunk_count(db_dsn) == 0
    assert [o for _, o in outcomes(a)] == ["cancelled"]
    assert not await lock_held(db_dsn, LAST)
    # arq keeps the job queued, not in progress: the next worker takes it at once.
    client = await connect(redis_url)
    try:
        snapshot = await read_snapshot(client)
    finally:
        await client.aclose(close_connection_pool=True)
    queued = {j.job_id: j.running for j in snapshot.queued}
    assert queued.pop(f"export:{LAST}") is False
    # The cancelled build's range jobs may still wait: they find nothing to claim and skip.
    assert all(job.startswith(f"export:{LAST}:build:") for job in queued), queued
    assert not any(queued.values()), queued

    b = WorkerProcess(env, tmp_path / "b.log")
    with workers(b):
        await wait_until(lambda: published_months(db_dsn), seconds=90, what="a publication")
    assert [s for _, s in await archive_states(db_dsn)] == ["failed", "published"]


async def test_sigterm_lets_an_export_finish_within_the_grace_period(
    db_dsn: str, redis_url: str, tmp_path: Path
) -> None:
    await seed_month(db_dsn, LAST, DEMO_GAMES, copies=20)
    env = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=LAST)
    a = WorkerProcess(env, tmp_path / "a.log", "--grace", "120")
    with workers(a):
        await wait_until(lambda: building(db_dsn, LAST), seconds=60, what="the export to start")
        a.signal(signal.SIGTERM)
        assert a.wait(120) == 0, a.output()
    assert await archive_states(db_dsn) == [(str(LAST), "published")]
    assert [o for _, o in outcomes(a)] == ["published"]
    assert a.events("worker_stopped")
