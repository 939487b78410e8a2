"""Bytes follow the games (issue 26): the ranges are planned from the rows that can be
published as far as SQL can tell, so rows excluded by their status or scope never move a range
edge and never change the file; and an ``unchanged`` rebuild whose counts changed tells the
API at once (NOTIFY), like a new file."""

from __future__ import annotations

import asyncio
from typing import Any

from gomoku_archive.db import archive_store
from gomoku_archive.db.pool import Pool, connect
from gomoku_archive.export.coordinator import RangeOptions
from gomoku_archive.export.month import export_month
from gomoku_archive.profile.months import Month
from tests.integration.rows import game_row, utc
from tests.integration.test_export import insert

NOV = Month(2026, 11)
K = 30


async def build(pool: Pool, *, force: bool = False) -> Any:
    return await export_month(
        pool, table="games", month=NOV, force=force, ranges=RangeOptions(range_candidates=K)
    )


async def test_excluded_rows_never_change_a_month_of_exactly_k_games(pool: Pool) -> None:
    await insert(pool, [game_row(finished_at=utc(2026, 11, 3, 4, 5, i)) for i in range(K)])
    first = await build(pool)
    assert first.outcome == "published" and first.archive.games == K
    # An aborted game and an unranked one in the middle of the month, and a finished game
    # whose result was never written: none can be published.
    await insert(
        pool,
        [
            game_row(finished_at=utc(2026, 11, 3, 4, 5, 10), status="ABORTED", result=None),
            game_row(finished_at=utc(2026, 11, 3, 4, 5, 11), mode="CASUAL"),
            game_row(finished_at=utc(2026, 11, 3, 4, 5, 12), result=None),
        ],
    )
    again = await build(pool, force=True)
    assert again.outcome == "unchanged"
    assert again.archive.file_name == first.archive.file_name
    assert again.archive.sha256 == first.archive.sha256
    assert (again.archive.candidate_games, again.archive.excluded_games) == (K + 2, 2)


async def test_an_unchanged_file_with_corrected_counts_notifies_the_api(
    pool: Pool, db_dsn: str
) -> None:
    await insert(pool, [game_row(finished_at=utc(2026, 11, 3, 4, 5, i)) for i in range(3)])
    await build(pool)
    heard: asyncio.Queue[str] = asyncio.Queue()
    listener = await connect(db_dsn)
    await listener.add_listener(
        archive_store.ARCHIVES_CHANNEL, lambda *args: heard.put_nowait(args[3])
    )
    try:
        same = await build(pool, force=True)  # nothing changed: nothing to tell
        assert same.outcome == "unchanged"
        await asyncio.sleep(0.3)
        assert heard.empty()
        await insert(pool, [game_row(finished_at=utc(2026, 11, 9), status="ABORTED")])
        corrected = await build(pool, force=True)
        assert corrected.outcome == "unchanged" and corrected.archive.excluded_games == 1
        assert await asyncio.wait_for(heard.get(), 5) == str(NOV)
    finally:
        await listener.close()
