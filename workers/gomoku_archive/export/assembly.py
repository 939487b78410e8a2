"""The month's assembly: the ranges' parts, in order, become one gzip member in the archive's
256 KiB chunks. The usual header (``GZIP_HEADER``), every part's raw deflate data as it was
stored (the last one ends the deflate stream), and a trailer whose CRC-32 is combined from the
parts' CRCs (``gzip_trailer``); hashed once as it is written, read back and checked, and the
parts dropped. The counts, exclusions, results and statistics are the ranges' tallies merged in
order, with the archive order checked across every boundary.

A month of one range is a header, one deflate stream and its trailer: exactly the bytes one
``ArchiveStream`` gives for the same lines."""

from __future__ import annotations

import hashlib
import time

from gomoku_archive.db import range_store
from gomoku_archive.db.archive_store import BuiltFile, Counts
from gomoku_archive.db.pool import Connection
from gomoku_archive.db.range_store import RangeRow
from gomoku_archive.errors import IntegrityError
from gomoku_archive.export.tally import Tally
from gomoku_archive.logs import get_logger
from gomoku_archive.profile.deflate_parts import gzip_trailer
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.names import archive_file_name
from gomoku_archive.profile.stream import GZIP_HEADER
from gomoku_archive.profile.writer import ALL_REASONS, ALL_TERMINATIONS
from gomoku_archive.storage.chunks import check_stored_bytes, chunk_writer

log = get_logger(__name__)

_PIECES_PER_READ = 4
"""1 MiB of a part per query."""


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
    conn: Connection, archive_id: int, month: Month, ranges: list[RangeRow]
) -> tuple[Counts, BuiltFile | None]:
    """Write the month's file from its done ranges into the archive's chunks on ``conn`` (the
    month's lock holder); None for a month without games (no file, nothing written)."""
    counts = merged_counts(month, ranges)
    if counts.games == 0:
        await range_store.drop_parts(conn, archive_id)
        return counts, None
    started = time.monotonic()
    chunks = chunk_writer(conn, archive_id)
    digest = hashlib.sha256()
    size = 0

    async def emit(data: bytes) -> None:
        nonlocal size
        digest.update(data)
        size += len(data)
        await chunks.add(data)

    await emit(GZIP_HEADER)
    for row in ranges:
        assert row.deflate_bytes is not None
        read = 0
        seq = 0
        while read < row.deflate_bytes:
            pieces = await range_store.part_pieces(
                conn, archive_id, row.seq, row.attempt, seq, _PIECES_PER_READ
            )
            if not pieces:
                break
            for piece in pieces:
                await emit(piece)
                read += len(piece)
            seq += len(pieces)
        if read != row.deflate_bytes:
            raise IntegrityError(
                f"{month}: range {row.seq}'s part holds {read} bytes, "
                f"its range recorded {row.deflate_bytes}"
            )
    await emit(gzip_trailer([(r.crc32 or 0, r.raw_bytes or 0) for r in ranges]))
    await chunks.flush(final=True)
    sha256 = digest.hexdigest()
    await check_stored_bytes(conn, archive_id, sha256=sha256, size=size)
    await range_store.drop_parts(conn, archive_id)
    seconds = time.monotonic() - started
    log.info(
        "export_assembled",
        month=str(month),
        ranges=len(ranges),
        bytes=size,
        seconds=round(seconds, 3),
        bytes_per_second=round(size / seconds) if seconds > 0 else None,
    )
    built = BuiltFile(
        sha256=sha256,
        bytes=size,
        uncompressed_bytes=sum(r.raw_bytes or 0 for r in ranges),
        file_name=archive_file_name(month, sha256),
    )
    return counts, built
