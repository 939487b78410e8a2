"""The worker's jobs called in-process against the real Redis and PostgreSQL, with an injected
clock: the planner's choice of months, idempotent enqueueing, export outcomes and failures."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest
import structlog
from arq import Retry
from arq.constants import result_key_prefix

from gomoku_archive.db import archive_store
from gomoku_archive.db.pool import Pool, create_pool
from gomoku_archive.errors import ExportFailed, InvalidMonth
from gomoku_archive.profile.months import Month
from gomoku_archive.queue.enqueue import enqueue_export, enqueue_forced_export
from gomoku_archive.queue.snapshot import read_snapshot
from gomoku_archive.settings import Settings
from gomoku_archive.worker.export_jobs import export_month
from gomoku_archive.worker.planner import plan_months
from gomoku_archive.worker.timeouts import export_timeout
from tests.integration.worker_support import close_context, job_context, seed_month

AUG, SEP, OCT = Month(2026, 8), Month(2026, 9), Month(2026, 10)


def at(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


async def planned(settings: Settings, pool: Pool, now: datetime) -> dict[str, Any]:
    ctx = await job_context(settings, pool, now=now, job_id="cron:plan_months:1")
    try:
        return await plan_months(ctx)
    finally:
        await close_context(ctx)


async def queued_ids(settings: Settings, pool: Pool) -> list[str]:
    ctx = await job_context(settings, pool, now=at(2026, 11, 1))
    try:
        snapshot = await read_snapshot(ctx["redis"])
    finally:
        await close_context(ctx)
    return [j.job_id for j in snapshot.queued]


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        (at(2026, 8, 31, 23, 59, 59), []),  # the first month is not closed yet
        (at(2026, 9, 1, 0, 0, 0), ["2026-08"]),  # ... and closes at midnight UTC on the 1st
        (at(2026, 9, 30, 23, 59, 59), ["2026-08"]),
        (at(2026, 10, 1, 0, 0, 1), ["2026-08", "2026-09"]),  # first day: September just closed
        (at(2026, 10, 2, 6, 0), ["2026-08", "2026-09"]),
        (at(2026, 11, 1, 0, 0), ["2026-08", "2026-09", "2026-10"]),
    ],
)
async def test_planner_queues_exactly_the_missing_closed_months(
    settings: Settings, pool: Pool, now: datetime, expected: list[str]
) -> None:
    run = await planned(settings, pool, now)
    assert run["missing"] == expected
    assert run["enqueued"] == expected
    assert run["error"] is None
    assert sorted(await queued_ids(settings, pool)) == [f"export:{m}" for m in expected]


async def test_planner_skips_published_months_and_records_its_run(
    settings: Settings, pool: Pool
) -> None:
    await seed_month(settings.database_url, SEP, 20)
    ctx = await job_context(settings, pool, now=at(2026, 11, 3), job_id="export:2026-09")
    try:
        assert (await export_month(ctx, "2026-09"))["outcome"] == "published"
        run = await plan_months(ctx)
        snapshot = await read_snapshot(ctx["redis"])
    finally:
        await close_context(ctx)
    assert run["missing"] == ["2026-08", "2026-10"]
    assert sorted(j.job_id for j in snapshot.queued) == ["export:2026-08", "export:2026-10"]
    job = next(j for j in snapshot.queued if j.job_id == "export:2026-08")
    assert job.function == "export_month"
    assert job.kwargs == {"month": "2026-08", "force": False}
    assert snapshot.planner_last_run is not None
    assert snapshot.planner_last_run["at"] == "2026-11-03T00:00:00+00:00"
    assert snapshot.planner_last_run["enqueued"] == ["2026-08", "2026-10"]


async def test_duplicate_enqueues_are_no_ops(settings: Settings, pool: Pool) -> None:
    first = await planned(settings, pool, at(2026, 10, 5))
    second = await planned(settings, pool, at(2026, 10, 5, 6))
    assert first["enqueued"] == ["2026-08", "2026-09"]
    assert second["enqueued"] == []
    assert second["alreadyQueued"] == ["2026-08", "2026-09"]
    ctx = await job_context(settings, pool, now=at(2026, 10, 5))
    try:
        assert await enqueue_export(ctx["redis"], AUG) is False
    finally:
        await close_context(ctx)
    assert sorted(await queued_ids(settings, pool)) == ["export:2026-08", "export:2026-09"]


async def test_planner_replans_a_month_whose_job_ended_unpublished(
    settings: Settings, pool: Pool
) -> None:
    ctx = await job_context(settings, pool, now=at(2026, 9, 2))
    try:
        # A finished run whose result arq still keeps (say it failed an hour ago).
        await ctx["redis"].set(result_key_prefix + "export:2026-08", b"{}")
        run = await plan_months(ctx)
        assert run["requeued"] == ["2026-08"]
        assert await ctx["redis"].exists(result_key_prefix + "export:2026-08") == 0
    finally:
        await close_context(ctx)
    assert await queued_ids(settings, pool) == ["export:2026-08"]


async def test_planner_leaves_a_month_another_process_is_building(
    settings: Settings, pool: Pool
) -> None:
    holder = await asyncpg.connect(settings.database_url)
    try:
        assert await holder.fetchval("SELECT pg_try_advisory_lock($1, $2)", 0x4750, 202608)
        run = await planned(settings, pool, at(2026, 10, 1, 6))
    finally:
        await holder.close()
    assert run["building"] == ["2026-08"]
    assert run["enqueued"] == ["2026-09"]


async def test_export_job_publishes_then_skips(settings: Settings, pool: Pool) -> None:
    await seed_month(settings.database_url, AUG, 30)
    ctx = await job_context(settings, pool, now=at(2026, 9, 1, 6), job_id="export:2026-08")
    try:
        with structlog.testing.capture_logs() as logs:
            first = await export_month(ctx, "2026-08")
            again = await export_month(ctx, "2026-08")
        ctx["job_id"] = "export:2026-08:force:20260901T060000.000Z"
        forced = await export_month(ctx, "2026-08", force=True)
    finally:
        await close_context(ctx)
    assert first["outcome"] == "published"
    assert first["games"] == 30
    assert first["excluded"] > 0
    assert first["bytes"] > 0
    assert first["candidates"] == first["games"] + first["excluded"]
    assert first["timeout_s"] == export_timeout(first["candidates"])
    assert again["outcome"] == "skipped"
    assert forced["outcome"] == "unchanged"  # same rows, same bytes: nothing visible changes
    lines = [e for e in logs if e["event"] == "export_job"]
    assert [e["outcome"] for e in lines] == ["published", "skipped"]
    for key in ("job_id", "month", "games", "excluded", "bytes", "duration_s", "outcome"):
        assert key in lines[0]


async def test_export_job_while_another_process_holds_the_month(
    settings: Settings, pool: Pool
) -> None:
    holder = await asyncpg.connect(settings.database_url)
    ctx = await job_context(settings, pool, now=at(2026, 9, 2), job_id="export:2026-08")
    try:
        await holder.fetchval("SELECT pg_advisory_lock($1, $2)", 0x4750, 202608)
        normal = await export_month(ctx, "2026-08")
        # A forced rebuild is never dropped: it waits for the lock with the usual backoff.
        with pytest.raises(Retry) as retry:
            await export_month(ctx, "2026-08", force=True)
    finally:
        await close_context(ctx)
        await holder.close()
    assert normal["outcome"] == "skipped"
    assert retry.value.defer_score == 15_000


@pytest.mark.parametrize("month", ["2026-11", "2026-07", "2026-8", "August"])
async def test_export_job_refuses_months_it_must_not_build(
    settings: Settings, pool: Pool, month: str
) -> None:
    ctx = await job_context(settings, pool, now=at(2026, 11, 15))
    try:
        with pytest.raises(InvalidMonth):
            await export_month(ctx, month)
    finally:
        await close_context(ctx)
    assert await archive_states(settings) == []


async def archive_states(settings: Settings) -> list[tuple[str, str, str | None]]:
    conn = await asyncpg.connect(settings.database_url)
    try:
        rows = await conn.fetch(
            "SELECT month, state, error FROM archives WHERE companion_of IS NULL ORDER BY id"
        )
    finally:
        await conn.close()
    return [(r["month"], r["state"], r["error"]) for r in rows]


async def test_a_permanent_failure_is_recorded_and_raised(settings: Settings, pool: Pool) -> None:
    broken = Settings(
        database_url=settings.database_url,
        redis_url=settings.redis_url,
        games_table="no_such_games",
        export_first_month=AUG,
    )
    ctx = await job_context(broken, pool, now=at(2026, 9, 2), job_id="export:2026-08", job_try=1)
    try:
        with structlog.testing.capture_logs() as logs, pytest.raises(asyncpg.UndefinedTableError):
            await export_month(ctx, "2026-08")
    finally:
        await close_context(ctx)
    [(month, state, error)] = await archive_states(settings)
    assert (month, state) == ("2026-08", "failed")
    assert error is not None
    assert error.startswith("UndefinedTableError:")
    [line] = [e for e in logs if e["event"] == "export_job"]
    assert line["outcome"] == "failed"
    assert line["failure"] == "permanent"


async def test_a_transient_failure_is_retried_with_backoff_then_recorded(
    settings: Settings, pool: Pool
) -> None:
    # Nothing listens on port 1: every connection attempt is refused, as when PostgreSQL is down.
    down = await create_pool("postgresql://postgres@127.0.0.1:1/nowhere", min_size=0)
    try:
        delays = []
        for job_try in (1, 2, 3):
            ctx = await job_context(settings, down, now=at(2026, 9, 2), job_try=job_try)
            try:
                with pytest.raises(Retry) as retry:
                    await export_month(ctx, "2026-08")
            finally:
                await close_context(ctx)
            delays.append(retry.value.defer_score)
        assert delays == [15_000, 30_000, 60_000]
        ctx = await job_context(settings, down, now=at(2026, 9, 2), job_try=8)
        try:
            with pytest.raises(ConnectionRefusedError):  # the last try fails for good
                await export_month(ctx, "2026-08")
        finally:
            await close_context(ctx)
    finally:
        await down.close()


async def test_a_timed_out_export_is_recorded_as_such(
    settings: Settings, pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seed_month(settings.database_url, AUG, 20, copies=20)
    # The month's limit, shrunk so that the export cannot make it.
    monkeypatch.setattr("gomoku_archive.worker.export_jobs.export_timeout", lambda candidates: 0.05)
    ctx = await job_context(settings, pool, now=at(2026, 9, 2), job_id="export:2026-08")
    try:
        with pytest.raises(ExportFailed, match="longer than its 0 s limit"):
            await export_month(ctx, "2026-08")
    finally:
        await close_context(ctx)
    states = await archive_states(settings)
    assert [(m, s) for m, s, _ in states] == [("2026-08", "failed")]
    assert states[0][2] is not None
    assert states[0][2].startswith("ExportTimeout:")
    async with pool.acquire() as conn:
        assert await archive_store.published_months(conn) == set()


async def test_forced_rebuilds_are_not_queued_twice_while_waiting(
    settings: Settings, pool: Pool
) -> None:
    ctx = await job_context(settings, pool, now=at(2026, 9, 2))
    try:
        first = await enqueue_forced_export(ctx["redis"], AUG, now=at(2026, 9, 2, 1))
        second = await enqueue_forced_export(ctx["redis"], AUG, now=at(2026, 9, 2, 2))
        other = await enqueue_forced_export(ctx["redis"], SEP, now=at(2026, 10, 2, 2))
        snapshot = await read_snapshot(ctx["redis"])
    finally:
        await close_context(ctx)
    assert first.job_id == "export:2026-08:force:20260902T010000.000Z"
    assert not first.already_queued
    assert second == type(second)(first.job_id, already_queued=True)
    assert not other.already_queued
    [job] = [j for j in snapshot.queued if j.job_id == first.job_id]
    assert job.kwargs == {"month": "2026-08", "force": True}
