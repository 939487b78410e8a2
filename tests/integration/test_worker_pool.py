"""The worker pool hands ranges to free workers (issue 37), with real worker processes: a
worker kept busy inside a range (``tests.integration.range_hook``: its first range waits for a
file, its heartbeat beating) never holds another range, and every other range goes to the free
worker at once, whether it joins the pool after the plan or is woken by the plan's
notification; a worker SIGKILLed inside a range loses it to a free worker once its heartbeat
is ``STALE_SECONDS`` old. The bytes are those of the command's build throughout.

Counted, not timed tightly: which worker ran which range (``archive_ranges.worker``), and the
database's own instants with margins far above a claim's milliseconds (a slot that missed its
notification would wait ``range_slot.IDLE_SECONDS``; arq's hand-out left gaps of 0.5 to 1 s
per range)."""

from __future__ import annotations

import itertools
import signal
import socket
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from gomoku_archive.db.pool import Pool
from gomoku_archive.db.range_store import STALE_SECONDS
from gomoku_archive.export.range_run import HEARTBEAT_SECONDS
from gomoku_archive.export.range_slot import IDLE_SECONDS
from gomoku_archive.profile.months import Month
from gomoku_archive.queue.connection import QUEUE_NAME, queue_client
from tests.integration.test_worker_ranges import command_sha256, started
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
EARLIER = LAST.previous()
HOOK = "tests.integration.range_hook"
RANGES = 10
GAP_AT_MOST = timedelta(seconds=2)
"""Between two ranges of a free worker: its finish and its next claim, two statements."""
TAKEOVER_MARGIN = 10.0
"""Beyond the stale period: the idle slot's look (it wakes ``STALE_MARGIN_SECONDS`` after the
instant) and a loaded machine."""


def name(process: WorkerProcess) -> str:
    return f"{socket.gethostname()}:{process.process.pid}"


async def queue_rebuild(redis_url: str, month: Month, k: int, tag: str) -> str:
    job_id = f"test:{month}:{tag}"
    async with queue_client(redis_url) as client:
        job = await client.enqueue_job(
            "export_month",
            _job_id=job_id,
            _queue_name=QUEUE_NAME,
            month=str(month),
            force=True,
            range_candidates=k,
        )
    assert job is not None
    return job_id


async def ranges_of_build(dsn: str, month: Month) -> list[dict[str, Any]]:
    """The ranges of the month's build under way (none before it is planned)."""
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            "SELECT r.seq, r.state, r.worker, r.attempt, r.queued_at, r.started_at, "
            "r.finished_at, r.heartbeat_at FROM archive_ranges r JOIN archives a "
            "ON a.id = r.archive_id WHERE a.month = $1 AND a.state = 'building' ORDER BY r.seq",
            str(month),
        )
    finally:
        await conn.close()
    return [dict(r) for r in rows]


async def database_now(dsn: str) -> datetime:
    conn = await asyncpg.connect(dsn)
    try:
        now: datetime = await conn.fetchval("SELECT now()")
    finally:
        await conn.close()
    return now


def ended(processes: tuple[WorkerProcess, ...], job_id: str) -> list[dict[str, Any]]:
    return [
        e
        for p in processes
        for e in p.events("export_job")
        if e["job_id"] == job_id and e["outcome"] != "retry"
    ]


async def holding(dsn: str, month: Month, process: WorkerProcess) -> dict[str, Any] | None:
    """The range ``process`` holds in the month's build, once it does."""
    for r in await ranges_of_build(dsn, month):
        if r["state"] == "running" and r["worker"] == name(process):
            return r
    return None


def gaps(ranges: list[dict[str, Any]]) -> list[timedelta]:
    """Between each of one worker's ranges and its next (finish to claim)."""
    ordered = sorted(ranges, key=lambda r: r["started_at"])
    return [b["started_at"] - a["finished_at"] for a, b in itertools.pairwise(ordered)]


