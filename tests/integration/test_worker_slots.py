"""No job slot waits (issue 29): ONE real worker process (two job slots) builds a month of many
ranges as its coordinator, and a mirror job queued after the build started runs and finishes
while the month still builds: with no other worker alive the build queues no range jobs (this
worker's slots could only skip them), and a range job that arrives while its worker exports a
range already returns at once instead of waiting for the range gate."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from arq import Retry

from gomoku_archive.db import archive_store, locks
from gomoku_archive.db.pool import Pool
from gomoku_archive.export.month import export_month
from gomoku_archive.queue.connection import connect
from gomoku_archive.queue.enqueue import enqueue_mirror
from gomoku_archive.settings import Settings
from gomoku_archive.worker.context import range_gate_of
from gomoku_archive.worker.export_jobs import BUSY_REQUEUE_SECONDS, BUSY_REQUEUES, export_range
from tests.integration.s3_support import CREDENTIALS, moto_server, new_bucket
from tests.integration.test_worker_ranges import rebuild, started
from tests.integration.worker_support import (
    WorkerProcess,
    cli_env,
    close_context,
    job_context,
    last_closed_month,
    seed_month,
    wait_until,
    workers,
)

pytestmark = pytest.mark.slow

LAST = last_closed_month()
EARLIER = LAST.previous()
K = 5000


@pytest.fixture
def s3_settings(settings: Settings) -> Iterator[Settings]:
    with moto_server() as endpoint:
        yield dataclasses.replace(
            settings, s3_bucket=new_bucket(endpoint), s3_prefix="db/", s3_endpoint_url=endpoint
        )


def worker_env(s: Settings) -> dict[str, str]:
    assert s.s3_bucket is not None and s.s3_endpoint_url is not None
    env = cli_env(database_url=s.database_url, redis_url=s.redis_url, first_month=LAST)
    return (
        env
        | CREDENTIALS
        | {
            "EXPORT_PROCESSES": "1",
            "S3_BUCKET": s.s3_bucket,
            "S3_PREFIX": s.s3_prefix,
            "S3_ENDPOINT_URL": s.s3_endpoint_url,
        }
    )


async def test_a_mirror_job_runs_while_one_worker_builds_a_month(
    pool: Pool, s3_settings: Settings, tmp_path: Path
) -> None:
    dsn = s3_settings.database_url
    await seed_month(dsn, LAST, 1000, copies=150)
    await seed_month(dsn, EARLIER, 30)
    (worker,) = processes = (WorkerProcess(worker_env(s3_settings), tmp_path / "worker.log"),)
    with workers(*processes):

        async def planner_build_mirrored() -> bool:
            return started(processes) and bool(worker.events("mirror_job"))

        # The planner's own build of the month (and its mirror) first, out of the way.
        await wait_until(planner_build_mirrored, seconds=180, what="the planner's build")
        # A file with no copy yet, published after the planner's backfill looked.
        earlier = await export_month(pool, table="games", month=EARLIER)
        assert earlier.archive is not None
        job_id = await rebuild(s3_settings.redis_url, K, "slots")

        async def building() -> bool:
            return any(e["job_id"] == job_id for e in worker.events("export_ranges_not_enqueued"))

        await wait_until(building, seconds=60, what="the rebuild's plan", every=0.02)
        redis = await connect(s3_settings.redis_url)
        try:
            assert await enqueue_mirror(redis, earlier.archive.id)
        finally:
            await redis.aclose(close_connection_pool=True)

        async def rebuilt() -> bool:
            return any(e["job_id"] == job_id for e in worker.events("export_job"))

        await wait_until(rebuilt, seconds=180, what="the rebuild")

    lines = [json.loads(x) for x in worker.output().splitlines() if x.startswith("{")]
    mirrored = next(
        i
        for i, e in enumerate(lines)
        if e.get("event") == "mirror_job" and e.get("archive_id") == earlier.archive.id
    )
    assert lines[mirrored]["outcome"] == "uploaded"
    build = [
        e
        for e in lines
        if e.get("event") == "export_range"
        and e.get("archive_id") not in (None, earlier.archive.id)
    ]
    archive_id = build[-1]["archive_id"]
    done = [i for i, e in enumerate(lines) if _range_of(e, archive_id) == "done"]
    assert len(done) >= 10
    # The mirror finished while the month was still building: most ranges were done after it.
    assert sum(i > mirrored for i in done) >= len(done) // 2, (mirrored, done)
    assert not [e for e in lines if _range_of(e, archive_id) == "skipped"]


async def test_a_range_job_never_waits_for_its_worker_s_range_gate(
    settings: Settings, pool: Pool
) -> None:
    ctx = await job_context(settings, pool, now=datetime.now(UTC), job_id="range-job")
    try:
        async with build_under_way(pool) as archive_id, range_gate_of(ctx):
            # The coordinator of this process exports a range. Back to the queue at once, for
            # another worker to take...
            with pytest.raises(Retry) as requeued:
                await asyncio.wait_for(export_range(ctx, str(LAST), archive_id, 0), timeout=5)
            # ...and, after as many turns as that allows, skipped at once.
            ctx["job_try"] = BUSY_REQUEUES + 1
            summary = await asyncio.wait_for(export_range(ctx, str(LAST), archive_id, 0), timeout=5)
    finally:
        await close_context(ctx)
    assert requeued.value.defer_score == BUSY_REQUEUE_SECONDS * 1000
    assert summary["outcome"] == "skipped"
    assert "exports a range already" in summary["reason"]


@pytest.mark.parametrize("gone", ["its coordinator died", "it ended"])
async def test_a_range_job_of_a_build_no_longer_under_way_skips_at_once(
    settings: Settings, pool: Pool, gone: str
) -> None:
    """Even on a busy worker: such a job never goes back to the queue (a crashed pool's range
    jobs, released by the watchdog, leave the queue at their next run)."""
    ctx = await job_context(settings, pool, now=datetime.now(UTC), job_id="range-job")
    try:
        async with build_under_way(pool) as archive_id:
            if gone == "it ended":
                async with pool.acquire() as conn:
                    await conn.execute("DELETE FROM archives WHERE id = $1", archive_id)
        if gone == "it ended":  # the month's next build holds the lock now
            async with build_under_way(pool), range_gate_of(ctx):
                summary = await export_range(ctx, str(LAST), archive_id, 0)
        else:
            async with range_gate_of(ctx):
                summary = await export_range(ctx, str(LAST), archive_id, 0)
    finally:
        await close_context(ctx)
    assert summary["outcome"] == "skipped"
    assert summary["reason"].startswith("its build is no longer under way")


@contextlib.asynccontextmanager
async def build_under_way(pool: Pool) -> AsyncIterator[int]:
    """A build of the month, as its coordinator holds it: the month's lock and a building row."""
    async with pool.acquire() as conn:
        assert await locks.try_lock_month(conn, LAST)
        try:
            yield await archive_store.start_building(conn, str(LAST))
        finally:
            await locks.unlock_month(conn, LAST)


def _range_of(event: dict[str, object], archive_id: int) -> object:
    if event.get("event") != "export_range" or event.get("archive_id") != archive_id:
        return None
    return event.get("outcome")
