"""The manifest document (``GET /api/v1/database``), built from the published archive rows.

Pure: it takes plain summaries and returns JSON-ready data, so the CLI, the API and the public
page all show the same document."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gomoku_archive.gomoku.game import BOARD_SIZE
from gomoku_archive.http.file_urls import checksum_url, download_url, torrent_url
from gomoku_archive.profile.stats import (
    NO_TIME_CONTROL,
    MonthStats,
    grid,
    length_histogram,
    percentile,
)
from gomoku_archive.profile.vocabulary import ALL_REASONS, ALL_TERMINATIONS, PROFILE_ID

PROFILE = PROFILE_ID
"""The manifest's "profile" value (the id itself lives with the profile)."""
SCHEMA_VERSION = 1
LICENSE = "CC0-1.0"
SCOPE: Mapping[str, object] = {
    "mode": "RANKED",
    "rated": True,
    "ruleset": "FREESTYLE",
    "boardSize": BOARD_SIZE,
}


@dataclass(frozen=True, slots=True)
class ParquetFile:
    """A file's Parquet companion: the same games, typed, for querying in place (its schema
    and writer's version are part of its identity, as its bytes are)."""

    file_name: str
    sha256: str
    bytes: int
    rows: int
    row_groups: int
    schema_id: str
    created_by: str


@dataclass(frozen=True, slots=True)
class PreviousFile:
    """A file the month published before a rebuild with other bytes superseded it: still
    downloadable at its URL, listed under the month as version history."""

    file_name: str
    sha256: str
    bytes: int
    games: int
    candidate_games: int
    excluded_games: int
    published_at: datetime
    superseded_at: datetime
    first_published_at: datetime | None = None
    """When these bytes were first published (None: at ``published_at``)."""
    rebuild_reason: str | None = None
    """Why the rebuild that built this file was asked (None: not a rebuild, or no reason)."""
    parquet: ParquetFile | None = None
    """Its companion, superseded with it (None: it had none)."""


@dataclass(frozen=True, slots=True)
class PreviousListing:
    """A zero-game listing of the month that a rebuild with games superseded: it had no file,
    but it was published (and announced) with its counts, so the version history keeps it."""

    candidate_games: int
    excluded_games: int
    published_at: datetime
    superseded_at: datetime
    rebuild_reason: str | None = None
    """Why the rebuild that published this listing was asked (None: none, or no reason)."""


@dataclass(frozen=True, slots=True)
class MonthSummary:
    """What the manifest says of one published month."""

    month: str
    games: int
    file_name: str | None
    bytes: int
    uncompressed_bytes: int
    sha256: str | None
    published_at: datetime
    candidate_games: int
    excluded_games: int
    exclusions: Mapping[str, int]
    results: Mapping[str, int]
    previous: Sequence[PreviousFile] = ()
    """The month's superseded files, in any order (the manifest lists them newest first)."""
    previous_listings: Sequence[PreviousListing] = ()
    """The month's superseded zero-game listings, in any order (listed newest first)."""
    first_published_at: datetime | None = None
    """When these bytes (or this listing) were first published: ``published_at`` is the last
    time they became the month's current file, later after a restore (None: the same)."""
    stats: MonthStats | None = None
    """The published games' statistics; None for a month published before they were counted."""
    rebuild_reason: str | None = None
    """Why the rebuild that built the current file (or listing) was asked; None when it was
    not a rebuild, or no reason was given."""
    parquet: ParquetFile | None = None
    """The file's Parquet companion; None while it has none (a month without games, or one
    published before companions whose companion is not built yet)."""


def full_counts(counts: Mapping[str, int], keys: Sequence[str]) -> dict[str, int]:
    """Every key present, zeros included, in the documented order."""
    return {key: int(counts.get(key, 0)) for key in keys}


def utc_iso(instant: datetime) -> str:
    """UTC ISO 8601 with a Z, to the second: ``2026-09-01T00:12:30Z``."""
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def month_entry(summary: MonthSummary) -> dict[str, Any]:
    file = summary.file_name
    return {
        "month": summary.month,
        "games": summary.games,
        "file": file,
        "downloadUrl": download_url(file) if file else None,
        "checksumUrl": checksum_url(file) if file else None,
        "torrentUrl": torrent_url(file) if file else None,
        "bytes": summary.bytes if file else 0,
        "uncompressedBytes": summary.uncompressed_bytes if file else 0,
        "sha256": summary.sha256 if file else None,
        "publishedAt": utc_iso(summary.published_at),
        "firstPublishedAt": utc_iso(summary.first_published_at or summary.published_at),
        "candidateGames": summary.candidate_games,
        "excludedGames": summary.excluded_games,
        "exclusions": full_counts(summary.exclusions, ALL_REASONS),
        "results": full_counts(summary.results, ALL_TERMINATIONS),
        "rebuildReason": summary.rebuild_reason,
        "previousFiles": [previous_entry(p) for p in newest_first(summary.previous)],
        "previousZeroGameListings": [
            {
                "candidateGames": p.candidate_games,
                "excludedGames": p.excluded_games,
                "publishedAt": utc_iso(p.published_at),
                "supersededAt": utc_iso(p.superseded_at),
                "rebuildReason": p.rebuild_reason,
            }
            for p in sorted(
                summary.previous_listings,
                key=lambda p: (p.superseded_at, p.published_at),
                reverse=True,
            )
        ],
        "stats": None if summary.stats is None else stats_entry(summary.stats),
        "parquet": parquet_entry(summary.parquet) if file else None,
    }


