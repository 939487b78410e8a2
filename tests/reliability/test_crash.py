"""SIGKILL of the CLI export and of a worker at points spread over the whole run (issue 12's
crash suite), and the leftovers of a killed forced rebuild behind a published month (failure
2): nothing partial is ever visible, the result is byte-identical, and the next normal run
leaves no orphan chunk."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest
import redis

from gomoku_archive.db import archive_store
from gomoku_archive.db.pool import Pool
from gomoku_archive.export.month import export_month
from gomoku_archive.profile.months import Month
from gomoku_archive.settings import Settings
from gomoku_archive.worker.planner import plan_months
from tests.integration.api_support import publish_bytes, random_bytes
from tests.integration.worker_support import (
    WorkerProcess,
    cli_env,
    close_context,
    job_context,
    seed_month,
    wait_until,
    workers,
)
from tests.reliability.fault_support import leftovers

ROOT = Path(__file__).resolve().parents[2]
AUG = Month(2026, 8)


async def leave_a_killed_rebuild(pool: Pool, month: str) -> None:
    """What a forced rebuild SIGKILLed mid-way leaves: a building row with chunks."""
    async with pool.acquire() as conn:
        archive_id = await archive_store.start_building(conn, month)
        await archive_store.write_chunks(conn, archive_id, 0, [b"x" * 1000, b"y" * 10])


async def test_a_normal_export_removes_a_killed_rebuilds_leftovers(pool: Pool, db_dsn: str) -> None:
    await publish_bytes(pool, "2026-08", random_bytes(300_000, seed=1))
    await leave_a_killed_rebuild(pool, "2026-08")
    assert await leftovers(db_dsn) == {"building": 1, "orphan_chunks": 2}
    result = await export_month(pool, table="games", month=AUG)  # not forced
    assert result.outcome == "skipped"
    assert await leftovers(db_dsn) == {"building": 0, "orphan_chunks": 0}


async def test_the_planner_sweeps_leftovers_behind_published_months(
    settings: Settings, pool: Pool, db_dsn: str
) -> None:
    await publish_bytes(pool, "2026-08", random_bytes(300_000, seed=2))
    await leave_a_killed_rebuild(pool, "2026-08")
    ctx = await job_context(settings, pool, now=datetime(2026, 9, 2, 6, tzinfo=UTC))
    try:
        run = await plan_months(ctx)
    finally:
        await close_context(ctx)
    assert run["missing"] == []  # a published month is never planned ...
    assert run["leftoversRemoved"] == {"2026-08": 1}  # ... but its leftovers are swept
    assert await leftovers(db_dsn) == {"building": 0, "orphan_chunks": 0}


CLI = [sys.executable, "-m", "gomoku_archive.cli.main"]
SUMMARY: list[str] = []


async def served_state(dsn: str) -> tuple[list[str], bool]:
    """The sha256 of every row of the month a reader could be served (published, superseded),
    and whether each one's chunks hash to it: a partial archive would show here. (The worker
    also publishes the later closed months, with no games and no file.)"""
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            "SELECT id, sha256, bytes FROM archives WHERE state IN ('published', 'superseded') "
            "AND companion_of IS NULL AND month = $1 ORDER BY id",
            str(AUG),
        )
        whole = True
        for row in rows:
            chunks = await conn.fetch(
                "SELECT data FROM archive_chunks WHERE archive_id = $1 ORDER BY seq", row["id"]
            )
            data = b"".join(bytes(c["data"]) for c in chunks)
            whole &= len(data) == row["bytes"] and hashlib.sha256(data).hexdigest() == row["sha256"]
    finally:
        await conn.close()
    return [r["sha256"] for r in rows], whole


def run_export(env: dict[str, str], *args: str) -> dict[str, object]:
    done = subprocess.run(
        [*CLI, "export", "--month", str(AUG), *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    summary: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return summary


async def building_rows(dsn: str) -> bool:
    return (await leftovers(dsn))["building"] > 0


def spawn(env: dict[str, str], *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*CLI, *args], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def rebuild(env: dict[str, str]) -> None:
    done = subprocess.run(
        [*CLI, "rebuild", "--month", str(AUG)], env=env, capture_output=True, check=False
    )
    assert done.returncode == 0, done.stderr


def kill_after(proc: subprocess.Popen[bytes], seconds: float) -> bool:
    """SIGKILL ``proc`` after ``seconds``; False when it had finished by then."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        time.sleep(0.01)
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    return True


