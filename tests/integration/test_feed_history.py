"""A month's whole version history reaches the manifest and the feed from the archive table:
published without games, then rebuilt with games, its "no games" entry stays in the feed and the
new file is announced as a rebuild of it."""

from __future__ import annotations

import feedparser

from gomoku_archive.catalog.feed import build_feed
from gomoku_archive.catalog.manifest import build_manifest
from gomoku_archive.db import archive_store, source
from gomoku_archive.db.pool import Pool
from gomoku_archive.export.month import export_month
from gomoku_archive.profile.months import Month
from tests.integration.rows import game_row, utc

AUG = Month(2026, 8)


async def feed_of(pool: Pool) -> tuple[dict[str, object], feedparser.FeedParserDict]:
    async with pool.acquire() as conn:
        document = build_manifest(await archive_store.manifest_summaries(conn))
    return document, feedparser.parse(build_feed(document, "https://gomokuparty.com"))


async def test_a_zero_game_month_rebuilt_with_games(pool: Pool) -> None:
    async with pool.acquire() as conn:
        await source.insert_games(
            conn, "games", [game_row(finished_at=utc(2026, 8, 3), status="ABORTED")]
        )
    first = await export_month(pool, table="games", month=AUG)
    assert first.archive is not None and first.archive.file_name is None
    _, before = await feed_of(pool)
    assert [e.title for e in before.entries] == ["2026-08: 0 games"]

    async with pool.acquire() as conn:  # the game server's late rows arrive
        await source.insert_games(conn, "games", [game_row(finished_at=utc(2026, 8, 4))])
    second = await export_month(pool, table="games", month=AUG, force=True)
    assert second.outcome == "published" and second.archive is not None

    document, after = await feed_of(pool)
    month = document["months"][0]  # type: ignore[index]
    assert month["previousFiles"] == []
    assert month["previousZeroGameListings"] == [
        {
            "candidateGames": 1,
            "excludedGames": 1,
            "publishedAt": before.entries[0].published,
            "supersededAt": after.entries[0].published,
            "rebuildReason": None,
        }
    ]
    assert [(e.id, e.title) for e in after.entries] == [
        (f"tag:gomokuparty.com,2026:archive:{month['sha256']}", "2026-08 rebuilt: 1 game"),
        (before.entries[0].id, "2026-08: 0 games"),  # the same entry as before the rebuild
    ]
    assert "replaces the month's zero-game listing: games 0 → 1 (+1)" in after.entries[0].summary
    assert all(
        link.href == "https://gomokuparty.com/database/#2026-08"
        for entry in after.entries
        for link in entry.links
        if link.rel == "alternate"
    )
