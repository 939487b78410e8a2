"""Every statement on the service's archive tables: building, chunk writes, the publish flip,
and the read side used by the API, the worker and the CLI.

Visibility rule: only rows in state ``published`` (listed) or ``superseded`` (still downloadable
at their old URL) are ever served, and a row reaches those states only in ``publish``, after its
bytes were read back and checked."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

import asyncpg

from gomoku_archive.catalog.manifest import (
    MonthSummary,
    ParquetFile,
    PreviousFile,
    PreviousListing,
    full_counts,
)
from gomoku_archive.db.pool import Connection, transaction
from gomoku_archive.profile.stats import MonthStats
from gomoku_archive.profile.vocabulary import ALL_REASONS, ALL_TERMINATIONS

ARCHIVES_CHANNEL = "gomoku_archives"
"""NOTIFY channel: the payload is the month whose published archive changed."""

ArchiveState = Literal["building", "published", "superseded", "failed"]
ARCHIVES_ONLY = "companion_of IS NULL"
"""The months' archives, not their Parquet companions (rows of this table too, migration
0012): every listing of months says it."""


@dataclass(frozen=True, slots=True)
class ArchiveRow:
    id: int
    month: str
    state: ArchiveState
    file_name: str | None
    sha256: str | None
    bytes: int
    uncompressed_bytes: int
    games: int
    candidate_games: int
    excluded_games: int
    exclusions: Mapping[str, int]
    results: Mapping[str, int]
    created_at: datetime
    finished_at: datetime | None
    published_at: datetime | None
    """The last time these bytes became the month's file (a restore's time after one)."""
    superseded_at: datetime | None
    failed_at: datetime | None
    error: str | None
    built_at: datetime | None
    """The last export that produced these bytes (see migration 0003)."""
    mirror: MirrorRecord
    first_published_at: datetime | None = None
    """When these bytes were first published (see migration 0007): their Last-Modified."""
    rebuild_reason: str | None = None
    """Why the forced rebuild that built this row was asked (see migration 0011)."""
    last_rebuild_at: datetime | None = None
    """The latest forced rebuild that left this published row as it was (same bytes, or this
    earlier file restored)."""
    last_rebuild_reason: str | None = None
    """That rebuild's reason (None: none given)."""

    @property
    def last_modified(self) -> datetime | None:
        """The file's Last-Modified: its bytes' first publication, which a restore keeps."""
        return self.first_published_at or self.published_at

    def summary(
        self,
        previous: Sequence[PreviousFile] = (),
        stats: MonthStats | None = None,
        previous_listings: Sequence[PreviousListing] = (),
    ) -> MonthSummary:
        """The row's manifest entry; ``stats`` as ``manifest_summaries`` reads them (None: not
        counted)."""
        assert self.published_at is not None, "only published rows have a manifest entry"
        return MonthSummary(
            month=self.month,
            games=self.games,
            file_name=self.file_name,
            bytes=self.bytes,
            uncompressed_bytes=self.uncompressed_bytes,
            sha256=self.sha256,
            published_at=self.published_at,
            first_published_at=self.first_published_at,
            candidate_games=self.candidate_games,
            excluded_games=self.excluded_games,
            exclusions=self.exclusions,
            results=self.results,
            previous=tuple(previous),
            previous_listings=tuple(previous_listings),
            stats=stats,
            rebuild_reason=self.rebuild_reason,
        )

    def previous_listing(self) -> PreviousListing:
        """A superseded zero-game row as the month's version history lists it."""
        assert self.state == "superseded", "only superseded rows are earlier versions"
        assert self.file_name is None
        assert self.published_at is not None
        assert self.superseded_at is not None
        return PreviousListing(
            candidate_games=self.candidate_games,
            excluded_games=self.excluded_games,
            published_at=self.published_at,
            superseded_at=self.superseded_at,
            rebuild_reason=self.rebuild_reason,
        )

    def previous_file(self) -> PreviousFile:
        """A superseded row as the month's version history lists it."""
        assert self.state == "superseded", "only superseded rows are earlier versions"
        assert self.file_name is not None
        assert self.sha256 is not None
        assert self.published_at is not None
        assert self.superseded_at is not None
        return PreviousFile(
            file_name=self.file_name,
            sha256=self.sha256,
            bytes=self.bytes,
            games=self.games,
            candidate_games=self.candidate_games,
            excluded_games=self.excluded_games,
            published_at=self.published_at,
            superseded_at=self.superseded_at,
            first_published_at=self.first_published_at,
            rebuild_reason=self.rebuild_reason,
        )


