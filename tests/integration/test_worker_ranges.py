"""A month across real worker processes (``gomoku-archive worker``): the same SHA-256 from 1, 2
and 3 workers as from the command's local processes, range jobs taken by more than one worker,
and a worker SIGKILLed in the middle of a range whose range is taken over elsewhere."""

from __future__ import annotations

import signal
import socket
from pathlib import Path

import asyncpg
import pytest

from gomoku_archive.db.pool import Pool
from gomoku_archive.export.coordinator import RangeOptions
from gomoku_archive.export.local_ranges import LocalProcesses
from gomoku_archive.export.month import export_month
from gomoku_archive.profile.months import Month
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
DEMO_GAMES = 1000


async def command_sha256(pool: Pool, dsn: str, k: int, *, month: Month = LAST) -> str:
    """The month as ``gomoku-archive export`` builds it with two local processes."""
    local = LocalProcesses(dsn=dsn, source_dsn=dsn, table="games", processes=2)
    result = await export_month(
        pool,
        table="games",
        month=month,
        force=True,
        ranges=RangeOptions(spreads=(local,), range_candidates=k),
    )
    assert result.archive is not None and result.archive.sha256 is not None
    return result.archive.sha256


async def rebuild(redis_url: str, k: int, tag: str) -> str:
    """Queue a forced rebuild of the month with ranges of ``k``, as an operator's would be."""
    job_id = f"test:{LAST}:{tag}"
    async with queue_client(redis_url) as client:
        job = await client.enqueue_job(
            "export_month",
            _job_id=job_id,
            _queue_name=QUEUE_NAME,
            month=str(LAST),
            force=True,
            range_candidates=k,
        )
    assert job is not None
    return job_id


def started(processes: tuple[WorkerProcess, ...]) -> bool:
    return all(p.events("worker_started") for p in processes) and any(
        p.events("plan_months_finished") for p in processes
    )


async def test_one_two_and_three_workers_give_the_command_s_bytes(
    pool: Pool, db_dsn: str, redis_url: str, tmp_path: Path
) -> None:
    # Ranges of 20,000 games last longer than the workers' 0.5 s poll, so that the other
    # workers find ranges still to claim (ranges of 3,000 were done before they looked).
    await seed_month(db_dsn, LAST, DEMO_GAMES, copies=100)
    k = 20_000
    expected = await command_sha256(pool, db_dsn, k)
    env = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=LAST, EXPORT_PROCESSES="1")
    for count in (1, 2, 3):
        processes = tuple(WorkerProcess(env, tmp_path / f"{count}-{n}.log") for n in range(count))
        with workers(*processes):

            async def up(processes: tuple[WorkerProcess, ...] = processes) -> bool:
                return started(processes)

            await wait_until(up, seconds=60, what="the workers")
            job_id = await rebuild(redis_url, k, f"{count}-workers")

            async def done(
                processes: tuple[WorkerProcess, ...] = processes, job_id: str = job_id
            ) -> list[dict[str, object]]:
                return [
                    e for p in processes for e in p.events("export_job") if e["job_id"] == job_id
                ]

            (outcome,) = await wait_until(done, seconds=180, what=f"the build by {count}")
            assert outcome["sha256"] == expected, f"{count} worker(s)"
            assert outcome["outcome"] == "unchanged"
            exporters = [
                p
                for p in processes
                if any(e["outcome"] == "done" for e in p.events("export_range"))
            ]
            if count == 3:  # the coordinator's range jobs went to the pool
                assert len(exporters) >= 2, [p.output()[-2000:] for p in processes]


async def test_a_worker_killed_in_the_middle_of_a_range_loses_it_to_another(
    pool: Pool, db_dsn: str, redis_url: str, tmp_path: Path
) -> None:
    """The month's coordinator lives; the other worker is SIGKILLed inside a range job. Its
    heartbeat stops, the coordinator takes the range over once it is stale, and the file is the
    command's."""
    candidates = await seed_month(db_dsn, LAST, DEMO_GAMES, copies=200)
    k = candidates // 4  # ranges of 50,000: seconds each, so that the kill lands inside one
    expected = await command_sha256(pool, db_dsn, k)
    env = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=LAST, EXPORT_PROCESSES="1")
    a = WorkerProcess(env, tmp_path / "a.log")
    b = WorkerProcess(env, tmp_path / "b.log")
    with workers(a, b):

        async def up() -> bool:
            return started((a, b))

        await wait_until(up, seconds=60, what="the workers")
        job_id = await rebuild(redis_url, k, "kill")

        async def coordinator() -> WorkerProcess | None:
            return next((p for p in (a, b) if p.events("export_planned")), None)

        boss = await wait_until(coordinator, seconds=60, what="the build to be planned")
        victim = b if boss is a else a
        name = f"{socket.gethostname()}:{victim.process.pid}"

        async def victim_in_a_range() -> int | None:
            conn = await asyncpg.connect(db_dsn)
            try:
                seq: int | None = await conn.fetchval(
                    "SELECT seq FROM archive_ranges WHERE state = 'running' AND worker = $1 "
                    "AND started_at < now() - interval '0.2 seconds'",
                    name,
                )
            finally:
                await conn.close()
            return seq

        seq = await wait_until(
            victim_in_a_range, seconds=120, what="the other worker in a range", every=0.02
        )
        victim.process.kill()
        assert victim.wait(10) == -signal.SIGKILL

        async def done() -> list[dict[str, object]]:
            return [e for e in boss.events("export_job") if e["job_id"] == job_id]

        (outcome,) = await wait_until(done, seconds=240, what="the build after the kill")
    assert outcome["sha256"] == expected
    assert outcome["outcome"] == "unchanged"
    killed = [e for e in victim.events("export_range") if e["range"] == seq]
    assert killed == []  # it never finished that range
    takeovers = [
        e
        for e in boss.events("export_range")
        if e["range"] == seq and e["outcome"] == "done" and e["attempt"] == 2
    ]
    assert len(takeovers) == 1, boss.output()[-3000:]
