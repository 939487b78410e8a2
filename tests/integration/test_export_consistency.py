"""A ranged month is one state of the games table: a game that moves between ranges, a row
deleted and a row inserted while a range is being read each give a file that ``verify`` passes,
with no game twice and the counts of the table's final state (issue 26). The change commits
after the range's snapshot was taken (``tests.integration.read_hook``)."""

from __future__ import annotations

import asyncio
import gzip
import uuid
from datetime import datetime
from typing import Any

import pytest

from gomoku_archive.db import companion_store, range_store, source
from gomoku_archive.db.pool import Pool, connect, create_pool
from gomoku_archive.errors import SourceKeptChanging
from gomoku_archive.export import month_reads
from gomoku_archive.export.companion import build as companion_build
from gomoku_archive.export.coordinator import RangeOptions
from gomoku_archive.export.local_ranges import LocalProcesses
from gomoku_archive.export.month import TimeLimit, export_month
from gomoku_archive.profile.months import Month
from gomoku_archive.verify.archive import ArchiveVerifier
from gomoku_archive.verify.report import VerifyReport
from gomoku_archive.worker.retry_policy import classify_failure
from tests.benchmarks.data import seed_month as seed_bulk_month
from tests.integration import read_hook
from tests.integration.rows import game_row, utc
from tests.integration.test_export import archive_bytes, insert
from tests.integration.test_export_ranges import Recorder

OCT = Month(2026, 10)
EARLY = [uuid.UUID(int=100 + i) for i in range(20)]
LATE = [uuid.UUID(int=200 + i) for i in range(20)]
K = 20
"""Two ranges: the 20 games of 2 October, the 20 of 20 October."""


async def seed(pool: Pool) -> None:
    rows = [game_row(id=i, finished_at=utc(2026, 10, 2, 8, n)) for n, i in enumerate(EARLY)]
    rows += [game_row(id=i, finished_at=utc(2026, 10, 20, 8, n)) for n, i in enumerate(LATE)]
    await insert(pool, rows)


def verify(data: bytes) -> VerifyReport:
    verifier = ArchiveVerifier()
    verifier.feed(data)
    return verifier.finish()


async def table_games(pool: Pool) -> int:
    async with pool.acquire() as conn:
        count: int = await conn.fetchval(
            f"SELECT count(*) FROM games WHERE {source.IN_SCOPE} "
            "AND finished_at >= '2026-10-01Z' AND finished_at < '2026-11-01Z'"
        )
    return count


async def export_changed_while_read(
    pool: Pool,
    db_dsn: str,
    monkeypatch: pytest.MonkeyPatch,
    read: datetime,
    sql: str,
    *,
    after: bool = False,
) -> tuple[Any, bytes]:
    """Export October in two ranges while ``sql`` commits as the range starting at ``read``
    (naive UTC) is read (``after``: once it was read); the published row and its bytes."""
    read_hook.install(monkeypatch, db_dsn, read, sql, after=after)
    result = await export_month(
        pool, table="games", month=OCT, ranges=RangeOptions(range_candidates=K)
    )
    assert result.outcome == "published" and result.archive is not None
    return result.archive, await archive_bytes(pool, result.archive.id)


def first_of_october() -> datetime:
    return datetime(2026, 10, 1)


@pytest.mark.parametrize(
    ("moved", "to"),
    [
        # Into the range not read yet, while the first is read: read twice without the check.
        (EARLY[3], "2026-10-20 09:00:00+00"),
        # Into the range read already, before the second is read: lost without the check.
        (LATE[3], "2026-10-02 09:00:00+00"),
    ],
    ids=["early-to-late", "late-to-early"],
)
async def test_a_game_moved_between_ranges_is_published_once(
    pool: Pool,
    db_dsn: str,
    monkeypatch: pytest.MonkeyPatch,
    moved: uuid.UUID,
    to: str,
) -> None:
    await seed(pool)
    sql = (
        f"UPDATE games SET finished_at = '{to}', started_at = '{to}'::timestamptz - interval "
        f"'3 minutes' WHERE id = '{moved}'"
    )
    row, data = await export_changed_while_read(
        pool, db_dsn, monkeypatch, first_of_october(), sql, after=moved in LATE
    )
    report = verify(data)
    assert report.ok, report.problems
    assert report.games == row.games == await table_games(pool) == 40
    assert lines_with(data, moved) == 1
    await companion_is_the_archive_s(pool, row)


async def companion_is_the_archive_s(pool: Pool, archive: Any) -> None:
    """The build's companion, whose row groups are the ranges of the plan the check ended
    with (the first round's parts dropped with their ranges), is the one the stored archive
    gives cut at those ranges."""
    async with pool.acquire() as conn:
        companion_id = await companion_store.served_companion_id(conn, archive.id)
        assert companion_id is not None, "the companion's parts followed their ranges"
        stored = await conn.fetchrow(
            "SELECT sha256, row_groups, games FROM archives WHERE id = $1", companion_id
        )
        ranges = await range_store.ranges_of(conn, archive.id)
    assert stored["row_groups"] == len([r for r in ranges if r.games]) > 1
    again = await companion_build.from_archive(pool, archive)
    assert (again.companion_id, again.built.sha256) == (None, stored["sha256"])


