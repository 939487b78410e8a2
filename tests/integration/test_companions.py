"""The Parquet companion against a real PostgreSQL: a month's build publishes it beside its
archive with the same games, a row group per range; its bytes are the golden digest's for a
month of one range, and depend on the plan (K) as the archive's do, not on the processes; the
backfill from the stored archive gives the same bytes, cut at the archive's recorded ranges
(one group when it has none); it follows its archive through unchanged, new and restored
rebuilds; and a companion that fails never holds its archive back."""

from __future__ import annotations

import hashlib
import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from gomoku_archive.catalog.manifest import build_manifest
from gomoku_archive.cli.games_cmd import write_games
from gomoku_archive.companion.file_names import companion_file_name
from gomoku_archive.db import archive_store, companion_store, source
from gomoku_archive.db.pool import Pool
from gomoku_archive.demo.examples import EXAMPLE_MONTH, example_records
from gomoku_archive.errors import IntegrityError
from gomoku_archive.export.companion import build, file_writer
from gomoku_archive.export.companion.backfill import companion_for_archive
from gomoku_archive.export.companion.file_writer import CREATED_BY
from gomoku_archive.export.coordinator import RangeOptions
from gomoku_archive.export.local_ranges import LocalProcesses
from gomoku_archive.export.month import export_month
from gomoku_archive.profile.writer import GameRecord
from gomoku_archive.queue.snapshot import read_snapshot
from gomoku_archive.settings import Settings
from gomoku_archive.storage.chunks import iter_archive
from gomoku_archive.verify.games_rows import GameFilter
from gomoku_archive.worker.companion_jobs import build_companion
from gomoku_archive.worker.planner import plan_months
from tests.integration.rows import game_row
from tests.integration.worker_support import close_context, job_context
from tests.unit.companion.test_companion import GOLDEN_SHA256 as COMPANION_GOLDEN
from tests.unit.companion.test_companion import games_view
from tests.unit.profile.test_archive_stream import GOLDEN_SHA256 as ARCHIVE_GOLDEN

AUG = EXAMPLE_MONTH


def source_row(record: GameRecord) -> tuple[object, ...]:
    """The game server's row of one of the bundled example's games."""
    return game_row(
        id=record.game_id,
        started_at=record.started_at,
        finished_at=record.finished_at,
        result=record.result.value,
        termination=record.termination.value,
        moves=[{"color": m.color.value, "x": m.x, "y": m.y} for m in record.moves],
        time_control_seconds=record.time_control_seconds,
        black_rating=record.black_rating,
        white_rating=record.white_rating,
    )


async def insert(pool: Pool, rows: list[tuple[object, ...]]) -> None:
    async with pool.acquire() as conn:
        await source.insert_games(conn, "games", rows)


async def stored_bytes(pool: Pool, file_name: str) -> bytes:
    async with pool.acquire() as conn:
        row = await archive_store.downloadable_archive(conn, file_name)
    assert row is not None
    data = b"".join([bytes(p) async for p in iter_archive(pool, row.id, row.bytes)])
    assert hashlib.sha256(data).hexdigest() == row.sha256
    return data


async def manifest(pool: Pool) -> dict[str, Any]:
    async with pool.acquire() as conn:
        return build_manifest(await archive_store.manifest_summaries(conn))


async def month_entry(pool: Pool) -> dict[str, Any]:
    (entry,) = [m for m in (await manifest(pool))["months"] if m["month"] == str(AUG)]
    return entry


async def export(pool: Pool, *, k: int = 1_000_000, processes: int = 1, dsn: str = "") -> str:
    spreads = ()
    if processes > 1:
        spreads = (LocalProcesses(dsn=dsn, source_dsn=dsn, table="games", processes=processes),)
    options = RangeOptions(spreads=spreads, range_candidates=k)
    result = await export_month(pool, table="games", month=AUG, force=True, ranges=options)
    return result.outcome


