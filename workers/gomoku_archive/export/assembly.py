"""The month's assembly: the ranges' parts, in order, become one gzip member in the archive's
256 KiB chunks. The usual header (``GZIP_HEADER``), every part's raw deflate data as it was
stored (the last one ends the deflate stream), and a trailer whose CRC-32 is combined from the
parts' CRCs (``gzip_trailer``). The counts, exclusions, results and statistics are the ranges'
tallies merged in order, with the archive order checked across every boundary.

It scales out (``export.joined_file``): the chunks wholly inside a part are copied from its
segments by PostgreSQL itself on several connections at once, only the chunks across a part's
edge are put together here, every part's span is read back against its segments, and the
SHA-256 of the whole file is the one serial pass.

Why the coordinator's connections and not the ranges' workers: a chunk's place is known only
once every earlier part's length is, so a range's worker would have to wait for the slowest
earlier range (a range slot held waiting); copied inside PostgreSQL, who sends the statement
does not matter.

A month of one range is a header, one deflate stream and its trailer: exactly the bytes one
``ArchiveStream`` gives for the same lines."""

from __future__ import annotations

from dataclasses import dataclass

from gomoku_archive.db import range_store
from gomoku_archive.db.archive_store import BuiltFile, Counts
from gomoku_archive.db.part_copy import archive_parts
from gomoku_archive.db.pool import Connection, Pool
from gomoku_archive.db.range_store import RangeRow
from gomoku_archive.errors import IntegrityError
from gomoku_archive.export.joined_file import write_joined
from gomoku_archive.export.part_layout import FileLayout
from gomoku_archive.export.tally import Tally
from gomoku_archive.logs import get_logger
from gomoku_archive.profile.deflate_parts import gzip_trailer
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.names import archive_file_name
from gomoku_archive.profile.stream import GZIP_HEADER
from gomoku_archive.profile.vocabulary import ALL_REASONS, ALL_TERMINATIONS

log = get_logger(__name__)

ASSEMBLY_CONNECTIONS = 4
"""Connections that copy and check at once (taken from the pool beside the lock's)."""


def merged_counts(month: Month, ranges: list[RangeRow]) -> Counts:
    """The month's counts from its done ranges, in order. Raises ``ExportFailed`` when a range
    does not start after the previous one ended (rows out of archive order)."""
    tally = Tally(str(month))
    for row in ranges:
        if row.state != "done" or row.tally is None:
            raise IntegrityError(f"{month}: range {row.seq} is {row.state}, not done")
        tally.extend(Tally.from_json(str(month), row.tally))
    return Counts(
        games=tally.games,
        candidate_games=tally.candidates,
        excluded_games=tally.excluded,
        exclusions={r: tally.exclusions[r] for r in ALL_REASONS},
        results={t: tally.results[t] for t in ALL_TERMINATIONS},
        stats=tally.stats.result(),
    )


async def assemble(
    pool: Pool,
    conn: Connection,
    archive_id: int,
    month: Month,
    ranges: list[RangeRow],
    *,
    connections: int = ASSEMBLY_CONNECTIONS,
) -> tuple[Counts, BuiltFile | None]:
    """Write the month's file from its done ranges into the archive's chunks (``write_file``)
    and drop the parts; None for a month without games (no file, nothing written)."""
    counts = merged_counts(month, ranges)
    if counts.games == 0:
        await range_store.drop_parts(conn, archive_id)
        return counts, None
    written = await write_file(pool, conn, archive_id, month, ranges, connections=connections)
    await range_store.drop_parts(conn, archive_id)
    return counts, written.built


@dataclass(frozen=True, slots=True)
class WrittenFile:
    """The file as written, and how long each step took."""

    built: BuiltFile
    copy_seconds: float
    check_seconds: float
    sha256_seconds: float

    @property
    def seconds(self) -> float:
        return self.copy_seconds + self.check_seconds + self.sha256_seconds


async def write_file(
    pool: Pool,
    conn: Connection,
    archive_id: int,
    month: Month,
    ranges: list[RangeRow],
    *,
    connections: int = ASSEMBLY_CONNECTIONS,
) -> WrittenFile:
    """The file of the parts (``joined_file.write_joined``), the SHA-256 pass on ``conn``
    (the month's lock holder). Raises IntegrityError when a part or a stored chunk is not what
    it should be."""
    layout = FileLayout(
        GZIP_HEADER,
        [(r.seq, r.attempt, r.deflate_bytes or 0) for r in ranges],
        gzip_trailer([(r.crc32 or 0, r.raw_bytes or 0) for r in ranges]),
    )
    joined = await write_joined(
        pool, conn, archive_parts(archive_id), layout, what=str(month), connections=connections
    )
    written = WrittenFile(
        BuiltFile(
            sha256=joined.sha256,
            bytes=joined.size,
            uncompressed_bytes=sum(r.raw_bytes or 0 for r in ranges),
            file_name=archive_file_name(month, joined.sha256),
        ),
        copy_seconds=joined.copy_seconds,
        check_seconds=joined.check_seconds,
        sha256_seconds=joined.sha256_seconds,
    )
    log.info(
        "export_assembled",
        month=str(month),
        ranges=len(ranges),
        bytes=layout.size,
        connections=connections,
        seconds=round(written.seconds, 3),
        bytes_per_second=_rate(layout.size, written.seconds),
        copy_seconds=round(written.copy_seconds, 3),
        check_seconds=round(written.check_seconds, 3),
        sha256_seconds=round(written.sha256_seconds, 3),
        sha256_bytes_per_second=_rate(layout.size, written.sha256_seconds),
    )
    return written


def _rate(size: int, seconds: float) -> int | None:
    return round(size / seconds) if seconds > 0 else None