@pytest.mark.slow
async def test_sigkills_over_the_whole_run_never_show_a_partial_archive(
    db_dsn: str, redis_url: str, tmp_path: Path
) -> None:
    await seed_month(db_dsn, AUG, 1500, copies=2)
    env = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=AUG)
    started = time.monotonic()
    golden = run_export(env)
    cli_seconds = time.monotonic() - started
    assert golden["outcome"] == "published"
    rng = random.Random(int(os.environ.get("CRASH_SEED", "12")))
    kills = partial = finished = 0
    outcomes: list[str] = []

    # The command line: forced rebuilds killed at points spread over a whole run (start-up,
    # snapshot, chunk writes, read-back, publish), one per slice of the run's duration.
    cli_kills = 12
    for n in range(cli_kills):
        delay = cli_seconds * (n + rng.random()) / cli_kills
        proc = spawn(env, "export", "--month", str(AUG), "--force")
        if await asyncio.to_thread(kill_after, proc, delay):
            kills += 1
        else:
            finished += 1
        shas, whole = await served_state(db_dsn)
        partial += not whole or shas != [golden["sha256"]]

    # The worker: a forced rebuild job, the worker killed at points spread over its run.
    started = time.monotonic()
    worker = WorkerProcess(env, tmp_path / "probe.log", "--burst")
    with workers(worker):
        rebuild(env)
        await asyncio.to_thread(worker.wait, 300)
    worker_seconds = time.monotonic() - started
    worker_kills = 10
    for n in range(worker_kills):
        plain = redis.Redis.from_url(redis_url)
        plain.flushdb()  # the killed run's job would wait for the watchdog otherwise
        plain.close()
        rebuild(env)
        worker = WorkerProcess(env, tmp_path / f"worker{n}.log")
        delay = worker_seconds * (n + rng.random()) / worker_kills
        with workers(worker):
            if await asyncio.to_thread(kill_after, worker.process, delay):  # type: ignore[arg-type]
                kills += 1
            else:
                finished += 1
        outcomes += [str(e.get("outcome")) for e in worker.events("export_job")]
        shas, whole = await served_state(db_dsn)
        partial += not whole or shas != [golden["sha256"]]

    # Runs that finished before their kill point (a busy machine is uneven) are made up for
    # with kills early enough to land, so that at least 20 do.
    extra = 0
    while kills + 1 < 20 and extra < 10:
        extra += 1
        proc = spawn(env, "export", "--month", str(AUG), "--force")
        landed = await asyncio.to_thread(kill_after, proc, cli_seconds * 0.6 * rng.random())
        kills += landed
        finished += not landed
        shas, whole = await served_state(db_dsn)
        partial += not whole or shas != [golden["sha256"]]

    # One more forced rebuild killed while it builds, so that the next normal run has leftovers
    # to remove (a month this small writes its chunks only in its last milliseconds).
    proc = spawn(env, "export", "--month", str(AUG), "--force")
    try:
        await wait_until(lambda: building_rows(db_dsn), seconds=120, what="a building row")
    finally:
        proc.kill()
        await asyncio.to_thread(proc.wait, 10)
    kills += 1
    # The next normal run (not forced): the month is published, yet it removes every leftover.
    before = await leftovers(db_dsn)
    normal = run_export(env)
    after = await leftovers(db_dsn)
    rebuilt = run_export(env, "--force")
    shas, whole = await served_state(db_dsn)
    print(
        f"\ncrash: {kills} SIGKILLs landed ({cli_kills + extra + 1} CLI runs, {worker_kills} "
        "worker runs; "
        f"{finished} runs had finished first), {partial} partial archives visible; "
        f"leftovers before the next normal run {before}, after {after}; "
        f"rebuild {rebuilt['outcome']}, byte-identical: {rebuilt['sha256'] == golden['sha256']}"
    )
    assert kills >= 20, f"only {kills} kills landed: the runs finished too fast"
    assert partial == 0
    assert normal["outcome"] == "skipped"
    assert before["building"] == 1
    assert after == {"building": 0, "orphan_chunks": 0}
    assert rebuilt["outcome"] == "unchanged" and rebuilt["sha256"] == golden["sha256"]
    assert shas == [golden["sha256"]] and whole
