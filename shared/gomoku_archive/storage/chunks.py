"""Archives stored in PostgreSQL as 256 KiB chunks: the export's writer and its read-back
check, and the reader of a byte span, a few chunks per query, behind downloads, the S3 mirror
and tests.

A pool connection is held for one query only, never while bytes wait for a slow client: a
multi-gigabyte download at modem speed would otherwise keep a connection for hours and a handful
of such downloads would starve the pool. Between queries nothing can change under the reader:
chunks of a published or superseded archive are immutable, so the only possible surprise is
chunks that are gone, which the reader reports as an integrity failure rather than a short file.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from gomoku_archive.db import archive_store
from gomoku_archive.db.pool import Connection, Pool
from gomoku_archive.errors import IntegrityError

CHUNK_SIZE = 262_144
"""Archive bytes are stored (and served) in chunks of exactly 256 KiB; the last may be shorter."""
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

    def view(self, seq: int, data: bytes) -> memoryview:
        """The part of chunk ``seq`` inside the span, without copying."""
        base = seq * self.chunk_size
        return memoryview(data)[max(self.start - base, 0) : min(self.end - base, len(data))]


class ChunkReader:
    """Yields the span's views in order, ``batch`` chunks per query."""

    def __init__(
        self, pool: Pool, archive_id: int, span: ChunkSpan, *, batch: int = CHUNKS_PER_QUERY
    ) -> None:
        self._pool = pool
        self._archive_id = archive_id
        self._span = span
        self._batch = batch
        self._next_seq = span.first_seq if span.end > span.start else span.last_seq + 1

    async def next_batch(self) -> list[memoryview] | None:
        """The next views, or None when the span is done. Raises ``ChunkReadError``."""
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
        views = []
        for seq, data in enumerate(chunks, start=first):
            if len(data) != span.expected_length(seq):
                raise ChunkReadError(
                    f"archive {self._archive_id}: chunk {seq} holds {len(data)} bytes, "
                    f"expected {span.expected_length(seq)}",
                    database=False,
                )
            views.append(span.view(seq, data))
        self._next_seq = first + count
        return views


async def iter_archive(
    pool: Pool, archive_id: int, size: int, *, start: int = 0, end: int | None = None
) -> AsyncIterator[memoryview]:
    """Bytes ``[start, end)`` of a stored archive of ``size`` bytes, in order, a batch of
    chunks per query. Raises ``ChunkReadError``."""
    reader = ChunkReader(pool, archive_id, ChunkSpan(size, start, size if end is None else end))
    while (batch := await reader.next_batch()) is not None:
        for view in batch:
            yield view


# --- the write side (the export) ---------------------------------------------------------

_CHUNKS_PER_WRITE = 4
"""Chunks buffered before one INSERT round trip: 1 MiB of compressed bytes."""


class SegmentWriter:
    """Cuts a stream of bytes into segments of ``CHUNK_SIZE`` (the last one shorter) and hands
    them to ``write(first_seq, segments)`` a few at a time: the archive's chunks, and a range's
    part before its assembly."""

    def __init__(self, write: Callable[[int, list[bytes]], Awaitable[None]]) -> None:
        self._write = write
        self._pending = bytearray()
        self._seq = 0

    async def add(self, data: bytes) -> None:
        self._pending += data
        if len(self._pending) >= _CHUNKS_PER_WRITE * CHUNK_SIZE:
            await self.flush(final=False)

    async def flush(self, *, final: bool) -> None:
        pending = self._pending
        whole = len(pending) if final else len(pending) - len(pending) % CHUNK_SIZE
        chunks = [bytes(pending[i : i + CHUNK_SIZE]) for i in range(0, whole, CHUNK_SIZE)]
        if chunks:
            await self._write(self._seq, chunks)
            self._seq += len(chunks)
            del pending[:whole]


def chunk_writer(conn: Connection, archive_id: int) -> SegmentWriter:
    """The writer of an archive's chunks."""

    async def write(first_seq: int, chunks: list[bytes]) -> None:
        await archive_store.write_chunks(conn, archive_id, first_seq, chunks)

    return SegmentWriter(write)


async def check_stored_bytes(conn: Connection, archive_id: int, *, sha256: str, size: int) -> None:
    """Read every stored chunk back and compare size, chunk layout and SHA-256 with what the
    writer computed; raise IntegrityError on any difference."""
    digest = hashlib.sha256()
    total = 0
    expected_seq = 0
    last_len = CHUNK_SIZE
    async with contextlib.aclosing(archive_store.stored_chunks(conn, archive_id)) as chunks:
        async for seq, data in chunks:
            if seq != expected_seq:
                raise IntegrityError(f"archive {archive_id}: chunk {expected_seq} is missing")
            if last_len != CHUNK_SIZE:
                raise IntegrityError(f"archive {archive_id}: a short chunk before the last one")
            last_len = len(data)
            digest.update(data)
            total += last_len
            expected_seq += 1
    if total != size or digest.hexdigest() != sha256:
        raise IntegrityError(
            f"archive {archive_id}: stored {total} bytes with sha256 {digest.hexdigest()}, "
            f"expected {size} bytes with sha256 {sha256}"
        )


async def digest_stored_bytes(
    conn: Connection, archive_id: int, *, size: int, head: bytes, tail: bytes
) -> str:
    """Stream every stored chunk in order and return the file's SHA-256: the one serial pass
    over an archive written by several connections at once. Checks the layout on the way (no
    chunk missing, all full but the last, ``size`` bytes in all) and that the file starts with
    ``head`` and ends with ``tail`` (the header and trailer no part's check covers); raises
    IntegrityError otherwise."""
    digest = hashlib.sha256()
    total = 0
    expected_seq = 0
    last = b""
    ending = b""
    async with contextlib.aclosing(archive_store.stored_chunks(conn, archive_id)) as chunks:
        async for seq, data in chunks:
            if seq != expected_seq:
                raise IntegrityError(f"archive {archive_id}: chunk {expected_seq} is missing")
            if expected_seq == 0 and data[: len(head)] != head:
                raise IntegrityError(f"archive {archive_id}: the file does not start as written")
            if len(last) not in (0, CHUNK_SIZE):
                raise IntegrityError(f"archive {archive_id}: a short chunk before the last one")
            digest.update(data)
            total += len(data)
            expected_seq += 1
            last = data
            ending = (ending + data[-len(tail) :])[-len(tail) :] if tail else b""
    if total != size:
        raise IntegrityError(f"archive {archive_id}: stored {total} bytes, expected {size}")
    if ending != tail:
        raise IntegrityError(f"archive {archive_id}: the file does not end as written")
    return digest.hexdigest()