async def rows_left(pool: Pool, sql: str) -> int:
    async with pool.acquire() as conn:
        count: int = await conn.fetchval(sql)
    return count


async def test_a_build_publishes_the_golden_companion_of_its_games(
    pool: Pool, tmp_path: Path
) -> None:
    await insert(pool, [source_row(r) for r in example_records()])
    assert await export(pool) == "published"
    entry = await month_entry(pool)
    assert entry["sha256"] == ARCHIVE_GOLDEN, "the archive's bytes are untouched"
    parquet = entry["parquet"]
    assert parquet["sha256"] == COMPANION_GOLDEN
    assert parquet["file"] == companion_file_name(AUG, COMPANION_GOLDEN)
    assert (parquet["rows"], parquet["rowGroups"]) == (200, 1)
    assert parquet["createdBy"] == CREATED_BY
    assert parquet["schema"] == "gomoku-party-parquet-1"
    data = await stored_bytes(pool, parquet["file"])
    assert len(data) == parquet["bytes"]
    # Every row is what `games` reads from the archive's line of the same game, in order.
    archive = tmp_path / entry["file"]
    archive.write_bytes(await stored_bytes(pool, entry["file"]))
    out = io.StringIO()
    assert write_games(str(archive), GameFilter(), "jsonl", out, io.StringIO()) == 0
    from_games = [json.loads(line) for line in out.getvalue().splitlines()]
    companion = pq.read_table(io.BytesIO(data)).to_pylist()
    assert [games_view(row) for row in companion] == from_games
    # What the build left: no part, no building row.
    assert await rows_left(pool, "SELECT count(*) FROM companion_parts") == 0
    assert await rows_left(pool, "SELECT count(*) FROM archives WHERE state = 'building'") == 0


async def test_the_plan_cuts_the_row_groups_and_not_the_processes(pool: Pool, db_dsn: str) -> None:
    """Ranges of 30 games on two processes and in one: one archive, one companion of a group
    per range; one range: the golden archive and the golden one-group companion. K is part of
    the companion's identity as it is of the archive's."""
    await insert(pool, [source_row(r) for r in example_records()])
    await export(pool, k=30, processes=2, dsn=db_dsn)
    ranged = await month_entry(pool)
    assert ranged["sha256"] != ARCHIVE_GOLDEN, "ranges of K restart the deflate stream"
    assert ranged["parquet"]["sha256"] != COMPANION_GOLDEN, "and cut the row groups"
    data = await stored_bytes(pool, ranged["parquet"]["file"])
    groups = pq.ParquetFile(io.BytesIO(data)).metadata
    sizes = [groups.row_group(i).num_rows for i in range(groups.num_row_groups)]
    assert sizes == [n for n in await range_games(pool) if n] and len(sizes) > 1
    assert ranged["parquet"]["rowGroups"] == len(sizes)
    assert await export(pool) == "published"  # one range: other archive bytes, one group
    whole = await month_entry(pool)
    assert whole["sha256"] == ARCHIVE_GOLDEN
    assert (whole["parquet"]["sha256"], whole["parquet"]["rowGroups"]) == (COMPANION_GOLDEN, 1)
    assert whole["previousFiles"][0]["parquet"] == ranged["parquet"]
    assert await export(pool, k=30) == "restored"  # in one process this time
    restored = await month_entry(pool)
    assert restored["sha256"] == ranged["sha256"]
    assert restored["parquet"] == ranged["parquet"]
    served = "SELECT count(*) FROM archives WHERE companion_of IS NOT NULL"
    assert await rows_left(pool, served) == 2


async def range_games(pool: Pool) -> list[int]:
    """The games of each range of the published archive's build, in order."""
    async with pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT r.games FROM archive_ranges r JOIN archives a ON a.id = r.archive_id "
            "WHERE a.state = 'published' AND a.companion_of IS NULL ORDER BY r.seq"
        )
    return [r["games"] for r in rows]


