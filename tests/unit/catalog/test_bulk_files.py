"""The bulk lists and the Atom feed, from manifest documents; the feed read by feedparser."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import feedparser

from gomoku_archive.catalog import feed
from gomoku_archive.catalog.bulk_lists import parquet_url_list, sha256sums, url_list
from gomoku_archive.catalog.feed import build_feed
from gomoku_archive.catalog.manifest import (
    MonthSummary,
    ParquetFile,
    PreviousFile,
    PreviousListing,
    build_manifest,
    parquet_entry,
)
from gomoku_archive.companion.file_names import companion_file_name
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.names import archive_file_name

NEW, OLD, AUG = "c" * 64, "d" * 64, "e" * 64


def summary(month: str, games: int, sha: str | None, day: int) -> MonthSummary:
    return MonthSummary(
        month=month,
        games=games,
        file_name=archive_file_name(Month.parse(month), sha) if sha else None,
        bytes=1000 + games if sha else 0,
        uncompressed_bytes=5000 if sha else 0,
        sha256=sha,
        published_at=datetime(2026, 11, day, 6, tzinfo=UTC),
        candidate_games=games + 3,
        excluded_games=3,
        exclusions={},
        results={},
    )


def document() -> dict[str, object]:
    earlier = PreviousFile(
        file_name=archive_file_name(Month(2026, 10), OLD),
        sha256=OLD,
        bytes=990,
        games=7,
        candidate_games=11,
        excluded_games=4,
        published_at=datetime(2026, 11, 1, 6, tzinfo=UTC),
        superseded_at=datetime(2026, 11, 20, 6, tzinfo=UTC),
    )
    return build_manifest(
        [
            summary("2026-08", 5, AUG, 1),
            summary("2026-09", 0, None, 1),
            replace(summary("2026-10", 9, NEW, 20), previous=(earlier,)),
        ]
    )


def test_sha256sums_lists_current_files_newest_month_first() -> None:
    assert sha256sums(document()) == (
        f"{NEW}  gomoku-party-2026-10-cccccccccccccccc.sgf.gz\n"
        f"{AUG}  gomoku-party-2026-08-eeeeeeeeeeeeeeee.sgf.gz\n"
    )
    assert sha256sums(build_manifest([])) == ""


def test_url_list_is_absolute() -> None:
    assert url_list(document(), "https://gomokuparty.com").splitlines() == [
        "https://gomokuparty.com/api/v1/database/files/gomoku-party-2026-10-cccccccccccccccc.sgf.gz",
        "https://gomokuparty.com/api/v1/database/files/gomoku-party-2026-08-eeeeeeeeeeeeeeee.sgf.gz",
    ]


PARQUET_SHA = "f" * 64


def with_companion() -> dict[str, object]:
    """``document()`` where October's current file has its Parquet companion."""
    companion = ParquetFile(
        file_name=companion_file_name(Month(2026, 10), PARQUET_SHA),
        sha256=PARQUET_SHA,
        bytes=800,
        rows=9,
        row_groups=1,
        schema_id="gomoku-party-parquet-1",
        created_by="parquet-cpp-arrow version 26.0.1",
    )
    months = document()["months"]
    assert isinstance(months, list)
    months[0]["parquet"] = parquet_entry(companion)
    return {**document(), "months": months}


def test_sha256sums_lists_each_archive_then_its_companion() -> None:
    assert sha256sums(with_companion()) == (
        f"{NEW}  gomoku-party-2026-10-cccccccccccccccc.sgf.gz\n"
        f"{PARQUET_SHA}  gomoku-party-2026-10-ffffffffffffffff.parquet\n"
        f"{AUG}  gomoku-party-2026-08-eeeeeeeeeeeeeeee.sgf.gz\n"
    )


def test_the_parquet_list_holds_the_companions_only() -> None:
    origin = "https://gomokuparty.com"
    assert parquet_url_list(with_companion(), origin) == (
        f"{origin}/api/v1/database/files/gomoku-party-2026-10-ffffffffffffffff.parquet\n"
    )
    assert parquet_url_list(document(), origin) == ""
    assert url_list(with_companion(), origin) == url_list(document(), origin), "archives only"