@dataclass(frozen=True, slots=True)
class MirrorRecord:
    """What the S3 mirror knows of an archive's copy in the bucket."""

    store: str | None = None
    """The store the copy was verified in (``storage.s3.store_identity``; None before
    migration 0008 recorded it: unknown)."""
    bucket: str | None = None
    key: str | None = None
    etag: str | None = None
    verified_at: datetime | None = None
    """Set only while the copy was read back and matched; cleared when a scrub finds it wrong."""
    checked_at: datetime | None = None
    failed_at: datetime | None = None
    error: str | None = None
    uploaded_bytes: int = 0
    cdn_url: str | None = None
    """The CDN address an anonymous GET read the archive's bytes from (see migration 0005)."""
    cdn_verified_at: datetime | None = None
    cdn_error: str | None = None
    head_checked_at: datetime | None = None
    """The worker's last cheap check (HEAD) that found the copy unchanged."""

    def verified_in(self, store: str, bucket: str | None, key: str) -> bool:
        """Whether the copy at ``key`` of ``bucket`` in ``store`` is a verified one (read back
        there and matched): a bucket of the same name in another store is another bucket."""
        return (
            self.verified_at is not None
            and bucket is not None
            and self.store == store
            and self.bucket == bucket
            and self.key == key
        )

    def not_redirected_because(
        self, store: str, bucket: str | None, key: str, cdn_url: str | None
    ) -> str | None:
        """None when downloads of this file may be redirected to its copy: verified in
        ``bucket`` of ``store`` at ``key`` and, behind a CDN (``cdn_url``, the address a
        client would get), read anonymously from that very address. Else why not, for
        operators."""
        if not self.verified_in(store, bucket, key):
            if self.verified_at is not None and self.store != store:
                return "its copy was verified in another store; not read back in this one yet"
            return "no verified copy in the bucket yet"
        if cdn_url is None:
            return None
        if self.cdn_verified_at is not None and self.cdn_url == cdn_url:
            return None
        if self.cdn_error is not None:
            return f"the CDN's copy failed its anonymous read: {self.cdn_error}"
        return "the CDN's copy has not been read anonymously yet"


@dataclass(frozen=True, slots=True)
class Counts:
    """An export's honest numbers: candidates = games + excluded."""

    games: int
    candidate_games: int
    excluded_games: int
    exclusions: Mapping[str, int]
    results: Mapping[str, int]
    stats: MonthStats | None = None
    """The published games' statistics; None when they were not counted (the row's stats
    are then NULL, and the manifest says ``"stats": null``)."""


@dataclass(frozen=True, slots=True)
class BuiltFile:
    sha256: str
    bytes: int
    uncompressed_bytes: int
    file_name: str


ROW_COLUMNS = """id, month, state, file_name, sha256, bytes, uncompressed_bytes, games,
    candidate_games, excluded_games, exclusions, results, created_at, finished_at,
    published_at, superseded_at, failed_at, error, built_at, s3_store, s3_bucket, s3_key, s3_etag,
    mirrored_at, mirror_checked_at, mirror_failed_at, mirror_error, mirror_uploaded_bytes,
    cdn_url, cdn_verified_at, cdn_error, mirror_head_checked_at, first_published_at,
    rebuild_reason, last_rebuild_at, last_rebuild_reason"""