async def test_the_backfill_from_the_stored_archive_gives_the_same_bytes(pool: Pool) -> None:
    """A month published before companions: its companion, made from the .sgf.gz by the
    worker's job, is byte for byte the one its build made, in the row groups of its recorded
    ranges."""
    await insert(pool, [source_row(r) for r in example_records()])
    await export(pool, k=30)
    built = (await month_entry(pool))["parquet"]
    assert built["rowGroups"] == len([n for n in await range_games(pool) if n]) > 1
    async with pool.acquire() as conn:
        await conn.execute("DELETE FROM archives WHERE companion_of IS NOT NULL")
        (archive_id,) = await companion_store.archives_without_companion(conn)
    assert (await month_entry(pool))["parquet"] is None
    result = await companion_for_archive(pool, archive_id)
    assert result.outcome == "published"
    assert (await month_entry(pool))["parquet"] == built
    assert (await companion_for_archive(pool, archive_id)).outcome == "skipped"
    async with pool.acquire() as conn:
        assert await companion_store.archives_without_companion(conn) == []


async def test_an_archive_without_recorded_ranges_gets_one_group(pool: Pool) -> None:
    """A month built before ranges existed has none recorded: its companion is one group."""
    await insert(pool, [source_row(r) for r in example_records()])
    await export(pool, k=30)
    async with pool.acquire() as conn:
        await conn.execute("DELETE FROM archives WHERE companion_of IS NOT NULL")
        await conn.execute("DELETE FROM archive_ranges")
        (archive_id,) = await companion_store.archives_without_companion(conn)
    assert (await companion_for_archive(pool, archive_id)).outcome == "published"
    parquet = (await month_entry(pool))["parquet"]
    assert (parquet["sha256"], parquet["rowGroups"]) == (COMPANION_GOLDEN, 1)


async def test_ranges_that_are_not_the_archive_s_games_give_no_companion(pool: Pool) -> None:
    await insert(pool, [source_row(r) for r in example_records()])
    await export(pool, k=30)
    async with pool.acquire() as conn:
        await conn.execute("DELETE FROM archives WHERE companion_of IS NOT NULL")
        await conn.execute("UPDATE archive_ranges SET games = games + 1 WHERE seq = 0")
        archive = await archive_store.published_for_month(conn, str(AUG))
    assert archive is not None
    with pytest.raises(IntegrityError, match="ranges recorded for it are not its 200 games"):
        await build.from_archive(pool, archive)
    companions = "SELECT count(*) FROM archives WHERE companion_of IS NOT NULL"
    assert await rows_left(pool, companions) == 0


async def test_rebuilds_keep_replace_and_restore_the_companion(pool: Pool) -> None:
    records = example_records()
    await insert(pool, [source_row(r) for r in records[:150]])
    await export(pool)
    first = (await month_entry(pool))["parquet"]
    assert await export(pool) == "unchanged"
    assert (await month_entry(pool))["parquet"] == first
    await insert(pool, [source_row(r) for r in records[150:]])
    assert await export(pool) == "published"
    second = await month_entry(pool)
    assert second["parquet"]["sha256"] == COMPANION_GOLDEN
    assert second["previousFiles"][0]["parquet"] == first, "superseded with its archive"
    assert len(await stored_bytes(pool, first["file"])) == first["bytes"], "still downloadable"
    async with pool.acquire() as conn:
        await conn.execute(
            "DELETE FROM games WHERE id = ANY($1::uuid[])", [r.game_id for r in records[150:]]
        )
    assert await export(pool) == "restored"
    again = await month_entry(pool)
    assert again["parquet"] == first
    assert again["previousFiles"][0]["parquet"] == second["parquet"]


