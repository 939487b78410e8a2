import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from arq import func
from arq.connections import ArqRedis

from gomoku_archive.worker.job_loop import ArchiveWorker, JobTasks, LoopHeartbeat


async def test_two_runs_of_one_job_each_remove_their_entry_without_a_key_error() -> None:
    """arq keys its running tasks by job id and deletes the entry as a run ends; a released run
    that still ran beside the job's next run in one process made the second delete raise
    KeyError, and arq recorded the successful run as failed."""
    tasks = JobTasks()
    first = asyncio.ensure_future(asyncio.sleep(0))
    second = asyncio.ensure_future(asyncio.sleep(0))
    tasks["export:2026-08:force:x"] = first
    tasks["export:2026-08:force:x"] = second
    del tasks["export:2026-08:force:x"]
    del tasks["export:2026-08:force:x"]
    assert tasks == {}
    await asyncio.gather(first, second)


async def test_the_worker_keeps_its_tasks_in_that_table(tmp_path: Path) -> None:
    async def job(ctx: dict[str, Any]) -> None:
        return None

    heartbeat = LoopHeartbeat("test-host:1", clock=lambda: datetime.now(UTC), directory=tmp_path)
    worker = ArchiveWorker(
        heartbeat=heartbeat, functions=[func(job, name="job")], redis_pool=ArqRedis()
    )
    assert isinstance(worker.job_tasks, JobTasks)