def lines_with(data: bytes, game: uuid.UUID) -> int:
    return sum(f"GN[{game}]" in line for line in gzip.decompress(data).decode().splitlines())


async def test_a_row_deleted_while_its_range_is_read_is_not_published(
    pool: Pool, db_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seed(pool)
    sql = f"DELETE FROM games WHERE id = '{EARLY[5]}'"
    row, data = await export_changed_while_read(pool, db_dsn, monkeypatch, first_of_october(), sql)
    report = verify(data)
    assert report.ok, report.problems
    assert report.games == row.games == row.candidate_games == await table_games(pool) == 39


async def test_a_row_inserted_while_its_range_is_read_is_published(
    pool: Pool, db_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seed(pool)
    new = uuid.UUID(int=999)
    columns = ", ".join(source.INSERT_COLUMNS)
    # A copy of an early game under a new id, in the early range.
    sql = (
        f"INSERT INTO games ({columns}) SELECT '{new}'::uuid, "
        + ", ".join(c for c in source.INSERT_COLUMNS[1:])
        + f" FROM games WHERE id = '{EARLY[0]}'"
    )
    row, data = await export_changed_while_read(pool, db_dsn, monkeypatch, first_of_october(), sql)
    report = verify(data)
    assert report.ok, report.problems
    assert report.games == row.games == row.candidate_games == await table_games(pool) == 41


MOVE_EARLY_TO_LATE = (
    f"UPDATE games SET finished_at = '2026-10-20 09:00:00+00', started_at = "
    f"'2026-10-20 08:57:00+00' WHERE id = '{EARLY[3]}'"
)
INSERT_EARLY = (
    f"INSERT INTO games ({', '.join(source.INSERT_COLUMNS)}) SELECT "
    f"'{uuid.UUID(int=999)}'::uuid, {', '.join(source.INSERT_COLUMNS[1:])} "
    f"FROM games WHERE id = '{EARLY[0]}'"
)


@pytest.mark.parametrize(
    ("sql", "after", "games"),
    [
        (MOVE_EARLY_TO_LATE, False, 40),
        (
            f"UPDATE games SET finished_at = '2026-10-02 09:00:00+00', started_at = "
            f"'2026-10-02 08:57:00+00' WHERE id = '{LATE[3]}'",
            True,
            40,
        ),
        (INSERT_EARLY, False, 41),
        (f"DELETE FROM games WHERE id = '{EARLY[5]}'", False, 39),
    ],
    ids=["moved-early-to-late", "moved-late-to-early", "inserted", "deleted"],
)
async def test_a_month_whose_counts_changed_during_its_export_rebuilds_unchanged(
    pool: Pool,
    db_dsn: str,
    monkeypatch: pytest.MonkeyPatch,
    sql: str,
    after: bool,
    games: int,
) -> None:
    """The change moves the edge between the two ranges (K = 20 a range, and now 19 or 21
    games before the edge): the published file is cut where a clean export of the final
    table cuts it, so a forced rebuild of the now quiet table gives the same bytes."""
    await seed(pool)
    row, data = await export_changed_while_read(
        pool, db_dsn, monkeypatch, first_of_october(), sql, after=after
    )
    report = verify(data)
    assert report.ok, report.problems
    assert report.games == row.games == await table_games(pool) == games
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM read_hook_fired") == 1
    again = await export_month(
        pool, table="games", month=OCT, force=True, ranges=RangeOptions(range_candidates=K)
    )
    assert again.archive is not None
    assert (again.outcome, again.archive.sha256, again.archive.file_name) == (
        "unchanged",
        row.sha256,
        row.file_name,
    )


async def test_counts_that_changed_before_the_ranges_were_read_are_planned_again(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game is added after the plan's count and before any range is read: every range then
    reads the final table (no fingerprint differs), but the plan came from the earlier count.
    The check plans again from its own count, and the file is the final table's clean
    export."""
    await seed(pool)
    real = month_reads.count_month

    async def counted_then_changed(*args: Any, **kwargs: Any) -> source.MonthCount:
        count = await real(*args, **kwargs)
        async with pool.acquire() as conn:
            await conn.execute(INSERT_EARLY)
        return count

    monkeypatch.setattr(month_reads, "count_month", counted_then_changed)
    planned: list[int] = []

    async def on_planned(candidates: int, seconds: float | None) -> None:
        planned.append(candidates)

    limit = TimeLimit(lambda candidates: 600 + candidates)
    bar = Recorder()
    first = await export_month(
        pool,
        table="games",
        month=OCT,
        ranges=RangeOptions(range_candidates=K),
        progress=bar,
        time_limit=limit,
        on_planned=on_planned,
    )
    monkeypatch.undo()
    assert first.archive is not None and first.archive.games == 41
    # The time limit, the running record and the bar follow the new plan's candidates.
    assert planned == [40, 41] and limit.candidates == bar.total == 41
    again = await export_month(
        pool, table="games", month=OCT, force=True, ranges=RangeOptions(range_candidates=K)
    )
    assert again.archive is not None
    assert (again.outcome, again.archive.sha256) == ("unchanged", first.archive.sha256)


async def test_the_command_s_local_processes_rebuild_a_changed_month_unchanged(
    pool: Pool, db_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ``gomoku-archive export`` runs with ``EXPORT_PROCESSES=2``: the coordinator and a
    range process of its own. A game moves into the late range once the coordinator holds its
    first range (whichever process then reads which range, the plan's count is older than the
    rows read); the file verifies, and a forced rebuild of the quiet table is ``unchanged``."""
    await seed(pool)
    real = range_store.claim_range
    moved = asyncio.Event()

    async def claim_then_change(*args: Any, **kwargs: Any) -> range_store.RangeClaim | None:
        claim = await real(*args, **kwargs)
        if claim is not None and not moved.is_set():
            moved.set()
            async with pool.acquire() as conn:
                await conn.execute(MOVE_EARLY_TO_LATE)
        return claim

    monkeypatch.setattr(range_store, "claim_range", claim_then_change)
    local = LocalProcesses(dsn=db_dsn, source_dsn=db_dsn, table="games", processes=2)
    options = RangeOptions(spreads=(local,), range_candidates=K)
    first = await export_month(pool, table="games", month=OCT, ranges=options)
    assert moved.is_set() and first.outcome == "published" and first.archive is not None
    report = verify(await archive_bytes(pool, first.archive.id))
    assert report.ok, report.problems
    assert report.games == first.archive.games == 40
    again = await export_month(pool, table="games", month=OCT, force=True, ranges=options)
    assert again.archive is not None
    assert (again.outcome, again.archive.sha256) == ("unchanged", first.archive.sha256)


async def test_a_table_that_keeps_changing_fails_the_build_as_transient(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every read of the early range changes one of its rows: after three checks the build
    fails, nothing is published, and the failure names the reason."""
    await seed(pool)
    real = source.candidate_batches_between
    changes = iter(range(1, 100))

    async def changing(conn: Any, table: str, start: Any, end: Any, **options: Any) -> Any:
        async for batch in real(conn, table, start, end, **options):
            if start == first_of_october():  # after the range's snapshot: a new row version
                async with pool.acquire() as other:
                    await other.execute(
                        "UPDATE games SET rated = true WHERE id = $1", EARLY[next(changes) % 20]
                    )
            yield batch

    monkeypatch.setattr(source, "candidate_batches_between", changing)
    with pytest.raises(SourceKeptChanging, match="kept changing"):
        await export_month(pool, table="games", month=OCT, ranges=RangeOptions(range_candidates=K))
    async with pool.acquire() as conn:
        states = await conn.fetch(
            "SELECT state, error FROM archives WHERE month = '2026-10' AND companion_of IS NULL"
        )
    assert [r["state"] for r in states] == ["failed"]
    assert "SourceKeptChanging" in states[0]["error"]
    assert classify_failure(SourceKeptChanging("x")) == "transient"


async def temp_bytes(conn: Any) -> int:
    await conn.execute("SELECT pg_stat_clear_snapshot()")
    value: int = await conn.fetchval(
        "SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()"
    )
    return value


async def test_the_count_and_the_check_write_no_temp_file(db_dsn: str) -> None:
    """With a work_mem that spills any sort of the month to disk, the plan's count and the
    consistency check use a hash aggregate (no Sort), and a whole ranged export writes no
    temp file: PostgreSQL's temp_bytes for the database stay the same, while a sort of the
    same rows does raise them (the measure works)."""
    await seed_bulk_month(db_dsn, OCT, 20_000)
    admin = await connect(db_dsn)
    try:
        await admin.execute(
            "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET work_mem = ''64kB''', "
            "current_database()); END $$"
        )
        pool = await create_pool(db_dsn, max_size=4)
        try:
            bounds = source.month_bounds(OCT)
            statements: list[tuple[str, tuple[Any, ...]]] = [
                (source.count_month_query("games"), bounds),
                (source.check_ranges_query("games"), (*bounds, [bounds[0]])),
            ]
            async with pool.acquire() as conn, source.counting(conn):
                for sql, args in statements:
                    plan = "\n".join(r[0] for r in await conn.fetch(f"EXPLAIN {sql}", *args))
                    assert "Sort" not in plan and "HashAggregate" in plan, plan
            before = await temp_bytes(admin)
            result = await export_month(
                pool, table="games", month=OCT, ranges=RangeOptions(range_candidates=5000)
            )
            assert result.outcome == "published"
            await asyncio.sleep(2)  # every backend's statistics flushed (at most once a second)
            assert await temp_bytes(admin) == before
            async with pool.acquire() as conn:  # the control: a sort that spills
                await conn.fetchval(
                    "SELECT count(*) FROM (SELECT moves::text FROM games ORDER BY 1) s"
                )
            await asyncio.sleep(2)
            assert await temp_bytes(admin) > before
        finally:
            await pool.close()
    finally:
        await admin.close()
