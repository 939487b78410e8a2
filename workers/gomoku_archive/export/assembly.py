"""The month's assembly: the ranges' parts, in order, become one gzip member in the archive's
256 KiB chunks. The usual header (``GZIP_HEADER``), every part's raw deflate data as it was
stored (the last one ends the deflate stream), and a trailer whose CRC-32 is combined from the
parts' CRCs (``gzip_trailer``). The counts, exclusions, results and statistics are the ranges'
tallies merged in order, with the archive order checked across every boundary.

It scales out: once the parts' lengths are known, every part's place in the file is
(``part_layout``), and the chunks wholly inside a part are copied from its pieces by PostgreSQL
itself (``db.part_copy``), on ``connections`` connections at once, so those bytes never cross a
client and the work spreads over the database server's processes; only the chunks across a
part's edge (with the header and trailer) are put together here from slices. Then every part's
span of the file is read back against its pieces, again in parallel, and the SHA-256 of the
whole file is the one serial pass, over the stored chunks (``digest_stored_bytes``).

Why the coordinator's connections and not the ranges' workers: a chunk's place is known only
once every earlier part's length is, so a range's worker would have to wait for the slowest
earlier range (a range slot held waiting); copied inside PostgreSQL, who sends the statement
does not matter.

A month of one range is a header, one deflate stream and its trailer: exactly the bytes one
``ArchiveStream`` gives for the same lines."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from gomoku_archive.db import archive_store, part_copy, range_store
from gomoku_archive.db.archive_store import BuiltFile, Counts
from gomoku_archive.db.pool import Connection, Pool
from gomoku_archive.db.range_store import RangeRow
from gomoku_archive.errors import IntegrityError
from gomoku_archive.export.part_layout import (
    EdgeChunk,
    FileLayout,
    InteriorCopy,
    PartSlice,
    PlacedPart,
)
from gomoku_archive.export.tally import Tally
from gomoku_archive.logs import get_logger
from gomoku_archive.profile.deflate_parts import gzip_trailer
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.names import archive_file_name
from gomoku_archive.profile.stream import GZIP_HEADER
from gomoku_archive.profile.writer import ALL_REASONS, ALL_TERMINATIONS
from gomoku_archive.storage.chunks import CHUNK_SIZE, digest_stored_bytes

log = get_logger(__name__)

ASSEMBLY_CONNECTIONS = 4
"""Connections that copy and check at once (taken from the pool beside the lock's)."""
_CHUNKS_PER_COPY = 64
"""16 MiB per copying statement: a one-range month still spreads over every connection."""
_EDGE_CHUNKS_PER_QUERY = 8
"""2 MiB of slices per round trip for the chunks across edges."""

Step = Callable[[Connection], Awaitable[None]]


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
    """The parts' checks, the copies and the chunks across edges, and every part's span read
    back, each spread over ``connections`` connections of ``pool``; then the SHA-256 pass on
    ``conn`` (the month's lock holder). Raises IntegrityError when a part or a stored chunk is
    not what it should be."""
    started = time.monotonic()
    layout = FileLayout(
        GZIP_HEADER,
        [(r.seq, r.attempt, r.deflate_bytes or 0) for r in ranges],
        gzip_trailer([(r.crc32 or 0, r.raw_bytes or 0) for r in ranges]),
    )
    await _in_parallel(pool, connections, (_part_check(archive_id, month, p) for p in layout.parts))
    await _in_parallel(pool, connections, _copies(archive_id, month, layout))
    copied = time.monotonic()
    await _in_parallel(pool, connections, (_span_check(archive_id, month, p) for p in layout.parts))
    checked = time.monotonic()
    sha256 = await digest_stored_bytes(
        conn, archive_id, size=layout.size, head=layout.header, tail=layout.trailer
    )
    written = WrittenFile(
        BuiltFile(
            sha256=sha256,
            bytes=layout.size,
            uncompressed_bytes=sum(r.raw_bytes or 0 for r in ranges),
            file_name=archive_file_name(month, sha256),
        ),
        copy_seconds=copied - started,
        check_seconds=checked - copied,
        sha256_seconds=time.monotonic() - checked,
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


async def _in_parallel(pool: Pool, connections: int, steps: Iterable[Step]) -> None:
    """Run every step, each on one of ``connections`` pool connections; the first failure
    cancels the rest and is raised."""
    pending = iter(steps)

    async def lane() -> None:
        async with pool.acquire() as conn:
            for step in pending:
                await step(conn)

    lanes = [asyncio.create_task(lane()) for _ in range(max(1, connections))]
    try:
        await asyncio.gather(*lanes)
    except BaseException:
        for task in lanes:
            task.cancel()
        await asyncio.gather(*lanes, return_exceptions=True)
        raise


def _part_check(archive_id: int, month: Month, part: PlacedPart) -> Step:
    """The part's pieces hold what its range recorded: every piece full but the last, and
    ``length`` bytes in all."""

    async def step(conn: Connection) -> None:
        found = await part_copy.part_pieces_summary(
            conn, archive_id, part.range_seq, part.attempt, CHUNK_SIZE
        )
        pieces = -(-part.length // CHUNK_SIZE)
        if (
            found.bytes != part.length
            or found.pieces != pieces
            or found.last_seq != pieces - 1
            or found.short > (1 if part.length % CHUNK_SIZE else 0)
        ):
            raise IntegrityError(
                f"{month}: range {part.range_seq}'s part holds {found.bytes} bytes in "
                f"{found.pieces} pieces, its range recorded {part.length}"
            )

    return step


def _copies(archive_id: int, month: Month, layout: FileLayout) -> Iterable[Step]:
    for copy in layout.interior_copies(batch=_CHUNKS_PER_COPY):

        async def interior(conn: Connection, copy: InteriorCopy = copy) -> None:
            part = copy.part
            written = await part_copy.copy_part_chunks(
                conn,
                archive_id,
                part.range_seq,
                part.attempt,
                first_chunk=copy.first_chunk,
                count=copy.count,
                first_piece=copy.first_piece,
                split=copy.split,
            )
            if written != copy.count:
                raise IntegrityError(
                    f"{month}: range {part.range_seq}'s part gave {written} of the "
                    f"{copy.count} chunks from {copy.first_chunk}"
                )

        yield interior
    edges = list(layout.edge_chunks())
    for first in range(0, len(edges), _EDGE_CHUNKS_PER_QUERY):
        batch = edges[first : first + _EDGE_CHUNKS_PER_QUERY]

        async def edge(conn: Connection, batch: list[EdgeChunk] = batch) -> None:
            await _write_edges(conn, archive_id, month, batch)

        yield edge


async def _write_edges(
    conn: Connection, archive_id: int, month: Month, chunks: list[EdgeChunk]
) -> None:
    """Put the chunks across edges together from their slices (one query) and write them."""
    wanted = [
        (s.range_seq, s.attempt, s.piece, s.start, s.length)
        for chunk in chunks
        for s in chunk.sources
        if isinstance(s, PartSlice)
    ]
    found = iter(await part_copy.part_slices(conn, archive_id, wanted) if wanted else [])
    for chunk in chunks:
        data = bytearray()
        for source in chunk.sources:
            data += source if isinstance(source, bytes) else next(found) or b""
        if len(data) != chunk.length:
            raise IntegrityError(
                f"{month}: chunk {chunk.seq} came to {len(data)} bytes, expected {chunk.length}"
            )
        await archive_store.write_chunks(conn, archive_id, chunk.seq, [bytes(data)])


def _span_check(archive_id: int, month: Month, part: PlacedPart) -> Step:
    """Read the part's span of the file back from the stored chunks against its pieces."""

    async def step(conn: Connection) -> None:
        first_chunk, split = divmod(part.offset, CHUNK_SIZE)
        wrong = await part_copy.part_span_mismatches(
            conn,
            archive_id,
            part.range_seq,
            part.attempt,
            first_chunk=first_chunk,
            split=split,
            chunk_size=CHUNK_SIZE,
        )
        if wrong:
            raise IntegrityError(
                f"{month}: {wrong} pieces of range {part.range_seq}'s part differ from the "
                "stored chunks"
            )

    return step
