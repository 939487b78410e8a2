"""Range jobs that bounce between busy workers say once what they wait for: two real worker
processes build a month of many ranges while the game server's table is locked (``LOCK TABLE
games``, as a migration would), so both workers' range gates stay held and the other range jobs
go back to the queue once a second. Each range job logs ``export_range_requeued`` at info once,
its later requeues at debug, and arq's own start and retry lines of those repeats are debug
too; the workers log at debug here, so the repeats are seen to happen."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from gomoku_archive.jobs.ids import RANGE_FUNCTION
from gomoku_archive.queue.connection import QUEUE_NAME, queue_client
from tests.integration.worker_support import (
    WorkerProcess,
    cli_env,
    last_closed_month,
    seed_month,
    wait_until,
    workers,
)

pytestmark = pytest.mark.slow

LAST = last_closed_month()
LOCK_SECONDS = 12.0
RANGES = 16


def events(processes: tuple[WorkerProcess, ...], name: str | None = None) -> list[dict[str, Any]]:
    return [e for p in processes for e in p.events(name)]


def arq_repeat_lines(processes: tuple[WorkerProcess, ...]) -> list[dict[str, Any]]:
    """arq's lines of range jobs' retries (``↻``) and of their later tries' starts."""
    return [
        e
        for e in events(processes)
        if e.get("logger") == "arq.worker"
        and f":{RANGE_FUNCTION}" in str(e.get("event"))
        and ("↻" in str(e["event"]) or ("→" in str(e["event"]) and " try=" in str(e["event"])))
    ]


async def test_a_range_waiting_behind_a_locked_table_says_so_once(
    db_dsn: str, redis_url: str, tmp_path: Path
) -> None:
    candidates = await seed_month(db_dsn, LAST, 1000, copies=30)
    env = cli_env(
        database_url=db_dsn,
        redis_url=redis_url,
        first_month=LAST,
        EXPORT_PROCESSES="1",
        LOG_LEVEL="DEBUG",
    )
    processes = (WorkerProcess(env, tmp_path / "a.log"), WorkerProcess(env, tmp_path / "b.log"))
    with workers(*processes):

        async def published() -> bool:
            return any(e.get("outcome") == "published" for e in events(processes, "export_job"))

        await wait_until(published, seconds=120, what="the month's first build")
        job_id = f"test:{LAST}:requeues"
        async with queue_client(redis_url) as client:
            await client.enqueue_job(
                "export_month",
                _job_id=job_id,
                _queue_name=QUEUE_NAME,
                month=str(LAST),
                force=True,
                range_candidates=candidates // RANGES,
            )

        async def planned() -> bool:
            return any(e["job_id"] == job_id for e in events(processes, "export_planned"))

        await wait_until(planned, seconds=60, what="the rebuild's plan", every=0.05)
        migration = await asyncpg.connect(db_dsn)  # the game server's migration
        transaction = migration.transaction()
        await transaction.start()
        try:
            await migration.execute("LOCK TABLE games IN ACCESS EXCLUSIVE MODE")
            await asyncio.sleep(LOCK_SECONDS)
        finally:
            await transaction.rollback()
            await migration.close()

        async def ended() -> list[dict[str, Any]]:
            return [
                e
                for e in events(processes, "export_job")
                if e["job_id"] == job_id and e["outcome"] != "retry"
            ]

        (outcome,) = await wait_until(ended, seconds=120, what="the rebuild to end")
        assert outcome["outcome"] == "published", outcome  # other ranges: other bytes

    requeues = events(processes, "export_range_requeued")
    jobs = {e["job_id"] for e in requeues}
    info = Counter(e["job_id"] for e in requeues if e["level"] == "info")
    debug = [e for e in requeues if e["level"] == "debug"]
    arq_lines = Counter(e["level"] for e in arq_repeat_lines(processes))
    print(
        f"{len(requeues)} requeues of {len(jobs)} range jobs in a {LOCK_SECONDS:.0f} s lock: "
        f"{sum(info.values())} at info, {len(debug)} at debug; arq's repeat lines {dict(arq_lines)}"
    )
    assert len(requeues) > 2 * len(jobs), "range jobs went back to the queue again and again"
    assert set(info) == jobs, "each range job's first requeue is at info"
    assert max(info.values()) == 1, f"one info line per range job: {info}"
    assert all(e["reason"] and e["archive_id"] and "range" in e for e in requeues)
    assert arq_lines["info"] == 0, "arq's start and retry lines of the repeats are debug"
    assert arq_lines["debug"] >= len(debug)
