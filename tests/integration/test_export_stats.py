"""A month's statistics end to end: exported with the month, stored with its row, served in the
manifest, and checked against an independent count of the archive's lines as a downloader would
read them (gzip, then a regex of the profile's fixed line shape). Also: a zero-game month, rows
published before migration 0004, and rebuilds that keep or restore a file's bytes."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import subprocess
import sys
import uuid
from typing import Any

import asyncpg
import pytest

from gomoku_archive.catalog.manifest import build_manifest
from gomoku_archive.db import archive_store, migrate, source
from gomoku_archive.db.pool import Pool, create_pool
from gomoku_archive.export.month import export_month
from gomoku_archive.profile.months import Month
from tests.integration.api_support import Client, publish_demo_month, serving
from tests.integration.rows import game_row, utc
from tests.stats_recount import recount

AUG, SEP = Month(2026, 8), Month(2026, 9)


async def served_manifest(api: Client) -> dict[str, Any]:
    response = await api.get("/api/v1/database", headers={"Accept-Encoding": "identity"})
    assert response.status == 200
    document: dict[str, Any] = await response.json()
    return document


async def served_text(api: Client, month: dict[str, Any]) -> str:
    response = await api.get(month["downloadUrl"])
    assert response.status == 200
    return gzip.decompress(await response.read()).decode("utf-8")


async def test_the_manifest_stats_are_the_archive_lines_counted(db_dsn: str, pool: Pool) -> None:
    odd = [  # beside the demo's games: no ratings, no time control, a negative rating, a draw
        game_row(finished_at=utc(2026, 8, 3), black_rating=None, white_rating=None),
        game_row(finished_at=utc(2026, 8, 4), time_control_seconds=None, black_rating=-20),
        game_row(
            finished_at=utc(2026, 8, 5),
            result="DRAW",
            termination="AGREEMENT",
            moves=[{"color": "B", "x": 14, "y": 0}, {"color": "W", "x": 0, "y": 14}],
        ),
    ]
    async with pool.acquire() as conn:
        await source.insert_games(conn, "games", odd)
    published = await publish_demo_month(pool, AUG, 300)
    await publish_demo_month(pool, SEP, 0)
    async with serving(db_dsn, pool) as api:
        document = await served_manifest(api)
        sep, aug = document["months"]
        assert (aug["month"], sep["month"]) == ("2026-08", "2026-09")
        text = await served_text(api, aug)
    stats = aug["stats"]
    assert stats == recount(text.splitlines())
    assert (
        sum(stats["winners"].values()) == aug["games"] == published.games == len(text.splitlines())
    )
    assert stats["winners"]["draw"] >= 1 and stats["timeControls"]["none"] >= 1
    assert stats["firstMoves"][0][14] == 1 and stats["allMoves"][14][0] >= 1
    assert stats["ratings"]["count"] < 2 * aug["games"]  # some games have no ratings
    assert stats["length"]["min"] is not None and stats["ratings"]["p10"] is not None
    # The zero-game month: the same object, zero counts and null percentiles.
    empty = sep["stats"]
    assert empty == recount([])
    assert empty["winners"] == {"black": 0, "white": 0, "draw": 0}
    assert empty["length"]["median"] is None and empty["ratings"]["median"] is None
    assert empty["timeControls"] == {}


async def test_the_manifest_command_prints_the_same_stats(db_dsn: str, pool: Pool) -> None:
    await publish_demo_month(pool, AUG, 60)
    await publish_demo_month(pool, SEP, 0)
    command = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "gomoku_archive.cli.main", "manifest"],
        env={**os.environ, "DATABASE_URL": db_dsn, "LOG_FORMAT": "json"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    printed = json.loads(command.stdout)
    async with serving(db_dsn, pool) as api:
        assert printed == await served_manifest(api)
    assert [m["stats"]["winners"]["black"] >= 0 for m in printed["months"]] == [True, True]
    assert sum(printed["months"][1]["stats"]["winners"].values()) == printed["months"][1]["games"]


async def stats_column(pool: Pool, archive_id: int) -> object:
    async with pool.acquire() as conn:
        return await conn.fetchval("SELECT stats FROM archives WHERE id = $1", archive_id)


async def test_rebuilds_keep_stats_that_match_the_bytes(db_dsn: str, pool: Pool) -> None:
    rows = [
        game_row(id=uuid.UUID(int=i), finished_at=utc(2026, 8, 10, i), black_rating=1400 + i)
        for i in range(1, 4)
    ]
    async with pool.acquire() as conn:
        await source.insert_games(conn, "games", rows)
    first = (await export_month(pool, table="games", month=AUG)).archive
    assert first is not None
    stored = await stats_column(pool, first.id)
    assert stored is not None
    # Unchanged bytes: the same stats, again.
    again = await export_month(pool, table="games", month=AUG, force=True)
    assert again.outcome == "unchanged" and await stats_column(pool, first.id) == stored
    # New bytes, then the old bytes back: the restored row's stats are those of its bytes.
    extra = game_row(id=uuid.UUID(int=9), finished_at=utc(2026, 8, 20), black_rating=2500)
    async with pool.acquire() as conn:
        await source.insert_games(conn, "games", [extra])
    second = (await export_month(pool, table="games", month=AUG, force=True)).archive
    assert second is not None and second.id != first.id
    assert await stats_column(pool, second.id) != stored
    async with pool.acquire() as conn:
        await conn.execute("DELETE FROM games WHERE id = $1", uuid.UUID(int=9))
    restored = await export_month(pool, table="games", month=AUG, force=True)
    assert restored.outcome == "restored" and restored.archive is not None
    assert restored.archive.id == first.id
    assert await stats_column(pool, first.id) == stored
    async with serving(db_dsn, pool) as api:
        (month,) = (await served_manifest(api))["months"]
        assert month["file"] == first.file_name
        assert month["stats"] == recount((await served_text(api, month)).splitlines())


async def test_rows_published_before_migration_0004_say_null_until_rebuilt(pg_dsn: str) -> None:
    everything = migrate.load_migrations()
    before = [m for m in everything if m.version < 4]
    conn = await asyncpg.connect(pg_dsn)
    try:
        with pytest.MonkeyPatch.context() as patch:  # the schema of the release before stats
            patch.setattr(migrate, "load_migrations", lambda: before)
            await migrate.migrate(conn)
        await source.create_reference_table(conn, "games")
        assert "stats" not in {
            r["column_name"]
            for r in await conn.fetch(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'archives'"
            )
        }
        # What that release's export left for a month whose games were all excluded.
        await conn.execute(
            "INSERT INTO archives (month, state, candidate_games, excluded_games, exclusions, "
            "published_at, finished_at, built_at) VALUES ('2026-08', 'published', 1, 1, "
            "'{\"aborted\": 1}', now(), now(), now())"
        )
        applied = await migrate.migrate(conn)
        assert applied[0] == "0004_stats.sql", applied  # and any later ones
        assert await conn.fetchval("SELECT stats FROM archives WHERE companion_of IS NULL") is None
    finally:
        await conn.close()
    pool = await create_pool(pg_dsn)
    try:
        async with pool.acquire() as c:
            aborted = game_row(finished_at=utc(2026, 8, 3), status="ABORTED")
            await source.insert_games(c, "games", [aborted])
            (summary,) = await archive_store.manifest_summaries(c)
        assert summary.stats is None
        assert build_manifest([summary])["months"][0]["stats"] is None
        # The next export of the month counts them; the bytes (none here) stay the same.
        rebuilt = await export_month(pool, table="games", month=AUG, force=True)
        assert rebuilt.outcome == "unchanged"
        async with pool.acquire() as c:
            (summary,) = await archive_store.manifest_summaries(c)
        entry = build_manifest([summary])["months"][0]["stats"]
        assert entry == recount([])
    finally:
        await pool.close()
