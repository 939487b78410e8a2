"""Races (issue 12): several watchdogs over one dead worker's job (failure 9: each stale run is
released exactly once, and never a later run of the same job), and four real workers over
three missing months, on one Redis and on two: each month published exactly once."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest
from arq.constants import in_progress_key_prefix

from gomoku_archive.db.pool import Pool
from gomoku_archive.queue.connection import connect
from gomoku_archive.settings import Settings
from gomoku_archive.worker.watchdog import Watchdog
from tests.integration.conftest import flushed_redis, private_redis
from tests.integration.worker_support import (
    WorkerProcess,
    cli_env,
    seed_month,
    wait_until,
    workers,
)

JOB = "export:2026-08"
SUMMARY: list[str] = []


async def watchdogs(settings: Settings, pool: Pool, count: int) -> list[Watchdog]:
    return [
        Watchdog(
            client=await connect(settings.redis_url),
            pool=pool,
            worker=f"test-host:{n}",
            started_at=datetime.now(UTC),
            stale_after_seconds=0.3,
            interval_seconds=0.1,
        )
        for n in range(count)
    ]


async def test_each_stale_run_is_released_exactly_once(settings: Settings, pool: Pool) -> None:
    dogs = await watchdogs(settings, pool, 4)
    client = await connect(settings.redis_url)
    key = in_progress_key_prefix + JOB
    try:
        rounds = 10
        released_per_round = []
        for _ in range(rounds):
            # A worker took the job and died (no month lock is held): arq's in-progress key.
            await client.psetex(key, 3_600_000, b"1")
            for dog in dogs:
                await dog.beat()
            await asyncio.sleep(0.35)
            results = await asyncio.gather(*(dog.beat() for dog in dogs))
            released_per_round.append(sum(JOB in r for r in results))
            assert not await client.exists(key)

        # A watchdog that saw the dead run must not free the next run of the job: another
        # watchdog released it and a live worker took the job again meanwhile.
        await client.psetex(key, 3_600_000, b"1")
        for dog in dogs:
            await dog.beat()
        await asyncio.sleep(0.35)
        assert JOB in await dogs[0].beat()
        await asyncio.sleep(0.05)
        await client.psetex(key, 3_600_000, b"1")  # the live worker's own run
        late = await asyncio.gather(*(dog.beat() for dog in dogs[1:]))
        assert not any(late), late
        assert await client.exists(key)
    finally:
        for dog in dogs:
            await dog._client.aclose(close_connection_pool=True)
        await client.aclose(close_connection_pool=True)
    assert released_per_round == [1] * rounds, released_per_round
    SUMMARY.append(
        f"{rounds} stale runs seen by 4 watchdogs each: released {sum(released_per_round)} "
        "times (once each); a later live run released 0 times"
    )


async def published_counts(dsn: str) -> dict[str, int]:
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            "SELECT month, count(*) FILTER (WHERE state = 'published') AS published, "
            "count(*) FILTER (WHERE state = 'superseded') AS superseded FROM archives "
            "WHERE companion_of IS NULL GROUP BY month ORDER BY month"
        )
    finally:
        await conn.close()
    assert all(r["superseded"] == 0 for r in rows), "a month was published twice"
    return {r["month"]: r["published"] for r in rows}


@pytest.mark.slow
@pytest.mark.parametrize("redis_servers", [1, 2])
async def test_four_workers_publish_each_missing_month_once(
    db_dsn: str, redis_url: str, tmp_path: Path, redis_servers: int
) -> None:
    from tests.integration.worker_support import last_closed_month

    last = last_closed_month()
    months = [last.previous().previous(), last.previous(), last]
    for n, month in enumerate(months):
        await seed_month(db_dsn, month, 200, copies=3 + n)
    with private_redis() as second_base, flushed_redis(second_base + "/0") as second:
        urls = [redis_url, second if redis_servers == 2 else redis_url]
        procs = [
            WorkerProcess(
                cli_env(database_url=db_dsn, redis_url=urls[n % 2], first_month=months[0]),
                tmp_path / f"worker{n}.log",
                "--stale-after",
                "3",
            )
            for n in range(4)
        ]
        with workers(*procs):

            async def all_published() -> bool:
                counts = await published_counts(db_dsn)
                return len(counts) == 3

            await wait_until(all_published, seconds=180, what="three published months")
            await asyncio.sleep(2)  # any duplicate run would publish or fail by now
            counts = await published_counts(db_dsn)
            outcomes = [
                e["outcome"] for p in procs for e in p.events("export_job") if "outcome" in e
            ]
    assert counts == {str(m): 1 for m in months}
    assert outcomes.count("published") == 3, outcomes
    assert "failed" not in outcomes, outcomes
    SUMMARY.append(
        f"4 workers on {redis_servers} Redis over 3 missing months: each published once "
        f"(job outcomes: {sorted(outcomes)})"
    )


def test_zz_report() -> None:
    print("\n".join(["races:", *SUMMARY]))
