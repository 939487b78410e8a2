"""Reading a byte span of a stored archive from its 256 KiB chunks in PostgreSQL, a few chunks
per query: the one reader behind downloads, the S3 mirror and tests.

A pool connection is held for one query only, never while bytes wait for a slow client: a
multi-gigabyte download at modem speed would otherwise keep a connection for hours and a handful
of such downloads would starve the pool. Between queries nothing can change under the reader:
chunks of a published or superseded archive are immutable, so the only possible surprise is
chunks that are gone, which the reader reports as an integrity failure rather than a short file.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from shared.archive.names import CHUNK_SIZE
from shared.db import archive_store
from shared.db.pool import Pool

CHUNKS_PER_QUERY = 4
"""1 MiB per round trip: the most a download holds in memory at once (plus the socket's
buffer), and few enough queries that a 10 GiB file costs ~10,000 of them."""


class ChunkReadError(Exception):
    """The archive's bytes could not be read; ``database`` tells a database failure (transient)
    from missing or mis-sized chunks (an integrity failure)."""

    def __init__(self, message: str, *, database: bool) -> None:
        super().__init__(message)
        self.database = database


@dataclass(frozen=True, slots=True)
class ChunkSpan:
    """The chunks that hold bytes ``[start, end)`` of a file of ``size`` bytes."""

    size: int
    start: int
    end: int
    chunk_size: int = CHUNK_SIZE

    @property
    def first_seq(self) -> int:
        return self.start // self.chunk_size

    @property
    def last_seq(self) -> int:
        return (self.end - 1) // self.chunk_size

    def expected_length(self, seq: int) -> int:
        """Every chunk is full but the file's last one."""
        return min(self.chunk_size, self.size - seq * self.chunk_size)

    def piece(self, seq: int, data: bytes) -> memoryview:
        """The part of chunk ``seq`` inside the span, without copying."""
        base = seq * self.chunk_size
        return memoryview(data)[max(self.start - base, 0) : min(self.end - base, len(data))]


class ChunkReader:
    """Yields the span's pieces in order, ``batch`` chunks per query."""

    def __init__(
        self, pool: Pool, archive_id: int, span: ChunkSpan, *, batch: int = CHUNKS_PER_QUERY
    ) -> None:
        self._pool = pool
        self._archive_id = archive_id
        self._span = span
        self._batch = batch
        self._next_seq = span.first_seq if span.end > span.start else span.last_seq + 1

    async def next_batch(self) -> list[memoryview] | None:
        """The next pieces, or None when the span is done. Raises ``ChunkReadError``."""
        span = self._span
        if self._next_seq > span.last_seq:
            return None
        first = self._next_seq
        count = min(self._batch, span.last_seq - first + 1)
        try:
            async with self._pool.acquire() as conn:
                chunks = await archive_store.read_chunks(conn, self._archive_id, first, count)
        except Exception as exc:  # asyncpg, OSError, pool timeouts: all mean "cannot read now"
            raise ChunkReadError(f"{type(exc).__name__}: {exc}", database=True) from exc
        if len(chunks) != count:
            raise ChunkReadError(
                f"archive {self._archive_id}: chunks {first}..{first + count - 1} requested, "
                f"{len(chunks)} found",
                database=False,
            )
        pieces = []
        for seq, data in enumerate(chunks, start=first):
            if len(data) != span.expected_length(seq):
                raise ChunkReadError(
                    f"archive {self._archive_id}: chunk {seq} holds {len(data)} bytes, "
                    f"expected {span.expected_length(seq)}",
                    database=False,
                )
            pieces.append(span.piece(seq, data))
        self._next_seq = first + count
        return pieces


async def iter_archive(
    pool: Pool, archive_id: int, size: int, *, start: int = 0, end: int | None = None
) -> AsyncIterator[memoryview]:
    """Bytes ``[start, end)`` of a stored archive of ``size`` bytes, in order, a batch of
    chunks per query. Raises ``ChunkReadError``."""
    reader = ChunkReader(pool, archive_id, ChunkSpan(size, start, size if end is None else end))
    while (batch := await reader.next_batch()) is not None:
        for piece in batch:
            yield piece