"""Every column but ``stats``, which only the manifest reads (``manifest_summaries``): a few
kilobytes of counts that a download's lookup should not fetch and decode."""
_MIRROR_COLUMNS = {
    "s3_store": "store",
    "s3_bucket": "bucket",
    "s3_key": "key",
    "s3_etag": "etag",
    "mirrored_at": "verified_at",
    "mirror_checked_at": "checked_at",
    "mirror_failed_at": "failed_at",
    "mirror_error": "error",
    "mirror_uploaded_bytes": "uploaded_bytes",
    "cdn_url": "cdn_url",
    "cdn_verified_at": "cdn_verified_at",
    "cdn_error": "cdn_error",
    "mirror_head_checked_at": "head_checked_at",
}


def archive_row(record: asyncpg.Record) -> ArchiveRow:
    values = dict(record)
    values.pop("stats", None)  # read by manifest_summaries alone
    # jsonb keeps no key order: give every reader the documented order, zeros included.
    values["exclusions"] = full_counts(values["exclusions"], ALL_REASONS)
    values["results"] = full_counts(values["results"], ALL_TERMINATIONS)
    values["mirror"] = MirrorRecord(**{_MIRROR_COLUMNS[c]: values.pop(c) for c in _MIRROR_COLUMNS})
    return ArchiveRow(**values)


# --- read side -------------------------------------------------------------------------------


async def published_archives(conn: Connection) -> list[ArchiveRow]:
    """The manifest's rows: one per published month."""
    rows = await conn.fetch(
        f"SELECT {ROW_COLUMNS} FROM archives WHERE state = 'published' AND {ARCHIVES_ONLY} "
        "ORDER BY month DESC"
    )
    return [archive_row(r) for r in rows]


async def superseded_archives(conn: Connection) -> list[ArchiveRow]:
    """Every superseded file (the months' version history), newest month first, most
    recently superseded first within a month. Zero-game rows have no file to list."""
    rows = await conn.fetch(
        f"SELECT {ROW_COLUMNS} FROM archives WHERE state = 'superseded' AND {ARCHIVES_ONLY} "
        "AND file_name IS NOT NULL ORDER BY month DESC, superseded_at DESC, id DESC"
    )
    return [archive_row(r) for r in rows]


async def manifest_summaries(conn: Connection) -> list[MonthSummary]:
    """What the manifest lists: each published month with its version history and its
    statistics. The API's cache and the ``manifest`` command both read it here, so they print
    the same document."""
    rows = await conn.fetch(
        f"SELECT {ROW_COLUMNS}, stats FROM archives WHERE state = 'published' "
        f"AND {ARCHIVES_ONLY} ORDER BY month DESC"
    )
    companions = await _served_companions(conn)
    history: dict[str, list[PreviousFile]] = {}
    for old in await superseded_archives(conn):
        previous = replace(old.previous_file(), parquet=companions.get(old.id))
        history.setdefault(old.month, []).append(previous)
    listings: dict[str, list[PreviousListing]] = {}
    for old in await superseded_zero_game_listings(conn):
        listings.setdefault(old.month, []).append(old.previous_listing())
    summaries = []
    for record in rows:
        row = archive_row(record)
        stats = None if record["stats"] is None else MonthStats.from_json(record["stats"])
        summary = row.summary(history.get(row.month, ()), stats, listings.get(row.month, ()))
        summaries.append(replace(summary, parquet=companions.get(row.id)))
    return summaries


async def _served_companions(conn: Connection) -> dict[int, ParquetFile]:
    """Every served Parquet companion (migration 0012) by the id of its archive."""
    rows = await conn.fetch(
        "SELECT companion_of, file_name, sha256, bytes, games, row_groups, schema_id, "
        "created_by FROM archives WHERE companion_of IS NOT NULL "
        "AND state IN ('published', 'superseded') AND file_name IS NOT NULL"
    )
    return {
        r["companion_of"]: ParquetFile(
            file_name=r["file_name"],
            sha256=r["sha256"],
            bytes=r["bytes"],
            rows=r["games"],
            row_groups=r["row_groups"],
            schema_id=r["schema_id"],
            created_by=r["created_by"],
        )
        for r in rows
    }


