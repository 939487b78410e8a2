"""A slow month never runs twice (issue 26): an export's running record is written before its
first database statement and kept alive, the watchdog never releases a job whose record lives,
a run whose record another run took stops as ``released``; and with real worker processes, a
rebuild held behind ``LOCK TABLE games`` longer than ``--stale-after`` is built once, with one
successful record, while ``jobs`` shows it counting."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from arq.constants import in_progress_key_prefix

from gomoku_archive.db.pool import Pool
from gomoku_archive.export import month_reads
from gomoku_archive.jobs.queue_view import RunningInfo
from gomoku_archive.profile.months import Month
from gomoku_archive.queue.connection import connect
from gomoku_archive.queue.snapshot import read_snapshot
from gomoku_archive.queue.worker_keys import (
    RUNNING_KEY_PREFIX,
    clear_running,
    mark_running,
    refresh_running,
)
from gomoku_archive.settings import Settings
from gomoku_archive.worker import export_jobs
from gomoku_archive.worker.watchdog import Watchdog
from tests.integration.worker_support import (
    WorkerProcess,
    archive_states,
    cli_env,
    close_context,
    job_context,
    last_closed_month,
    run_cli,
    seed_month,
    wait_until,
    workers,
)

pytestmark = pytest.mark.slow

LAST = last_closed_month()
JOB = "export:2026-08"
SEP = Month(2026, 9)
JOB_SEP = "export:2026-09:force:x"


def running_info(run: str) -> RunningInfo:
    now = datetime.now(UTC)
    return RunningInfo(
        job_id=JOB,
        worker="test-host:1",
        started_at=now,
        deadline=now + timedelta(minutes=5),
        candidates=0,
        attempt=1,
        phase="counting",
        run=run,
    )


async def test_the_watchdog_never_releases_a_job_whose_running_record_lives(
    settings: Settings, pool: Pool
) -> None:
    client = await connect(settings.redis_url)
    dog = Watchdog(
        client=client,
        pool=pool,
        worker="test-host:2",
        started_at=datetime.now(UTC),
        stale_after_seconds=0.3,
        interval_seconds=0.1,
    )
    try:
        # In progress, no month lock held (counting before it, say), and its record alive.
        await client.psetex(in_progress_key_prefix + JOB, 3_600_000, b"1")
        await mark_running(client, running_info("run-a"))
        await dog.beat()
        await asyncio.sleep(0.4)
        assert await dog.beat() == []
        assert await client.exists(in_progress_key_prefix + JOB)
        # The record gone (its worker died and it expired): released.
        await clear_running(client, JOB)
        await dog.beat()
        await asyncio.sleep(0.4)
        assert await dog.beat() == [JOB]
    finally:
        await client.aclose(close_connection_pool=True)


async def test_a_run_learns_that_another_run_took_its_record(settings: Settings) -> None:
    client = await connect(settings.redis_url)
    try:
        first = running_info("run-a")
        await mark_running(client, first)
        assert await refresh_running(client, dataclasses.replace(first, phase="exporting"))
        assert b'"exporting"' in await client.get(RUNNING_KEY_PREFIX + JOB)
        await mark_running(client, running_info("run-b"))  # the job's next run
        assert not await refresh_running(client, first)
        assert b'"run-b"' in await client.get(RUNNING_KEY_PREFIX + JOB)
    finally:
        await client.aclose(close_connection_pool=True)


async def test_a_rebuild_held_behind_a_table_lock_is_built_once(
    db_dsn: str, redis_url: str, tmp_path: Path
) -> None:
    await seed_month(db_dsn, LAST, 300)
    env = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=LAST)
    a = WorkerProcess(env, tmp_path / "a.log", "--stale-after", "3")
    b = WorkerProcess(env, tmp_path / "b.log", "--stale-after", "3")
    with workers(a, b):

        async def first_build() -> bool:
            return any(e.get("outcome") == "published" for e in a.events("export_job")) or any(
                e.get("outcome") == "published" for e in b.events("export_job")
            )

        await wait_until(first_build, seconds=90, what="the month's first build")
        migration = await asyncpg.connect(db_dsn)  # the game server's migration
        transaction = migration.transaction()
        await transaction.start()
        await migration.execute("LOCK TABLE games IN ACCESS EXCLUSIVE MODE")
        try:
            done = run_cli("rebuild", "--month", str(LAST), env=env)
            assert done.returncode == 0, done.stderr
            job_id = done.stdout.strip()
            client = await connect(redis_url)
            try:

                async def counting() -> bool:
                    info = (await read_snapshot(client)).running.get(job_id)
                    return info is not None and info.phase == "counting"

                await wait_until(counting, seconds=30, what="the rebuild to count")
                document = json.loads(run_cli("jobs", "--json", env=env).stdout)
                (shown,) = document["jobs"]["inProgress"]
                assert (shown["id"], shown["phase"]) == (job_id, "counting")
                await asyncio.sleep(10)  # more than three times --stale-after
                assert await counting()
            finally:
                await client.aclose(close_connection_pool=True)
        finally:
            await transaction.rollback()
            await migration.close()

        def runs() -> list[dict[str, object]]:
            return [e for p in (a, b) for e in p.events("export_job") if e["job_id"] == job_id]

        async def ended() -> bool:
            return any(e["outcome"] != "retry" for e in runs())

        await wait_until(ended, seconds=60, what="the rebuild to end")
        await asyncio.sleep(3)  # a duplicate run would have started by now
        assert [e["outcome"] for e in runs()] == ["unchanged"], runs()
        assert not [e for p in (a, b) for e in p.events("stale_job_released")]
        client = await connect(redis_url)
        try:
            results = [r for r in (await read_snapshot(client)).results if r.job_id == job_id]
        finally:
            await client.aclose(close_connection_pool=True)
        assert [(r.success, r.outcome) for r in results] == [(True, "unchanged")]
    assert await archive_states(db_dsn) == [(str(LAST), "published")]


async def test_a_run_whose_record_another_run_took_ends_as_released(
    settings: Settings, pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run counts (held up); meanwhile the job's next run writes its own record (as after
    a release in a Redis outage): at its next refresh the first run stops and its job ends as
    ``released``, without publishing."""
    await seed_month(settings.database_url, SEP, 20)
    counting = asyncio.Event()
    real = month_reads.count_month

    async def held(first: Any, pool: Any, table: str, month: Month, **kwargs: Any) -> Any:
        counting.set()
        await asyncio.sleep(60)
        return await real(first, pool, table, month, **kwargs)

    monkeypatch.setattr(month_reads, "count_month", held)
    ctx = await job_context(settings, pool, now=datetime(2026, 11, 3, tzinfo=UTC), job_id=JOB_SEP)
    try:
        run = asyncio.create_task(export_jobs.export_month(ctx, str(SEP)))
        await asyncio.wait_for(counting.wait(), 10)
        taken = dataclasses.replace(running_info("run-b"), job_id=JOB_SEP)
        await mark_running(ctx["redis"], taken)
        result = await asyncio.wait_for(run, 10)
        record = await ctx["redis"].get(RUNNING_KEY_PREFIX + JOB_SEP)
    finally:
        await close_context(ctx)
    assert result["outcome"] == "released"
    assert b'"run-b"' in record  # the other run's record stays
    assert await archive_states(settings.database_url) == [("2026-09", "failed")]
    async with pool.acquire() as conn:
        error = await conn.fetchval(
            "SELECT error FROM archives WHERE month = '2026-09' AND companion_of IS NULL"
        )
    assert error == "export cancelled (released: the job runs again elsewhere)"