def test_feed_parses_with_an_entry_per_publication() -> None:
    body = build_feed(document(), "https://gomokuparty.com")
    assert body == build_feed(document(), "https://gomokuparty.com"), "deterministic"
    parsed = feedparser.parse(body)
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert parsed.version == "atom10"
    assert parsed.feed.updated == "2026-11-20T06:00:00Z"
    assert parsed.feed.links[0].href == "https://gomokuparty.com/api/v1/database/feed.atom"
    ids = [e.id for e in parsed.entries]
    assert ids == [
        f"tag:gomokuparty.com,2026:archive:{NEW}",
        f"tag:gomokuparty.com,2026:archive:{OLD}",
        "tag:gomokuparty.com,2026:month:2026-09:no-games",
        f"tag:gomokuparty.com,2026:archive:{AUG}",
    ]
    rebuilt = parsed.entries[0]
    assert rebuilt.title == "2026-10 rebuilt: 9 games"
    assert "replaces gomoku-party-2026-10-dddddddddddddddd.sgf.gz" in rebuilt.summary
    assert "games 7 → 9 (+2)" in rebuilt.summary
    assert "candidates 11 → 12 (+1)" in rebuilt.summary
    assert "excluded 4 → 3 (-1)" in rebuilt.summary
    enclosure = next(link for link in rebuilt.links if link.rel == "enclosure")
    assert enclosure.href.endswith("/files/gomoku-party-2026-10-cccccccccccccccc.sgf.gz")
    assert enclosure.length == "1009"
    assert parsed.entries[1].title == "2026-10: 7 games"
    assert parsed.entries[2].title == "2026-09: 0 games"
    assert not any(link.rel == "enclosure" for link in parsed.entries[2].links)


def test_entry_ids_do_not_depend_on_the_origin() -> None:
    one = feedparser.parse(build_feed(document(), "http://127.0.0.1:8080"))
    two = feedparser.parse(build_feed(document(), "https://gomokuparty.com"))
    assert [e.id for e in one.entries] == [e.id for e in two.entries]


def test_an_empty_feed_is_valid() -> None:
    parsed = feedparser.parse(build_feed(build_manifest([]), "https://x.example"))
    assert not parsed.bozo
    assert parsed.entries == []
    assert parsed.feed.updated


def test_a_restored_file_is_announced_when_it_is_restored() -> None:
    # 2026-10: OLD published on the 1st, NEW on the 20th, then a rebuild on the 25th gave back
    # OLD's bytes: OLD is current again with its first publication time, NEW is superseded.
    new = PreviousFile(
        file_name=archive_file_name(Month(2026, 10), NEW),
        sha256=NEW,
        bytes=1009,
        games=9,
        candidate_games=12,
        excluded_games=3,
        published_at=datetime(2026, 11, 20, 6, tzinfo=UTC),
        superseded_at=datetime(2026, 11, 25, 6, tzinfo=UTC),
    )
    restored = replace(summary("2026-10", 7, OLD, 1), previous=(new,))
    parsed = feedparser.parse(build_feed(build_manifest([restored]), "https://gomokuparty.com"))
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert parsed.feed.updated == "2026-11-25T06:00:00Z"
    assert [(e.id, e.updated, e.title) for e in parsed.entries] == [
        (
            f"tag:gomokuparty.com,2026:archive:{OLD}:restored:2026-11-25T06:00:00Z",
            "2026-11-25T06:00:00Z",
            "2026-10 restored: 7 games",
        ),
        (
            f"tag:gomokuparty.com,2026:archive:{NEW}",
            "2026-11-20T06:00:00Z",
            "2026-10 rebuilt: 9 games",
        ),
        (f"tag:gomokuparty.com,2026:archive:{OLD}", "2026-11-01T06:00:00Z", "2026-10: 7 games"),
    ]
    assert "first published 2026-11-01T06:00:00Z" in parsed.entries[0].summary
    assert "replaces gomoku-party-2026-10-cccccccccccccccc.sgf.gz" in parsed.entries[0].summary
    assert "games 9 → 7 (-2)" in parsed.entries[0].summary


def listing(published: int, superseded: int, candidates: int = 4) -> PreviousListing:
    return PreviousListing(
        candidate_games=candidates,
        excluded_games=candidates,
        published_at=datetime(2026, 11, published, 6, tzinfo=UTC),
        superseded_at=datetime(2026, 11, superseded, 6, tzinfo=UTC),
    )


def test_a_zero_game_month_rebuilt_with_games_keeps_its_entry_and_is_a_rebuild() -> None:
    """September was published without games on the 1st and rebuilt with 9 on the 20th: the
    "no games" entry stays, with its id, and the new file is announced as a rebuild."""
    rebuilt = replace(summary("2026-09", 9, NEW, 20), previous_listings=(listing(1, 20),))
    document = build_manifest([rebuilt])
    assert document["months"][0]["previousZeroGameListings"] == [
        {
            "candidateGames": 4,
            "excludedGames": 4,
            "publishedAt": "2026-11-01T06:00:00Z",
            "supersededAt": "2026-11-20T06:00:00Z",
            "rebuildReason": None,
        }
    ]
    parsed = feedparser.parse(build_feed(document, "https://gomokuparty.com"))
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert [(e.id, e.title) for e in parsed.entries] == [
        (f"tag:gomokuparty.com,2026:archive:{NEW}", "2026-09 rebuilt: 9 games"),
        ("tag:gomokuparty.com,2026:month:2026-09:no-games", "2026-09: 0 games"),
    ]
    assert "It replaces the month's zero-game listing: games 0 → 9 (+9)" in (
        parsed.entries[0].summary
    )


