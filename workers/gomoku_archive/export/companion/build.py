"""A companion stored beside its archive: its file written into the archive chunks of a new
``building`` row (``companion_of`` its archive), hashed as it is written, read back, and
recorded; it is published with its archive (``companion_store.follow_archives``).

Two sources, one row definition (``companion.lines``), so one file for the same games:

- ``from_ranges``, the month's build: the ranges' parts (their rows, made in parallel by
  whichever process ran each range) in range order, after the coordinator has them all and
  while the assembly writes the archive (the serial step here is pyarrow's encoding);
- ``from_archive``, a month published before companions (``build_companion``): the stored
  ``.sgf.gz`` decompressed line by line.

pyarrow's encoding runs in a thread (it releases the GIL), so the event loop writes one row
group's bytes while the next is encoded; memory holds one range's part and one row group."""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
import zlib
from collections import deque
from collections.abc import AsyncIterator, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pyarrow as pa

from gomoku_archive.companion.footer import Joiner
from gomoku_archive.companion.lines import text_columns
from gomoku_archive.companion.names import companion_file_name
from gomoku_archive.companion.schema import SCHEMA_ID
from gomoku_archive.db import companion_store
from gomoku_archive.db.archive_store import ArchiveRow
from gomoku_archive.db.companion_store import BuiltCompanion
from gomoku_archive.db.pool import Connection, Pool
from gomoku_archive.db.range_store import RangeRow
from gomoku_archive.errors import IntegrityError
from gomoku_archive.export.companion.columns import part_batch
from gomoku_archive.export.companion.file_writer import CREATED_BY, RowGroups, encode_group
from gomoku_archive.export.companion.parts import read_part
from gomoku_archive.logs import get_logger
from gomoku_archive.profile.months import Month
from gomoku_archive.storage.chunks import check_stored_bytes, chunk_writer, iter_archive

log = get_logger(__name__)

ARCHIVE_LINES_PER_BATCH = 4096
"""Lines of a stored archive made into rows at once (the backfill)."""
ENCODING_THREADS = max(1, min(2, os.cpu_count() or 1))
"""Row groups encoded at once (pyarrow releases the GIL while it encodes): the cores, up to 2.
Each takes about 100 MB of pyarrow's memory at its peak for a group of 65,536 rows (measured:
a 10.7 MB part's group), which the worker's memory limit has to hold beside the rest."""
_CLEANUP_SECONDS = 10.0
"""Bound on dropping what a failed build left (a database that hangs must not hold the error
back; the month's next run sweeps it then)."""


@dataclass(frozen=True, slots=True)
class StoredCompanion:
    """A companion written and checked, still ``building`` until its archive publishes it."""

    companion_id: int | None
    """Its row; None when a served row holds these very bytes already (the same games'
    companion from an earlier build: that row is given to the archive, ``give_to``)."""
    built: BuiltCompanion
    encode_seconds: float
    """CPU time the encoding threads took together."""
    seconds: float


class _FileWriter:
    """The companion's bytes into its chunks, hashed on the way: rows cut into groups, each
    group encoded in a thread of a small pool (at most ``threads`` at once, one more waiting),
    the encoded groups joined in order."""

    def __init__(self, conn: Connection, companion_id: int, *, threads: int) -> None:
        self.conn = conn
        self.companion_id = companion_id
        self._threads = threads
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="companion")
        self._groups = RowGroups()
        self._joiner = Joiner()
        self._pending: deque[asyncio.Future[tuple[bytes, float]]] = deque()
        self._pieces = chunk_writer(conn, companion_id)
        self._digest = hashlib.sha256()
        self.size = 0
        self.encode_seconds = 0.0
        """Time the encoding threads were busy, together."""

    def close(self) -> None:
        for future in self._pending:
            future.cancel()
        self._pool.shutdown(wait=True, cancel_futures=True)

    async def add(self, batches: Iterable[pa.RecordBatch]) -> None:
        for batch in batches:
            for group in self._groups.add(batch):
                await self._submit(group)

    async def _submit(self, group: pa.Table) -> None:
        loop = asyncio.get_running_loop()
        self._pending.append(loop.run_in_executor(self._pool, self._encode, group))
        while len(self._pending) > self._threads:
            await self._write_next()

    @staticmethod
    def _encode(group: pa.Table) -> tuple[bytes, float]:
        """The group's one-group file, and the thread's CPU time for it."""
        started = time.thread_time()
        data = encode_group(group)
        return data, time.thread_time() - started

    async def _write_next(self) -> None:
        data, seconds = await self._pending.popleft()
        self.encode_seconds += seconds
        await self._write(self._joiner.add(data))

    async def _write(self, data: bytes) -> None:
        self._digest.update(data)
        self.size += len(data)
        await self._pieces.add(data)

    async def finish(self, month: Month, rows: int) -> tuple[BuiltCompanion, bool]:
        """The companion's record, and whether it was recorded on its row (else an earlier
        row holds the same bytes, and this one is dropped)."""
        for group in self._groups.finish():
            await self._submit(group)
        while self._pending:
            await self._write_next()
        await self._write(self._joiner.finish())
        await self._pieces.flush(final=True)
        if self._joiner.rows != rows:
            raise IntegrityError(
                f"{month}: the companion holds {self._joiner.rows} rows, its archive {rows} games"
            )
        sha256 = self._digest.hexdigest()
        await check_stored_bytes(self.conn, self.companion_id, sha256=sha256, size=self.size)
        built = BuiltCompanion(
            file_name=companion_file_name(month, sha256),
            sha256=sha256,
            bytes=self.size,
            rows=self._joiner.rows,
            row_groups=self._joiner.row_groups,
            schema_id=SCHEMA_ID,
            created_by=CREATED_BY,
        )
        recorded = await companion_store.record_built(self.conn, self.companion_id, built)
        if not recorded:
            await companion_store.drop_building(self.conn, self.companion_id)
        return built, recorded