async def superseded_zero_game_listings(conn: Connection) -> list[ArchiveRow]:
    """Every superseded zero-game listing: a month published without games, then rebuilt with
    some (the feed announced it, so the version history keeps it)."""
    rows = await conn.fetch(
        f"SELECT {ROW_COLUMNS} FROM archives WHERE state = 'superseded' AND {ARCHIVES_ONLY} "
        "AND file_name IS NULL ORDER BY month DESC, superseded_at DESC, id DESC"
    )
    return [archive_row(r) for r in rows]


async def downloadable_archive(conn: Connection, file_name: str) -> ArchiveRow | None:
    """A file that may be served: published, or superseded (its URL is cacheable forever)."""
    row = await conn.fetchrow(
        f"SELECT {ROW_COLUMNS} FROM archives "
        "WHERE file_name = $1 AND state IN ('published', 'superseded')",
        file_name,
    )
    return None if row is None else archive_row(row)


async def all_archives(conn: Connection, *, limit: int = 500) -> list[ArchiveRow]:
    """Every archive row, newest month first, for operators."""
    rows = await conn.fetch(
        f"SELECT {ROW_COLUMNS} FROM archives WHERE {ARCHIVES_ONLY} "
        "ORDER BY month DESC, created_at DESC LIMIT $1",
        limit,
    )
    return [archive_row(r) for r in rows]


async def published_months(conn: Connection) -> set[str]:
    rows = await conn.fetch(
        f"SELECT month FROM archives WHERE state = 'published' AND {ARCHIVES_ONLY}"
    )
    return {r["month"] for r in rows}


async def published_for_month(conn: Connection, month: str) -> ArchiveRow | None:
    row = await conn.fetchrow(
        f"SELECT {ROW_COLUMNS} FROM archives WHERE month = $1 AND state = 'published' "
        f"AND {ARCHIVES_ONLY}",
        month,
    )
    return None if row is None else archive_row(row)


async def read_chunks(conn: Connection, archive_id: int, first_seq: int, count: int) -> list[bytes]:
    """Chunks ``first_seq .. first_seq + count - 1`` in order (fewer at the end of the file)."""
    rows = await conn.fetch(
        "SELECT data FROM archive_chunks WHERE archive_id = $1 AND seq >= $2 AND seq < $3 "
        "ORDER BY seq",
        archive_id,
        first_seq,
        first_seq + count,
    )
    return [r["data"] for r in rows]


# --- write side (the export) -----------------------------------------------------------------


async def remove_leftovers(conn: Connection, month: str) -> int:
    """Delete what killed or failed exports of ``month`` left behind: ``building`` rows (with
    their chunks) and the chunks of ``failed`` rows (the failure record itself is kept).
    Call only while holding the month's export lock."""
    status = await conn.execute(
        "DELETE FROM archives WHERE month = $1 AND state = 'building'", month
    )
    await conn.execute(
        "DELETE FROM archive_chunks WHERE archive_id IN "
        "(SELECT id FROM archives WHERE month = $1 AND state = 'failed')",
        month,
    )
    # Range parts outlive their build only when a run died between its assembly and dropping
    # them; the ranges themselves stay with failed and published rows, for operators.
    for parts in ("archive_parts", "companion_parts", "companion_part_footers"):
        await conn.execute(
            f"DELETE FROM {parts} WHERE archive_id IN "
            "(SELECT id FROM archives WHERE month = $1 AND state <> 'building')",
            month,
        )
    return int(status.split()[-1])


async def months_with_leftovers(conn: Connection) -> list[str]:
    """Months with something ``remove_leftovers`` would delete."""
    rows = await conn.fetch(
        "SELECT DISTINCT month FROM archives a WHERE state = 'building' OR (state = 'failed' "
        "AND EXISTS (SELECT 1 FROM archive_chunks c WHERE c.archive_id = a.id)) "
        "OR EXISTS (SELECT 1 FROM archive_parts p WHERE p.archive_id = a.id) "
        "OR EXISTS (SELECT 1 FROM companion_parts p WHERE p.archive_id = a.id) ORDER BY month"
    )
    return [r["month"] for r in rows]


