"""Range jobs of a build that died with its worker pool: three real worker processes build a
month of many ranges (K lowered), and every one of them is SIGKILLed while range jobs run. arq
keeps their in-progress keys for hours (its timeout for any job is the export's); a fresh
worker's watchdog releases them within its stale period, they end as ``skipped``, and neither
``gomoku-archive jobs`` nor ``/ops/api/status`` ever shows a range job as running unless its
build is under way (its row ``building`` and its month's lock held) in the same document."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest
import redis.asyncio
from arq.constants import in_progress_key_prefix, result_key_prefix

from gomoku_archive.jobs.ids import forced_export_job_id, parse_job_id
from gomoku_archive.queue.connection import QUEUE_NAME, queue_client
from tests.integration.api_support import ServerProcess
from tests.integration.worker_support import (
    WorkerProcess,
    cli_env,
    last_closed_month,
    run_cli,
    seed_month,
    wait_until,
    workers,
)

pytestmark = pytest.mark.slow

LAST = last_closed_month()
TOKEN = "test-ops-token-of-at-least-32-characters"
STALE_AFTER = 5.0
"""The fresh worker's ``--stale-after``; its watchdog beats every third of it."""
MARGIN = 45.0
"""What a loaded 2-core machine may add: the fresh worker's start, a beat, a poll's commands."""
RANGE_KEYS = f"{in_progress_key_prefix}export:{LAST}:build:*:range:*"


async def running_range_jobs(client: redis.asyncio.Redis) -> set[str]:
    keys = [key async for key in client.scan_iter(match=RANGE_KEYS)]
    return {key.decode()[len(in_progress_key_prefix) :] for key in keys}


def live_builds(document: dict[str, Any]) -> set[int]:
    """The builds under way as the document itself says: a building month's ranges, its lock
    held."""
    return {m["ranges"]["archiveId"] for m in document["months"] if m["ranges"] and m["lockHeld"]}


def listed(document: dict[str, Any]) -> tuple[set[str], set[str]]:
    """The ids the document shows in progress, and those it shows queued."""
    jobs = document["jobs"]
    return {j["id"] for j in jobs["inProgress"]}, {j["id"] for j in jobs["queued"]}


def never_running_without_their_build(document: dict[str, Any], where: str) -> None:
    running, _ = listed(document)
    builds = live_builds(document)
    for job_id in running:
        ref = parse_job_id(job_id)
        if ref.kind == "range":
            assert ref.archive_id in builds, f"{where} shows {job_id} running; under way: {builds}"


async def test_a_crashed_pool_s_range_jobs_leave_within_the_stale_period(
    db_dsn: str, redis_url: str, tmp_path: Path
) -> None:
    candidates = await seed_month(db_dsn, LAST, 1000, copies=100)
    env = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=LAST, EXPORT_PROCESSES="1")
    pool = tuple(WorkerProcess(env, tmp_path / f"pool-{n}.log") for n in range(3))
    client = redis.asyncio.Redis.from_url(redis_url)
    try:
        with workers(*pool):

            async def first_build() -> bool:
                events = [e for p in pool for e in p.events("export_job")]
                return any(e.get("outcome") == "published" for e in events) and all(
                    p.events("worker_started") for p in pool
                )

            await wait_until(first_build, seconds=180, what="the planner's build of the month")
            job_id = forced_export_job_id(LAST, datetime.now(UTC))
            async with queue_client(redis_url) as queue:
                await queue.enqueue_job(
                    "export_month",
                    _job_id=job_id,
                    _queue_name=QUEUE_NAME,
                    month=str(LAST),
                    force=True,
                    range_candidates=candidates // 12,
                )

            async def ranges_running() -> bool:
                return len(await running_range_jobs(client)) >= 2

            await wait_until(ranges_running, seconds=120, what="range jobs running", every=0.02)
            for process in pool:
                process.signal(signal.SIGKILL)
            for process in pool:
                process.wait(10)
        orphans = await running_range_jobs(client)
        (build,) = {parse_job_id(o).archive_id for o in orphans}
        conn = await asyncpg.connect(db_dsn)
        try:
            state = await conn.fetchval("SELECT state FROM archives WHERE id = $1", build)
        finally:
            await conn.close()
        assert state == "building"
        ttl = min([await client.pttl(in_progress_key_prefix + o) for o in orphans]) / 1000
        print(f"{len(orphans)} range jobs of build {build} in progress at the kill; arq keeps "
              f"them {ttl / 3600:.1f} h")  # fmt: skip
        assert ttl > 3600

        server = ServerProcess(
            db_dsn,
            extra_env={"OPS_TOKEN": TOKEN, "REDIS_URL": redis_url, "EXPORT_FIRST_MONTH": str(LAST)},
        )
        await asyncio.to_thread(server.start)
        fresh = WorkerProcess(env, tmp_path / "fresh.log", "--stale-after", str(STALE_AFTER))
        began = time.monotonic()
        polls = 0
        try:
            with workers(fresh):
                async with aiohttp.ClientSession() as session:
                    while True:
                        assert time.monotonic() - began < STALE_AFTER + MARGIN, (
                            f"still there: {orphans & await running_range_jobs(client)}"
                        )
                        polls += 1
                        documents = [
                            ("jobs --json", await _jobs_document(env)),
                            ("/ops/api/status", await _ops_document(session, server.base)),
                        ]
                        shown = set()
                        for where, document in documents:
                            never_running_without_their_build(document, where)
                            shown |= set().union(*listed(document))
                        left_redis = orphans & (
                            await running_range_jobs(client)
                            | {j.decode() for j in await client.zrange(QUEUE_NAME, 0, -1)}
                        )
                        if not (orphans & shown) and not left_redis:
                            break
                        await asyncio.sleep(0.5)
                gone_after = time.monotonic() - began
                results = [await client.get(result_key_prefix + o) for o in orphans]
        finally:
            await asyncio.to_thread(server.stop)
    finally:
        await client.aclose()
    released = [e for e in fresh.events("stale_job_released") if e["job_id"] in orphans]
    print(
        f"fresh worker (--stale-after {STALE_AFTER:.0f}): the orphans left jobs, /ops/ and the "
        f"queue {gone_after:.1f} s after its start ({polls} polls); released: {len(released)}"
    )
    assert {e["job_id"] for e in released} == orphans
    assert all(result is not None for result in results), "each ended with a result"
    skipped = {e["job_id"] for e in fresh.events("export_range") if e["outcome"] == "skipped"}
    assert orphans <= skipped, fresh.output()[-3000:]


async def _jobs_document(env: dict[str, str]) -> dict[str, Any]:
    done = await asyncio.to_thread(run_cli, "jobs", "--json", env=env)
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


async def _ops_document(session: aiohttp.ClientSession, base: str) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with session.get(f"{base}/ops/api/status", headers=headers) as response:
        assert response.status == 200
        document: dict[str, Any] = await response.json()
        return document
