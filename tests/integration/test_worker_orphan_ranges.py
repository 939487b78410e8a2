"""A build that died with its worker pool: three real worker processes build a month of many
ranges (K lowered), and every one of them is SIGKILLed while ranges run, which stay ``running``
in ``archive_ranges`` under workers that are gone. Nothing of that build runs again: a fresh
worker's range slot claims none of its ranges (its coordinator no longer holds the month's
lock), neither ``gomoku-archive jobs`` nor ``/ops/api/status`` ever shows one of them running,
and the month's export, released by the fresh worker's watchdog after ``--stale-after``, builds
the month anew (removing the dead build) and publishes it."""

from __future__ import annotations

import asyncio
import json
import signal
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest

from gomoku_archive.jobs.ids import forced_export_job_id
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
"""The fresh worker's ``--stale-after``: when its watchdog releases the dead export job."""


async def ranges_by_build(dsn: str) -> dict[int, list[dict[str, Any]]]:
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            "SELECT r.archive_id, r.seq, r.state, r.worker, r.attempt FROM archive_ranges r "
            "JOIN archives a ON a.id = r.archive_id WHERE a.state = 'building' "
            "ORDER BY r.archive_id, r.seq"
        )
    finally:
        await conn.close()
    found: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        found.setdefault(row["archive_id"], []).append(dict(row))
    return found


def shown_running(document: dict[str, Any], dead: int) -> list[str]:
    """What the document shows running of the dead build."""
    shown = []
    for month in document["months"]:
        ranges = month["ranges"]
        if ranges and ranges["archiveId"] == dead:
            if ranges["running"]:
                shown.append(f"{ranges['running']} running")
            shown += [f"range {r['range']} on {r['worker']}" for r in ranges["runningRanges"]]
    return shown


async def test_a_crashed_pool_s_ranges_never_run_again_nor_show_as_running(
    db_dsn: str, redis_url: str, tmp_path: Path
) -> None:
    candidates = await seed_month(db_dsn, LAST, 1000, copies=100)
    env = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=LAST, EXPORT_PROCESSES="1")
    pool = tuple(WorkerProcess(env, tmp_path / f"pool-{n}.log") for n in range(3))
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

        async def ranges_running() -> int | None:
            for archive_id, ranges in (await ranges_by_build(db_dsn)).items():
                if sum(r["state"] == "running" for r in ranges) >= 2:
                    return archive_id
            return None

        dead = await wait_until(ranges_running, seconds=120, what="ranges running", every=0.02)
        for process in pool:
            process.signal(signal.SIGKILL)
        for process in pool:
            process.wait(10)
    left = (await ranges_by_build(db_dsn))[dead]
    held = [r for r in left if r["state"] == "running"]
    print(f"build {dead}: {len(held)} of {len(left)} ranges left running by killed workers")
    assert len(held) >= 2

    server = ServerProcess(
        db_dsn,
        extra_env={"OPS_TOKEN": TOKEN, "REDIS_URL": redis_url, "EXPORT_FIRST_MONTH": str(LAST)},
    )
    await asyncio.to_thread(server.start)
    fresh = WorkerProcess(env, tmp_path / "fresh.log", "--stale-after", str(STALE_AFTER))
    polls = 0
    try:
        with workers(fresh):
            async with aiohttp.ClientSession() as session:

                async def rebuilt() -> list[dict[str, Any]]:
                    nonlocal polls
                    polls += 1
                    for where, document in (
                        ("jobs --json", await _jobs_document(env)),
                        ("/ops/api/status", await _ops_document(session, server.base)),
                    ):
                        assert not shown_running(document, dead), (where, document["months"])
                    return [
                        e
                        for e in fresh.events("export_job")
                        if e["job_id"] == job_id and e["outcome"] != "retry"
                    ]

                (outcome,) = await wait_until(rebuilt, seconds=240, what="the month, rebuilt")
    finally:
        await asyncio.to_thread(server.stop)
    print(f"the month rebuilt by the fresh worker after {polls} polls of jobs and /ops/")
    assert outcome["outcome"] in ("published", "unchanged"), fresh.output()[-3000:]
    exported = {e["archive_id"] for e in fresh.events("export_range")}
    assert dead not in exported, "a dead build's range ran again"
    assert exported, "the new build's ranges ran in the fresh worker's slot"
    assert dead not in await ranges_by_build(db_dsn), "the dead build was removed"
    released = [e for e in fresh.events("stale_job_released") if e["job_id"] == job_id]
    assert released, fresh.output()[-3000:]


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