async def start_building(conn: Connection, month: str, *, reason: str | None = None) -> int:
    """A new ``building`` row of ``month``; ``reason``: why its forced rebuild was asked."""
    archive_id: int = await conn.fetchval(
        "INSERT INTO archives (month, state, rebuild_reason) VALUES ($1, 'building', $2) "
        "RETURNING id",
        month,
        reason,
    )
    return archive_id


async def write_chunks(
    conn: Connection, archive_id: int, first_seq: int, chunks: list[bytes]
) -> None:
    await conn.executemany(
        "INSERT INTO archive_chunks (archive_id, seq, data) VALUES ($1, $2, $3)",
        [(archive_id, first_seq + i, chunk) for i, chunk in enumerate(chunks)],
    )


async def stored_chunks(
    conn: Connection, archive_id: int
) -> AsyncGenerator[tuple[int, bytes], None]:
    """Every stored chunk of ``archive_id`` as ``(seq, data)`` in ``seq`` order, read through a
    cursor in one read-only transaction (close the generator when stopping early)."""
    async with transaction(conn, readonly=True):
        cursor = conn.cursor(
            "SELECT seq, data FROM archive_chunks WHERE archive_id = $1 ORDER BY seq",
            archive_id,
            prefetch=8,
        )
        async for record in cursor:
            yield record["seq"], record["data"]


PublishOutcome = Literal["published", "unchanged", "restored"]


async def publish(
    conn: Connection,
    archive_id: int,
    month: str,
    counts: Counts,
    built: BuiltFile | None,
) -> tuple[PublishOutcome, ArchiveRow]:
    """Make the checked archive (``built``; None for a zero-game month) the month's published
    file, in one transaction.

    - Same file as the one published (or both zero-game): nothing visible changes; the counts
      are refreshed on the published row (an excluded row may have changed without changing a
      byte), the new copy is dropped. Outcome ``unchanged``.
    - A file this month published before and later superseded: that row is published again and
      the new copy dropped (its URL, and its publication time, never changed). Outcome
      ``restored``.
    - Otherwise the new row is published and the previous one superseded. Outcome ``published``.

    The new row's rebuild reason stays with it when it is published; when the build ends on
    another row (``unchanged``, ``restored``), that row records the rebuild and its reason as
    its last one, for operators, and keeps its own reason (see migration 0011).
    """
    file_name = built.file_name if built else None
    async with transaction(conn):
        current = await conn.fetchrow(
            f"SELECT {ROW_COLUMNS} FROM archives "
            f"WHERE month = $1 AND state = 'published' AND {ARCHIVES_ONLY} FOR UPDATE",
            month,
        )
        if current is not None and current["file_name"] == file_name:
            await _record_rebuild(conn, current["id"], archive_id)
            await _drop(conn, archive_id)
            row = await _set_counts(conn, current["id"], counts)
            if _listed_counts(row) != _listed_counts(archive_row(current)):
                # Same bytes, corrected counts (an excluded row changed): the API's manifest
                # must show them at once, like a new file's.
                await conn.execute("SELECT pg_notify($1, $2)", ARCHIVES_CHANNEL, month)
            return "unchanged", row

        if current is not None:
            await conn.execute(
                "UPDATE archives SET state = 'superseded', superseded_at = now() WHERE id = $1",
                current["id"],
            )
        earlier = None
        if file_name is not None:
            earlier = await conn.fetchval(
                "SELECT id FROM archives WHERE file_name = $1 AND state = 'superseded' FOR UPDATE",
                file_name,
            )
        if earlier is not None:
            await _record_rebuild(conn, earlier, archive_id)
            await _drop(conn, archive_id)
            # published_at is now (the month's history reads in order); first_published_at
            # stays the moment these bytes were first published: the file's Last-Modified, as
            # an immutable URL's validator never changes.
            await conn.execute(
                "UPDATE archives SET state = 'published', superseded_at = NULL, "
                "published_at = now() WHERE id = $1",
                earlier,
            )
            row = await _set_counts(conn, earlier, counts)
            outcome: PublishOutcome = "restored"
        else:
            await conn.execute(
                "UPDATE archives SET state = 'published', file_name = $2, sha256 = $3, bytes = $4, "
                "uncompressed_bytes = $5, finished_at = now(), published_at = now(), "
                "first_published_at = now(), error = NULL "
                "WHERE id = $1 AND state = 'building'",
                archive_id,
                file_name,
                built.sha256 if built else None,
                built.bytes if built else 0,
                built.uncompressed_bytes if built else 0,
            )
            row = await _set_counts(conn, archive_id, counts)
            outcome = "published"
        await conn.execute("SELECT pg_notify($1, $2)", ARCHIVES_CHANNEL, month)
        return outcome, row