def parquet_entry(parquet: ParquetFile | None) -> dict[str, Any] | None:
    """A file's ``parquet`` object: its companion, or null."""
    if parquet is None:
        return None
    file = parquet.file_name
    return {
        "file": file,
        "downloadUrl": download_url(file),
        "checksumUrl": checksum_url(file),
        "bytes": parquet.bytes,
        "sha256": parquet.sha256,
        "rows": parquet.rows,
        "rowGroups": parquet.row_groups,
        "schema": parquet.schema_id,
        "createdBy": parquet.created_by,
    }


def stats_entry(stats: MonthStats) -> dict[str, Any]:
    """A month's ``stats`` object; percentiles are nearest-rank, null without values."""
    lengths = stats.lengths
    return {
        "winners": dict(stats.winners),
        "length": {
            "min": min(lengths, default=None),
            "median": percentile(lengths, 50),
            "mean": mean(lengths),
            "p90": percentile(lengths, 90),
            "max": max(lengths, default=None),
            "histogram": [
                {"from": first, "to": last, "games": games}
                for first, last, games in length_histogram(lengths)
            ],
        },
        "firstMoves": grid(stats.first_moves),
        "allMoves": grid(stats.all_moves),
        "ratings": {
            "count": sum(stats.ratings.values()),
            "p10": percentile(stats.ratings, 10),
            "median": percentile(stats.ratings, 50),
            "p90": percentile(stats.ratings, 90),
        },
        "timeControls": {
            NO_TIME_CONTROL if seconds is None else str(seconds): games
            for seconds, games in stats.time_controls.items()
        },
    }


def mean(counts: Mapping[int, int]) -> float | None:
    """The mean of values given as value -> count, to one decimal; None without values."""
    total = sum(counts.values())
    if total == 0:
        return None
    return round(sum(value * count for value, count in counts.items()) / total, 1)


def newest_first(previous: Sequence[PreviousFile]) -> list[PreviousFile]:
    """Most recently superseded first; the file name breaks ties so the order is total."""
    return sorted(previous, key=lambda p: (p.superseded_at, p.file_name), reverse=True)


def previous_entry(previous: PreviousFile) -> dict[str, Any]:
    file = previous.file_name
    return {
        "file": file,
        "sha256": previous.sha256,
        "bytes": previous.bytes,
        "games": previous.games,
        "candidateGames": previous.candidate_games,
        "excludedGames": previous.excluded_games,
        "downloadUrl": download_url(file),
        "checksumUrl": checksum_url(file),
        "torrentUrl": torrent_url(file),
        "publishedAt": utc_iso(previous.published_at),
        "firstPublishedAt": utc_iso(previous.first_published_at or previous.published_at),
        "supersededAt": utc_iso(previous.superseded_at),
        "rebuildReason": previous.rebuild_reason,
        "parquet": parquet_entry(previous.parquet),
    }


def build_manifest(months: Sequence[MonthSummary]) -> dict[str, Any]:
    """The manifest: months newest first; months not yet generated are simply absent."""
    entries = [month_entry(m) for m in sorted(months, key=lambda m: m.month, reverse=True)]
    return {
        "schemaVersion": SCHEMA_VERSION,
        "profile": PROFILE,
        "license": LICENSE,
        "scope": dict(SCOPE),
        "totalGames": sum(e["games"] for e in entries),
        "months": entries,
    }


def last_changed(document: Mapping[str, Any]) -> datetime | None:
    """When the manifest last changed: its newest publication or supersession (None while it
    lists nothing). The pages, lists and feed rendered from it send this as Last-Modified, so
    ``wget -N`` and mirrors skip them until a month is published or rebuilt."""
    instants = []
    for month in document.get("months", []):
        instants.append(month.get("publishedAt"))
        for previous in month.get("previousFiles", []):
            instants.append(previous.get("supersededAt"))
    found = [datetime.fromisoformat(i) for i in instants if isinstance(i, str) and i]
    newest = max(found, default=None)
    return None if newest is None else newest.replace(microsecond=0)  # HTTP dates: seconds