async def test_every_range_goes_to_the_free_worker_while_the_other_is_busy(
    pool: Pool, db_dsn: str, redis_url: str, tmp_path: Path
) -> None:
    last = await seed_month(db_dsn, LAST, 1000, copies=40)
    earlier = await seed_month(db_dsn, EARLIER, 1000, copies=20)
    k_last, k_earlier = last // RANGES, earlier // RANGES
    # Both months published by the command first: the workers' planner has nothing to do.
    expected_last = await command_sha256(pool, db_dsn, k_last)
    expected_earlier = await command_sha256(pool, db_dsn, k_earlier, month=EARLIER)
    env = cli_env(
        database_url=db_dsn, redis_url=redis_url, first_month=EARLIER, EXPORT_PROCESSES="1"
    )
    release = tmp_path / "release-a"
    # A process starts as it is made: the busy one alone first, so that it coordinates.
    busy = WorkerProcess(
        env | {"RANGE_HOOK_HOLD_FILE": str(release)}, tmp_path / "busy.log", module=HOOK
    )
    with workers(busy):

        async def busy_up() -> bool:
            return started((busy,))

        await wait_until(busy_up, seconds=90, what="the busy worker")
        last_job = await queue_rebuild(redis_url, LAST, k_last, "busy")
        held = await wait_until(
            lambda: holding(db_dsn, LAST, busy), seconds=90, what="the busy worker's range"
        )
        # A worker joins the pool after the plan: it takes every other range, at once.
        free = WorkerProcess(env, tmp_path / "free.log")
        with workers(free):

            async def all_but_the_held_one() -> list[dict[str, Any]]:
                ranges = await ranges_of_build(db_dsn, LAST)
                done = [r for r in ranges if r["state"] == "done"]
                return done if len(done) == len(ranges) - 1 else []

            done = await wait_until(
                all_but_the_held_one, seconds=180, what="every range but the held one"
            )
            assert {r["worker"] for r in done} == {name(free)}
            assert len(done) >= RANGES - 1
            between = gaps(done)
            print(f"the free worker's gaps between ranges: max {max(between)}")
            assert max(between) < GAP_AT_MOST, between
            # The busy worker held its one range all along, and took no other.
            assert (await holding(db_dsn, LAST, busy) or {}).get("seq") == held["seq"]

            # A month queued while the free worker idles: the plan's notification wakes it,
            # and the busy worker's free job slots (it may coordinate) take no range.
            earlier_job = await queue_rebuild(redis_url, EARLIER, k_earlier, "woken")
            (outcome,) = await wait_until(
                lambda: _ended(busy, free, earlier_job), seconds=180, what="the earlier month"
            )
            assert (outcome["outcome"], outcome["sha256"]) == ("unchanged", expected_earlier)
            # An unchanged build's row goes with its ranges: their log lines tell.
            woken = sorted(
                (
                    (e["timestamp"], p.log_path.name, e)
                    for p in (busy, free)
                    for e in p.events("export_range")
                    if e["month"] == str(EARLIER) and e["outcome"] == "done"
                ),
                key=lambda x: x[0],
            )
            assert {log for _, log, _ in woken} == {free.log_path.name}
            assert len(woken) >= RANGES
            first_wait = float(woken[0][2]["waited_s"])
            print(f"the plan's first range waited {first_wait:.3f} s for the idle worker")
            assert first_wait < IDLE_SECONDS / 3, "woken by the notification, not its own look"
            assert await holding(db_dsn, LAST, busy) is not None, "all that while it was busy"

            release.touch()
            (outcome,) = await wait_until(
                lambda: _ended(busy, free, last_job), seconds=180, what="the month"
            )
    assert (outcome["outcome"], outcome["sha256"]) == ("unchanged", expected_last)


async def _ended(busy: WorkerProcess, free: WorkerProcess, job_id: str) -> list[dict[str, Any]]:
    return ended((busy, free), job_id)


async def test_a_killed_worker_s_range_is_taken_over_within_the_stale_period(
    pool: Pool, db_dsn: str, redis_url: str, tmp_path: Path
) -> None:
    """Its coordinator's worker is busy in a range of its own, so only the third worker's
    slot, idle once the other ranges are done, can take the dead worker's range over."""
    candidates = await seed_month(db_dsn, LAST, 1000, copies=20)
    k = candidates // 6
    expected = await command_sha256(pool, db_dsn, k)
    env = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=LAST, EXPORT_PROCESSES="1")
    release = tmp_path / "release-busy"
    # Each process starts as it is made: the busy one alone first, so that it coordinates.
    busy = WorkerProcess(
        env | {"RANGE_HOOK_HOLD_FILE": str(release)}, tmp_path / "busy.log", module=HOOK
    )
    with workers(busy):

        async def busy_up() -> bool:
            return started((busy,))

        await wait_until(busy_up, seconds=90, what="the busy worker")
        job_id = await queue_rebuild(redis_url, LAST, k, "kill")
        await wait_until(lambda: holding(db_dsn, LAST, busy), seconds=90, what="its range")
        never = tmp_path / "never"
        victim = WorkerProcess(
            env | {"RANGE_HOOK_HOLD_FILE": str(never)}, tmp_path / "victim.log", module=HOOK
        )
        with workers(victim):
            lost = await wait_until(
                lambda: holding(db_dsn, LAST, victim), seconds=90, what="the victim's range"
            )
            free = WorkerProcess(env, tmp_path / "free.log")
            with workers(free):

                async def others_done() -> bool:
                    ranges = await ranges_of_build(db_dsn, LAST)
                    return sum(r["state"] == "done" for r in ranges) == len(ranges) - 2

                await wait_until(others_done, seconds=180, what="the free worker's ranges")
                killed_at = await database_now(db_dsn)
                victim.process.kill()
                assert victim.wait(10) == -signal.SIGKILL

                async def taken_over() -> dict[str, Any] | None:
                    ranges = await ranges_of_build(db_dsn, LAST)
                    (r,) = [r for r in ranges if r["seq"] == lost["seq"]]
                    return r if r["attempt"] == 2 and r["worker"] == name(free) else None

                took = await wait_until(
                    taken_over, seconds=STALE_SECONDS + 60, what="the takeover", every=0.05
                )
                release.touch()
                (outcome,) = await wait_until(
                    lambda: _ended(busy, free, job_id), seconds=180, what="the month"
                )
    after_kill = (took["started_at"] - killed_at).total_seconds()
    once_stale = (took["started_at"] - took["queued_at"]).total_seconds()
    print(
        f"taken over {after_kill:.2f} s after the kill (stale period {STALE_SECONDS:.0f} s; "
        f"claimed {once_stale:.2f} s after its heartbeat went stale)"
    )
    assert after_kill <= STALE_SECONDS + TAKEOVER_MARGIN
    # Not before: the victim's hold beat its heartbeat every HEARTBEAT_SECONDS until the kill.
    assert after_kill >= STALE_SECONDS - HEARTBEAT_SECONDS - 1.0
    assert (outcome["outcome"], outcome["sha256"]) == ("unchanged", expected)
