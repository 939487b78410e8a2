"""A file made of a build's parts, written into its chunks the way that scales out: once the
parts' lengths are known, every part's place in the file is (``part_layout``), and the chunks
wholly inside a part are copied from its segments by PostgreSQL itself (``db.part_copy``), on
``connections`` connections at once, so those bytes never cross a client and the work spreads
over the database server's processes; only the chunks across a part's edge (with the header and
trailer) are put together here from slices. Then every part's span of the file is read back
against its segments, again in parallel, and the SHA-256 of the whole file is the one serial pass,
over the stored chunks (``digest_stored_bytes``).

Two files are made so: the archive (``export.assembly``: a gzip header, the ranges' deflate
parts, the gzip trailer) and its Parquet companion (``export.companion.build``: ``PAR1``, the
ranges' row groups, the joined footer), side by side.

Why the coordinator's connections and not the range jobs: a chunk's place is known only once
every earlier part's length is, so a range job would have to wait for the slowest earlier range
(a job slot held waiting); copied inside PostgreSQL, who sends the statement does not matter."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from gomoku_archive.db import archive_store, part_copy
from gomoku_archive.db.part_copy import Parts
from gomoku_archive.db.pool import Connection, Pool
from gomoku_archive.errors import IntegrityError
from gomoku_archive.export.lanes import in_lanes
from gomoku_archive.export.part_layout import (
    EdgeChunk,
    FileLayout,
    InteriorCopy,
    PartSlice,
    PlacedPart,
)
from gomoku_archive.storage.chunks import CHUNK_SIZE, digest_stored_bytes

_CHUNKS_PER_COPY = 64
"""16 MiB per copying statement: a one-range month still spreads over every connection."""
_EDGE_CHUNKS_PER_QUERY = 8
"""2 MiB of slices per round trip for the chunks across edges."""

Step = Callable[[Connection], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class JoinedFile:
    """The file as written and checked, and how long each step took."""

    sha256: str
    size: int
    copy_seconds: float
    check_seconds: float
    sha256_seconds: float

    @property
    def seconds(self) -> float:
        return self.copy_seconds + self.check_seconds + self.sha256_seconds


async def write_joined(
    pool: Pool,
    conn: Connection,
    parts: Parts,
    layout: FileLayout,
    *,
    what: str,
    connections: int,
) -> JoinedFile:
    """The parts' checks, the copies and the chunks across edges, and every part's span read
    back, each spread over ``conn`` and up to ``connections - 1`` connections of ``pool`` (which
    may have none to give: then ``conn`` does all); then the SHA-256 pass on ``conn``. Raises
    IntegrityError (its message starting with ``what``) when a part or a stored chunk is not
    what it should be."""
    started = time.monotonic()
    await _in_parallel(pool, conn, connections, (_part_check(parts, what, p) for p in layout.parts))
    await _in_parallel(pool, conn, connections, _copies(parts, what, layout))
    copied = time.monotonic()
    await _in_parallel(pool, conn, connections, (_span_check(parts, what, p) for p in layout.parts))
    checked = time.monotonic()
    sha256 = await digest_stored_bytes(
        conn, parts.file_id, size=layout.size, head=layout.header, tail=layout.trailer
    )
    return JoinedFile(
        sha256,
        layout.size,
        copy_seconds=copied - started,
        check_seconds=checked - copied,
        sha256_seconds=time.monotonic() - checked,
    )


async def _in_parallel(
    pool: Pool, conn: Connection, connections: int, steps: Iterable[Step]
) -> None:
    """Run every step on ``conn`` and on up to ``connections - 1`` more of ``pool``
    (``lanes.in_lanes``: no more than there are steps, and ``conn`` takes those no pool
    connection comes for); the first failure cancels the rest and is raised."""
    await in_lanes(conn, pool, list(steps), lanes=connections)


def _part_check(parts: Parts, what: str, part: PlacedPart) -> Step:
    """The part's segments hold what its range recorded: every segment full but the last, and
    ``length`` bytes in all."""

    async def step(conn: Connection) -> None:
        found = await part_copy.part_segments_summary(
            conn, parts, part.range_seq, part.attempt, CHUNK_SIZE
        )
        segments = -(-part.length // CHUNK_SIZE)
        if (
            found.bytes != part.length
            or found.segments != segments
            or found.last_seq != segments - 1
            or found.short > (1 if part.length % CHUNK_SIZE else 0)
        ):
            raise IntegrityError(
                f"{what}: range {part.range_seq}'s part holds {found.bytes} bytes in "
                f"{found.segments} segments, its range recorded {part.length}"
            )

    return step


def _copies(parts: Parts, what: str, layout: FileLayout) -> Iterable[Step]:
    for copy in layout.interior_copies(batch=_CHUNKS_PER_COPY):

        async def interior(conn: Connection, copy: InteriorCopy = copy) -> None:
            part = copy.part
            written = await part_copy.copy_part_chunks(
                conn,
                parts,
                part.range_seq,
                part.attempt,
                first_chunk=copy.first_chunk,
                count=copy.count,
                first_segment=copy.first_segment,
                split=copy.split,
            )
            if written != copy.count:
                raise IntegrityError(
                    f"{what}: range {part.range_seq}'s part gave {written} of the "
                    f"{copy.count} chunks from {copy.first_chunk}"
                )

        yield interior
    edges = list(layout.edge_chunks())
    for first in range(0, len(edges), _EDGE_CHUNKS_PER_QUERY):
        batch = edges[first : first + _EDGE_CHUNKS_PER_QUERY]

        async def edge(conn: Connection, batch: list[EdgeChunk] = batch) -> None:
            await _write_edges(conn, parts, what, batch)

        yield edge


async def _write_edges(conn: Connection, parts: Parts, what: str, chunks: list[EdgeChunk]) -> None:
    """Put the chunks across edges together from their slices (one query) and write them."""
    wanted = [
        (s.range_seq, s.attempt, s.segment, s.start, s.length)
        for chunk in chunks
        for s in chunk.sources
        if isinstance(s, PartSlice)
    ]
    found = iter(await part_copy.part_slices(conn, parts, wanted) if wanted else [])
    for chunk in chunks:
        data = bytearray()
        for source in chunk.sources:
            data += source if isinstance(source, bytes) else next(found) or b""
        if len(data) != chunk.length:
            raise IntegrityError(
                f"{what}: chunk {chunk.seq} came to {len(data)} bytes, expected {chunk.length}"
            )
        await archive_store.write_chunks(conn, parts.file_id, chunk.seq, [bytes(data)])


def _span_check(parts: Parts, what: str, part: PlacedPart) -> Step:
    """Read the part's span of the file back from the stored chunks against its segments."""

    async def step(conn: Connection) -> None:
        first_chunk, split = divmod(part.offset, CHUNK_SIZE)
        wrong = await part_copy.part_span_mismatches(
            conn,
            parts,
            part.range_seq,
            part.attempt,
            first_chunk=first_chunk,
            split=split,
            chunk_size=CHUNK_SIZE,
        )
        if wrong:
            raise IntegrityError(
                f"{what}: {wrong} segments of range {part.range_seq}'s part differ from the "
                "stored chunks"
            )

    return step