async def from_ranges(
    pool: Pool,
    archive_id: int,
    month: Month,
    ranges: list[RangeRow],
    *,
    threads: int = ENCODING_THREADS,
) -> StoredCompanion | None:
    """The companion of a build from its done ranges' parts (None for a month without games);
    the parts are dropped once it is written, or when it fails."""
    if sum(r.games for r in ranges) == 0:
        await _drop_parts(pool, archive_id)
        return None
    started = time.monotonic()
    async with pool.acquire() as conn:
        companion_id = await companion_store.start_building(conn, archive_id, str(month))
        writer = _FileWriter(conn, companion_id, threads=threads)
        try:
            for row in ranges:
                part = await companion_store.read_part(conn, archive_id, row.seq, row.attempt)
                batches = list(read_part(part))
                if sum(b.num_rows for b in batches) != row.games:
                    raise IntegrityError(
                        f"{month}: range {row.seq}'s companion part is not its {row.games} games"
                    )
                del part
                await writer.add(batches)
            built, recorded = await writer.finish(month, sum(r.games for r in ranges))
        except BaseException:
            await asyncio.shield(_give_up(pool, companion_id))
            raise
        finally:
            writer.close()
            await asyncio.shield(_drop_parts(pool, archive_id))
    return _stored(
        companion_id if recorded else None, built, writer, started, "ranges", ranges=len(ranges)
    )


async def from_archive(
    pool: Pool, archive: ArchiveRow, *, threads: int = ENCODING_THREADS
) -> StoredCompanion:
    """The companion of a served archive, from its stored ``.sgf.gz``."""
    assert archive.file_name is not None
    month = Month.parse(archive.month)
    started = time.monotonic()
    async with pool.acquire() as conn:
        companion_id = await companion_store.start_building(conn, archive.id, archive.month)
        writer = _FileWriter(conn, companion_id, threads=threads)
        try:
            async for lines in _archive_lines(pool, archive):
                batch = await asyncio.to_thread(_rows_of, lines)
                await writer.add([batch])
            built, recorded = await writer.finish(month, archive.games)
        except BaseException:
            await asyncio.shield(_give_up(pool, companion_id))
            raise
        finally:
            writer.close()
    return _stored(
        companion_id if recorded else None,
        built,
        writer,
        started,
        "archive",
        archive=archive.file_name,
    )


def _rows_of(lines: list[str]) -> pa.RecordBatch:
    return part_batch(text_columns(lines))


async def _archive_lines(pool: Pool, archive: ArchiveRow) -> AsyncIterator[list[str]]:
    """The stored archive's game lines, a batch at a time (gzip's CRC and size checked by
    zlib at the end of the member)."""
    inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
    pending = b""
    lines: list[str] = []
    async for piece in iter_archive(pool, archive.id, archive.bytes):
        pending += inflater.decompress(piece)
        *whole, pending = pending.split(b"\n")
        lines += (line.decode("utf-8") + "\n" for line in whole)
        while len(lines) >= ARCHIVE_LINES_PER_BATCH:
            yield lines[:ARCHIVE_LINES_PER_BATCH]
            del lines[:ARCHIVE_LINES_PER_BATCH]
    pending += inflater.flush()
    if not inflater.eof or inflater.unused_data or pending:
        raise IntegrityError(
            f"{archive.file_name}: the stored archive does not end as a gzip member"
        )
    if lines:
        yield lines


async def _give_up(pool: Pool, companion_id: int) -> None:
    """Drop a companion that was not finished, on a fresh connection (the one it was written
    on may be what failed), best effort."""
    try:
        async with asyncio.timeout(_CLEANUP_SECONDS), pool.acquire() as conn:
            await companion_store.drop_building(conn, companion_id)
    except Exception as exc:  # the database is what failed: the month's next run sweeps it
        log.warning("companion_not_dropped", companion_id=companion_id, error=str(exc))


async def _drop_parts(pool: Pool, archive_id: int) -> None:
    try:
        async with asyncio.timeout(_CLEANUP_SECONDS), pool.acquire() as conn:
            await companion_store.drop_parts(conn, archive_id)
    except Exception as exc:  # the month's next run sweeps them
        log.warning("companion_parts_not_dropped", archive_id=archive_id, error=str(exc))


def _stored(
    companion_id: int | None,
    built: BuiltCompanion,
    writer: _FileWriter,
    started: float,
    source: str,
    **fields: object,
) -> StoredCompanion:
    stored = StoredCompanion(companion_id, built, writer.encode_seconds, time.monotonic() - started)
    log.info(
        "companion_written",
        source=source,
        file=built.file_name,
        new=companion_id is not None,
        rows=built.rows,
        row_groups=built.row_groups,
        bytes=built.bytes,
        encode_seconds=round(stored.encode_seconds, 3),
        seconds=round(stored.seconds, 3),
        **fields,
    )
    return stored