def test_every_zero_game_listing_of_a_month_has_an_entry_of_its_own() -> None:
    """No games on the 1st, a file on the 10th, no games again on the 20th (the file's games
    turned out invalid), a file again on the 25th: four entries, four ids."""
    earlier = PreviousFile(
        file_name=archive_file_name(Month(2026, 9), OLD),
        sha256=OLD,
        bytes=990,
        games=7,
        candidate_games=11,
        excluded_games=4,
        published_at=datetime(2026, 11, 10, 6, tzinfo=UTC),
        superseded_at=datetime(2026, 11, 20, 6, tzinfo=UTC),
    )
    current = replace(
        summary("2026-09", 9, NEW, 25),
        previous=(earlier,),
        previous_listings=(listing(20, 25, 11), listing(1, 10)),
    )
    parsed = feedparser.parse(build_feed(build_manifest([current]), "https://gomokuparty.com"))
    assert [e.id for e in parsed.entries] == [
        f"tag:gomokuparty.com,2026:archive:{NEW}",
        "tag:gomokuparty.com,2026:month:2026-09:no-games:2026-11-20T06:00:00Z",
        f"tag:gomokuparty.com,2026:archive:{OLD}",
        "tag:gomokuparty.com,2026:month:2026-09:no-games",
    ]
    assert [e.title for e in parsed.entries] == [
        "2026-09 rebuilt: 9 games",
        "2026-09 rebuilt: 0 games",
        "2026-09 rebuilt: 7 games",
        "2026-09: 0 games",
    ]
    assert "It replaces gomoku-party-2026-09-dddddddddddddddd.sgf.gz" in parsed.entries[1].summary


def test_each_entry_links_to_its_months_row_of_the_page() -> None:
    parsed = feedparser.parse(build_feed(document(), "https://gomokuparty.com"))
    for entry in parsed.entries:
        alternate = next(link for link in entry.links if link.rel == "alternate")
        month = entry.title[:7]
        assert alternate.href == f"https://gomokuparty.com/database/#{month}"
    assert parsed.feed.link == "https://gomokuparty.com/database/"


def test_feed_titles_count_games_in_words() -> None:
    assert [feed.games(n) for n in (0, 1, 2, 1234)] == [
        "0 games",
        "1 game",
        "2 games",
        "1,234 games",
    ]


def test_a_rebuilds_entry_says_why_and_a_restore_keeps_the_first_entry() -> None:
    """The reason is part of the file's own entry (which never changes); a restore's entry
    does not borrow the restored file's first reason."""
    new = PreviousFile(
        file_name=archive_file_name(Month(2026, 10), NEW),
        sha256=NEW,
        bytes=1009,
        games=9,
        candidate_games=12,
        excluded_games=3,
        published_at=datetime(2026, 11, 20, 6, tzinfo=UTC),
        superseded_at=datetime(2026, 11, 25, 6, tzinfo=UTC),
        rebuild_reason="2 <late> games & a fix",
    )
    rebuilt = replace(
        summary("2026-10", 9, NEW, 20), rebuild_reason="2 <late> games & a fix", previous=()
    )
    first = replace(summary("2026-10", 7, OLD, 1), rebuild_reason=None)
    earlier = PreviousFile(
        file_name=archive_file_name(Month(2026, 10), OLD),
        sha256=OLD,
        bytes=1007,
        games=7,
        candidate_games=10,
        excluded_games=3,
        published_at=datetime(2026, 11, 1, 6, tzinfo=UTC),
        superseded_at=datetime(2026, 11, 20, 6, tzinfo=UTC),
    )
    xml = build_feed(build_manifest([replace(rebuilt, previous=(earlier,))]), "https://x.example")
    assert b"2 &lt;late&gt; games &amp; a fix" in xml
    parsed = feedparser.parse(xml)
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert parsed.entries[0].summary.endswith("Reason for the rebuild: 2 <late> games & a fix")
    assert "Reason" not in parsed.entries[1].summary  # the month's first file: no rebuild

    restored = replace(first, previous=(new,))
    parsed = feedparser.parse(build_feed(build_manifest([restored]), "https://x.example"))
    titles = [(e.title, "Reason for the rebuild" in e.summary) for e in parsed.entries]
    assert titles == [
        ("2026-10 restored: 7 games", False),
        ("2026-10 rebuilt: 9 games", True),
        ("2026-10: 7 games", False),
    ]
