"""A companion stored beside its archive: its file written into the archive chunks of a new
``building`` row (``companion_of`` its archive), checked against its SHA-256, and recorded; it
is published with its archive (``companion_store.follow_archives``).

Two sources, one row definition (``companion.line_rows``) and one row group per range of the
archive's build, so one file for the same archive:

- ``from_ranges``, the month's build: every range has encoded its own row group from the lines
  it wrote (``export.companion.parts``, in parallel, on whichever process ran it), so the
  coordinator only joins them, beside the archive's assembly and the same way
  (``export.joined_file``): the file's footer from the groups' footers (``companion.footer``),
  the groups' bytes copied into the companion's chunks inside PostgreSQL, read back, hashed;
- ``from_archive``, an archive published without a companion (``build_companion``): the stored
  ``.sgf.gz`` decompressed line by line and cut into groups at the ranges recorded for it (one
  group when it has none: a month built before ranges), each group encoded in a thread while
  the next one's lines are read, the groups joined as they come. Memory holds one group's rows
  and one encoded group."""

from __future__ import annotations

import asyncio
import hashlib
import time
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from gomoku_archive.companion.file_names import companion_file_name
from gomoku_archive.companion.footer import MAGIC, Joiner
from gomoku_archive.companion.schema import SCHEMA_ID
from gomoku_archive.db import companion_store, range_store
from gomoku_archive.db.archive_store import ArchiveRow
from gomoku_archive.db.companion_store import BuiltCompanion
from gomoku_archive.db.part_copy import Parts
from gomoku_archive.db.pool import Connection, Pool
from gomoku_archive.db.range_store import RangeRow
from gomoku_archive.errors import IntegrityError
from gomoku_archive.export.assembly import ASSEMBLY_CONNECTIONS
from gomoku_archive.export.companion.file_writer import CREATED_BY, GroupRows, encode_in_thread
from gomoku_archive.export.joined_file import write_joined
from gomoku_archive.export.part_layout import FileLayout
from gomoku_archive.logs import get_logger
from gomoku_archive.profile.months import Month
from gomoku_archive.storage.chunks import check_stored_bytes, chunk_writer, iter_archive

log = get_logger(__name__)

ARCHIVE_LINES_PER_BATCH = 4096
"""Lines of a stored archive made into rows at once (the backfill)."""
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
    seconds: float


async def from_ranges(
    pool: Pool,
    archive_id: int,
    month: Month,
    ranges: list[RangeRow],
    *,
    connections: int = ASSEMBLY_CONNECTIONS,
) -> StoredCompanion | None:
    """The companion of a build from its done ranges' parts (None for a month without games);
    the parts are dropped once it is written, or when it fails."""
    games = sum(r.games for r in ranges)
    if games == 0:
        await _drop_parts(pool, archive_id)
        return None
    started = time.monotonic()
    companion_id: int | None = None
    try:
        async with pool.acquire() as conn:
            joiner, layout = await _layout(conn, archive_id, month, ranges)
            companion_id = await companion_store.start_building(conn, archive_id, str(month))
            parts = Parts("companion_parts", archive_id, companion_id)
            what = f"{month}'s companion"
            joined = await write_joined(
                pool, conn, parts, layout, what=what, connections=connections
            )
            built, recorded = await _record(
                conn,
                companion_id,
                month,
                joiner,
                sha256=joined.sha256,
                size=joined.size,
                rows=games,
            )
    except BaseException:
        if companion_id is not None:
            await asyncio.shield(_give_up(pool, companion_id))
        raise
    finally:
        await asyncio.shield(_drop_parts(pool, archive_id))
    return _stored(
        companion_id if recorded else None,
        built,
        started,
        "ranges",
        ranges=len(ranges),
        copy_seconds=round(joined.copy_seconds, 3),
        check_seconds=round(joined.check_seconds, 3),
        sha256_seconds=round(joined.sha256_seconds, 3),
    )


async def _layout(
    conn: Connection, archive_id: int, month: Month, ranges: list[RangeRow]
) -> tuple[Joiner, FileLayout]:
    """Where each range's group goes in the file, and the file's footer (the joiner's)."""
    with_games = [r for r in ranges if r.games]
    footers = await companion_store.part_footers(
        conn, archive_id, [(r.seq, r.attempt) for r in with_games]
    )
    joiner = Joiner()
    placed = []
    for row, found in zip(with_games, footers, strict=True):
        if found is None or found.rows != row.games:
            raise IntegrityError(
                f"{month}: range {row.seq}'s companion part is not its {row.games} games"
            )
        joiner.place(found.footer, found.body_bytes)
        placed.append((row.seq, row.attempt, found.body_bytes))
    return joiner, FileLayout(MAGIC, placed, joiner.finish())


async def from_archive(pool: Pool, archive: ArchiveRow) -> StoredCompanion:
    """The companion of a served archive, from its stored ``.sgf.gz``, in the row groups of the
    ranges recorded for it."""
    assert archive.file_name is not None
    month = Month.parse(archive.month)
    started = time.monotonic()
    async with pool.acquire() as conn:
        groups = await _group_rows(conn, archive)
        companion_id = await companion_store.start_building(conn, archive.id, archive.month)
        try:
            writer = _StreamedFile(conn, companion_id)
            await writer.write_groups(_archive_groups(pool, archive, groups))
            built, recorded = await writer.finish(month, archive.games)
        except BaseException:
            await asyncio.shield(_give_up(pool, companion_id))
            raise
    return _stored(
        companion_id if recorded else None,
        built,
        started,
        "archive",
        archive=archive.file_name,
        encode_seconds=round(writer.encode_seconds, 3),
    )