@pytest.mark.parametrize("where", ["rows", "encoding"])
async def test_a_companion_that_fails_leaves_the_archive_published(
    pool: Pool, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """A range whose rows cannot be made, or whose group cannot be encoded, stores no part:
    the range is done, the archive is published without a companion, and the worker's job
    makes it from the stored archive."""
    await insert(pool, [source_row(r) for r in example_records()])

    def broken(*args: object) -> object:
        raise OSError("the disk under the encoder went away")

    with monkeypatch.context() as patch:
        if where == "rows":
            patch.setattr(file_writer, "text_columns", broken)
        else:
            patch.setattr(file_writer, "encode_group", broken)
        assert await export(pool, k=30) == "published"
    entry = await month_entry(pool)
    assert entry["file"] is not None and entry["parquet"] is None
    # Nothing of it is left: no building row, no chunks of one, no parts.
    assert await rows_left(pool, "SELECT count(*) FROM archives WHERE state = 'building'") == 0
    assert (
        await rows_left(pool, "SELECT count(*) FROM archives WHERE companion_of IS NOT NULL") == 0
    )
    assert await rows_left(pool, "SELECT count(*) FROM companion_parts") == 0
    assert await rows_left(pool, "SELECT count(*) FROM companion_part_footers") == 0
    async with pool.acquire() as conn:
        (archive_id,) = await companion_store.archives_without_companion(conn)
    assert (await companion_for_archive(pool, archive_id)).outcome == "published"
    parquet = (await month_entry(pool))["parquet"]
    assert parquet["rowGroups"] == len([n for n in await range_games(pool) if n]) > 1


async def test_a_month_without_games_has_no_companion(pool: Pool) -> None:
    await insert(
        pool, [game_row(finished_at=r.finished_at, status="ABORTED") for r in example_records()[:3]]
    )
    await export(pool, k=1)
    entry = await month_entry(pool)
    assert entry["file"] is None and entry["parquet"] is None
    assert await rows_left(pool, "SELECT count(*) FROM companion_parts") == 0


async def test_build_from_archive_writes_the_same_bytes_the_ranges_do(pool: Pool) -> None:
    """The two build paths, side by side on one published month of several ranges: the
    stored archive's lines and the ranges' parts make one file (the backfill's copy is dropped
    as the same bytes)."""
    await insert(pool, [source_row(r) for r in example_records()])
    await export(pool, k=30)
    built = (await month_entry(pool))["parquet"]
    assert built["rowGroups"] > 1
    async with pool.acquire() as conn:
        archive = await archive_store.published_for_month(conn, str(AUG))
    assert archive is not None
    again = await build.from_archive(pool, archive)
    assert again.companion_id is None, "a row holds these bytes already"
    assert again.built.sha256 == built["sha256"]
    assert again.built.row_groups == built["rowGroups"]


async def test_the_planner_queues_and_the_job_builds_a_missing_companion(
    pool: Pool, settings: Settings
) -> None:
    """A month published before companions: the planner queues ``companion:<archive id>``
    once, and the worker's job publishes the companion (then a second run is ``skipped``)."""
    await insert(pool, [source_row(r) for r in example_records()])
    await export(pool)
    async with pool.acquire() as conn:
        await conn.execute("DELETE FROM archives WHERE companion_of IS NOT NULL")
        (archive_id,) = await companion_store.archives_without_companion(conn)
    ctx = await job_context(settings, pool, now=datetime(2026, 9, 2, tzinfo=UTC))
    try:
        run = await plan_months(ctx)
        assert run["companionsEnqueued"] == [archive_id]
        assert (await plan_months(ctx))["companionsEnqueued"] == [], "queued once"
        snapshot = await read_snapshot(ctx["redis"])
        assert f"companion:{archive_id}" in [j.job_id for j in snapshot.queued]
        done = await build_companion(ctx, archive_id)
        assert done["outcome"] == "published" and done["file"].endswith(".parquet")
        assert (await build_companion(ctx, archive_id))["outcome"] == "skipped"
    finally:
        await close_context(ctx)
    assert (await month_entry(pool))["parquet"]["sha256"] == COMPANION_GOLDEN