def _listed_counts(row: ArchiveRow) -> tuple[object, ...]:
    """What the manifest lists of a row's counts."""
    return (
        row.games,
        row.candidate_games,
        row.excluded_games,
        dict(row.exclusions),
        dict(row.results),
    )


async def mark_failed(conn: Connection, archive_id: int, error: str) -> None:
    """Record a failed build (kept for operators) and free its chunks, if the row is still
    ``building``: after a lost connection the caller cannot know whether its publish committed,
    and a published row's chunks must never go."""
    await conn.execute(
        "WITH failed AS (UPDATE archives SET state = 'failed', failed_at = now(), "
        "finished_at = now(), error = $2 WHERE id = $1 AND state = 'building' RETURNING id), "
        "parts AS (DELETE FROM archive_parts WHERE archive_id IN (SELECT id FROM failed)), "
        "cparts AS (DELETE FROM companion_parts "
        "WHERE archive_id IN (SELECT id FROM failed)), "
        "footers AS (DELETE FROM companion_part_footers "
        "WHERE archive_id IN (SELECT id FROM failed)) "
        "DELETE FROM archive_chunks WHERE archive_id IN (SELECT id FROM failed)",
        archive_id,
        error[:2000],
    )


async def record_failure(conn: Connection, month: str, error: str) -> None:
    """Record a failure that happened before any archive row existed (e.g. the source query)."""
    await conn.execute(
        "INSERT INTO archives (month, state, failed_at, finished_at, error) "
        "VALUES ($1, 'failed', now(), now(), $2)",
        month,
        error[:2000],
    )


async def _record_rebuild(conn: Connection, kept_id: int, build_id: int) -> None:
    """The build ``build_id`` ended on the row ``kept_id``: record it there as the row's last
    rebuild, with the build's reason."""
    await conn.execute(
        "UPDATE archives SET last_rebuild_at = now(), last_rebuild_reason = "
        "(SELECT rebuild_reason FROM archives WHERE id = $2) WHERE id = $1",
        kept_id,
        build_id,
    )


async def _drop(conn: Connection, archive_id: int) -> None:
    await conn.execute("DELETE FROM archives WHERE id = $1", archive_id)


async def _set_counts(conn: Connection, archive_id: int, counts: Counts) -> ArchiveRow:
    """The export's counts and statistics on the row it publishes (or leaves published), and
    the time of this good build. Statistics are a function of the file's bytes, so on a row
    kept because the bytes came out the same they only change from NULL (a row published
    before they were counted) to the counts."""
    row = await conn.fetchrow(
        "UPDATE archives SET games = $2, candidate_games = $3, excluded_games = $4, "
        "exclusions = $5, results = $6, stats = $7, built_at = now() "
        f"WHERE id = $1 RETURNING {ROW_COLUMNS}",
        archive_id,
        counts.games,
        counts.candidate_games,
        counts.excluded_games,
        dict(counts.exclusions),
        dict(counts.results),
        None if counts.stats is None else counts.stats.to_json(),
    )
    assert row is not None
    return archive_row(row)