async def _group_rows(conn: Connection, archive: ArchiveRow) -> list[int]:
    """The rows of each of the archive's row groups: its build's ranges' games (those with
    games), or all its games in one group when no range is recorded for it."""
    ranges = await range_store.ranges_of(conn, archive.id)
    if not ranges:
        return [archive.games]
    if any(r.state != "done" for r in ranges) or sum(r.games for r in ranges) != archive.games:
        raise IntegrityError(
            f"{archive.file_name}: the ranges recorded for it are not its {archive.games} games"
        )
    return [r.games for r in ranges if r.games]


class _StreamedFile:
    """The backfill's file into its chunks as its groups come, hashed on the way and read
    back: each group encoded in a thread while the next one is gathered."""

    def __init__(self, conn: Connection, companion_id: int) -> None:
        self.conn = conn
        self.companion_id = companion_id
        self._joiner = Joiner()
        self._chunks = chunk_writer(conn, companion_id)
        self._digest = hashlib.sha256()
        self.size = 0
        self.encode_seconds = 0.0
        """The encoding thread's CPU time."""

    async def write_groups(self, groups: AsyncIterator[GroupRows]) -> None:
        encoding: asyncio.Future[tuple[bytes, float]] | None = None
        try:
            async for group in groups:
                if encoding is not None:
                    await self._write_group(await encoding)
                encoding = asyncio.ensure_future(encode_in_thread(group))
            if encoding is not None:
                await self._write_group(await encoding)
        finally:
            if encoding is not None and not encoding.done():
                encoding.cancel()
                await asyncio.gather(encoding, return_exceptions=True)

    async def _write_group(self, encoded: tuple[bytes, float]) -> None:
        data, seconds = encoded
        self.encode_seconds += seconds
        await self._write(self._joiner.add(data))

    async def _write(self, data: bytes) -> None:
        self._digest.update(data)
        self.size += len(data)
        await self._chunks.add(data)

    async def finish(self, month: Month, rows: int) -> tuple[BuiltCompanion, bool]:
        await self._write(self._joiner.finish())
        await self._chunks.flush(final=True)
        sha256 = self._digest.hexdigest()
        await check_stored_bytes(self.conn, self.companion_id, sha256=sha256, size=self.size)
        return await _record(
            self.conn,
            self.companion_id,
            month,
            self._joiner,
            sha256=sha256,
            size=self.size,
            rows=rows,
        )


async def _record(
    conn: Connection,
    companion_id: int,
    month: Month,
    joiner: Joiner,
    *,
    sha256: str,
    size: int,
    rows: int,
) -> tuple[BuiltCompanion, bool]:
    """The companion's record, and whether it was recorded on its row (else an earlier row
    holds the same bytes, and this one is dropped)."""
    if joiner.rows != rows:
        raise IntegrityError(f"{month}: the companion holds {joiner.rows} rows, its archive {rows}")
    built = BuiltCompanion(
        file_name=companion_file_name(month, sha256),
        sha256=sha256,
        bytes=size,
        rows=joiner.rows,
        row_groups=joiner.row_groups,
        schema_id=SCHEMA_ID,
        created_by=CREATED_BY,
    )
    recorded = await companion_store.record_built(conn, companion_id, built)
    if not recorded:
        await companion_store.drop_building(conn, companion_id)
    return built, recorded


async def _archive_groups(
    pool: Pool, archive: ArchiveRow, group_rows: list[int]
) -> AsyncIterator[GroupRows]:
    """The stored archive's games as row groups of ``group_rows`` rows each, in order."""
    sizes = iter(group_rows)
    group, wanted = GroupRows(), next(sizes)
    rest: list[str] = []
    async for batch in _archive_lines(pool, archive):
        rest = batch
        while rest and wanted:
            room = wanted - group.rows
            taken, rest = rest[:room], rest[room:]
            await asyncio.to_thread(group.add, taken)
            if group.rows == wanted:
                yield group
                group, wanted = GroupRows(), next(sizes, 0)
        if rest:
            break  # more lines than games
    if rest or group.rows or wanted:
        raise IntegrityError(f"{archive.file_name}: its lines are not its {archive.games} games")


async def _archive_lines(pool: Pool, archive: ArchiveRow) -> AsyncIterator[list[str]]:
    """The stored archive's game lines, a batch at a time (gzip's CRC and size checked by
    zlib at the end of the member)."""
    inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
    pending = b""
    lines: list[str] = []
    async for view in iter_archive(pool, archive.id, archive.bytes):
        pending += inflater.decompress(view)
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
    started: float,
    source: str,
    **fields: object,
) -> StoredCompanion:
    stored = StoredCompanion(companion_id, built, time.monotonic() - started)
    log.info(
        "companion_written",
        source=source,
        file=built.file_name,
        new=companion_id is not None,
        rows=built.rows,
        row_groups=built.row_groups,
        bytes=built.bytes,
        seconds=round(stored.seconds, 3),
        **fields,
    )
    return stored
